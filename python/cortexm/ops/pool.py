"""Pooling: avg_pool2d, max_pool2d, adaptive average and max pools: export, the averages' quantizer
pattern (with the mean over dims, another average), ops-matrix rows and lowering facts."""

from __future__ import annotations

from .._export.handlers import Unavailable, handles, ints
from ..quantizer.patterns import Stage, pattern, single
from ._matrix import IMG, Sample, lowered_by_pass, no_kernel, refused, rows

# --- export ------------------------------------------------------------------------------------


@handles("aten.adaptive_avg_pool2d.default", "aten._adaptive_avg_pool2d.default")
def adaptive_avg_pool2d(cx, a):
    return cx.call("aten.adaptive_avg_pool2d.default", [a["self"]], {"output_size": ints(a["output_size"], 2)})


@handles("aten.avg_pool2d.default")
def avg_pool2d(cx, a):
    return cx.call("aten.avg_pool2d.default", [a["self"]], {
        "kernel_size": ints(a["kernel_size"]), "stride": ints(a["stride"]), "padding": ints(a["padding"]),
        "ceil_mode": bool(a["ceil_mode"]), "count_include_pad": bool(a["count_include_pad"]),
        "divisor_override": a["divisor_override"]})


@handles("aten.max_pool2d.default", "aten.max_pool2d_with_indices.default")
def max_pool2d(cx, a):
    out = cx.call("aten.max_pool2d.default", [a["self"]], {
        "kernel_size": ints(a["kernel_size"]), "stride": ints(a["stride"]), "padding": ints(a["padding"]),
        "dilation": ints(a["dilation"]), "ceil_mode": bool(a["ceil_mode"])})
    if cx.op_name() == "aten.max_pool2d_with_indices.default":
        return out, Unavailable("indices")
    return out


@handles("aten.adaptive_max_pool2d.default")
def adaptive_max_pool2d(cx, a):
    """A max pool whose kernel and stride are the input over the output size, when it divides it: then
    torch's adaptive windows [floor(i*H/OH), ceil((i+1)*H/OH)) are exactly the pool's."""
    size = cx.shape(a["self"])[-2:]
    out = [s if o is None else o for s, o in zip(size, list(a["output_size"]))]
    if any(o <= 0 or s % o for s, o in zip(size, out)):
        raise cx.unsupported(f"{cx.node.target} from {list(size)} to {out} (only output sizes that divide the input)",
                             "pad or crop the input to a multiple of the output size first, or pick an output "
                             "size that divides the input")
    kernel = [s // o for s, o in zip(size, out)]
    pooled = cx.call("aten.max_pool2d.default", [a["self"]], {
        "kernel_size": kernel, "stride": kernel, "padding": [0, 0], "dilation": [1, 1], "ceil_mode": False})
    return pooled, Unavailable("indices")


# --- quantizer patterns (max_pool2d keeps its input's qparams: data_movement's passthrough) --------


@pattern("avg_pool", ("aten.avg_pool2d.default", "aten.adaptive_avg_pool2d.default", "aten.mean.dim"),
         stage=Stage.SINGLE, rank=70)
def check_pool(ctx, node):
    """Averages stay within the input's range: the output keeps the input's qparams."""
    return single(ctx, node, "avg_pool" if "pool" in node.op else "mean", "shared")


# --- lowering and the ops matrix -----------------------------------------------------------------

# As average pools (DecomposeAdaptiveAvgPool2d), when the output size divides the input's.
lowered_by_pass("DecomposeAdaptiveAvgPool2d", "aten.adaptive_avg_pool2d.default", precisions=("int8",))
no_kernel("16x8", "aten.avg_pool2d.default")


@refused("aten.adaptive_avg_pool2d.default", "int8")
def _adaptive_not_dividing(node) -> bool:
    size = node.inputs[0].shape[-2:]
    return any(i % o for i, o in zip(size, node.attrs["output_size"]))


@rows
def samples(torch, nn, F, op, Fn):
    return (
        Sample("aten.avg_pool2d.default", op(lambda x: F.avg_pool2d(x, 2)), (IMG,), row=360),
        Sample("aten.max_pool2d_with_indices.default", op(lambda x: F.max_pool2d(x, 2)), (IMG,), row=370),
        Sample("aten._adaptive_avg_pool2d.default", op(lambda x: F.adaptive_avg_pool2d(x, 2)), (IMG,), row=380),
        Sample("aten._adaptive_avg_pool2d.default", op(lambda x: F.adaptive_avg_pool2d(x, 4)), (IMG,),
               "not dividing", row=390),
        Sample("aten.adaptive_max_pool2d.default", op(lambda x: F.adaptive_max_pool2d(x, 2)), (IMG,), row=710),
    )
