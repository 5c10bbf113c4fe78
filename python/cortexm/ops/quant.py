"""Quantize / dequantize: the quantized_decomposed ops PT2E's convert_pt2e leaves, exported as the
graph's quantized_decomposed ops with qparams as attributes. Scales and zero points may be Python
numbers, one-element constant tensors (.tensor / .tensor2 overloads) or, per channel, constant
tensors. (The requantize ops are the lowering's, src/passes/convert_requantize.cc.)"""

from __future__ import annotations

from .._export.handlers import handles, scalar_value
from ..patches import register_elementwise


# The lowered requantize is element-wise (patch-based execution).
register_elementwise("cortex_m.requantize.default")


def dtype_attr(cx, dtype) -> str:
    name = cx.graph_dtype(dtype)
    if name is None:
        raise cx.unsupported(f"{cx.node.target} to {dtype}",
                             "quantize to int8 or int16 (or let cortexm.quantize quantize the float model)")
    return name


def common(cx, a) -> dict:
    out_dtype = a.get("out_dtype")
    if out_dtype is not None and cx.graph_dtype(out_dtype) != "float32":
        raise cx.unsupported(f"{cx.node.target} with out_dtype={a['out_dtype']}",
                             "dequantize to float32 (out_dtype=None)")
    return {"quant_min": int(scalar_value(cx, a["quant_min"], "quant_min")),
            "quant_max": int(scalar_value(cx, a["quant_max"], "quant_max")),
            "dtype": dtype_attr(cx, a["dtype"])}


def per_tensor(op: str):
    def handler(cx, a):
        attrs = {"scale": float(scalar_value(cx, a["scale"], "scale")),
                 "zero_point": int(scalar_value(cx, a["zero_point"], "zero_point")), **common(cx, a)}
        return cx.call(f"quantized_decomposed.{op}.default", [a["input"]], attrs)

    return handler


def per_channel(op: str):
    def handler(cx, a):
        scales = cx.const(a["scales"])
        if scales is None:
            raise cx.unsupported(f"{cx.node.target} with scales computed at run time",
                                 "convert the PT2E model (convert_pt2e) so its scales are constants, or "
                                 "export it float and use cortexm.quantize")
        if a["zero_points"] is None:
            zero_points = [0] * scales.numel()
        else:
            zps = cx.const(a["zero_points"])
            if zps is None:
                raise cx.unsupported(f"{cx.node.target} with zero points computed at run time",
                                     "convert the PT2E model (convert_pt2e) so its zero points are constants, "
                                     "or export it float and use cortexm.quantize")
            zero_points = [int(v) for v in zps.reshape(-1).tolist()]
        attrs = {"scales": [float(v) for v in scales.reshape(-1).tolist()], "zero_points": zero_points,
                 "axis": int(a["axis"]), **common(cx, a)}
        return cx.call(f"quantized_decomposed.{op}.default", [a["input"]], attrs)

    return handler


for _op in ("quantize_per_tensor", "dequantize_per_tensor"):
    handles(*(f"quantized_decomposed.{_op}.{o}" for o in ("default", "tensor", "tensor2")))(per_tensor(_op))
for _op in ("quantize_per_channel", "dequantize_per_channel"):
    handles(f"quantized_decomposed.{_op}.default")(per_channel(_op))
