"""AVERAGE_POOL_2D and MAX_POOL_2D -> aten.avg_pool2d / max_pool2d on NCHW values. TFLite Micro
pools the integers without rescaling (input and output qparams must agree) and averages the valid
taps only (count_include_pad False), rounding halves away from zero as cortexm's kernel does. SAME
padding maps onto torch's padding (and ceil_mode for an extra bottom / right row); a max pool
whose padding torch cannot express reads an int8 pad of the input's minimum instead."""

from __future__ import annotations

from . import schema as S
from .common import activation_of, check_shape, padding_of, window
from .importer import Unsupported, activation_range, tflite_op

PAD = "aten.constant_pad_nd.default"


def _torch_windows(size, kernel, stride, pad, ceil_mode):
    span = size + 2 * pad - kernel
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _torch_padding(size, kernel, stride, before, after, out):
    """(pad, ceil_mode) giving torch's pool `out` windows at TFLite's places, or None."""
    if before == after and _torch_windows(size, kernel, stride, before, False) == out:
        return before, False
    if after == before + 1 and 2 * before <= kernel and _torch_windows(size, kernel, stride, before, True) == out:
        return before, True
    return None


def _pool(ctx, op, is_max):
    o = ctx.options(S.OPTIONS_POOL2D)
    stride = (o.scalar(S.POOL_STRIDE_H, "int32", "stride_h"), o.scalar(S.POOL_STRIDE_W, "int32", "stride_w"))
    kernel = (o.scalar(S.POOL_FILTER_H, "int32", "filter_height"), o.scalar(S.POOL_FILTER_W, "int32", "filter_width"))
    padding = padding_of(o, S.POOL_PADDING)
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    x_t, out_t = ctx.tensor(x_i), ctx.tensor(out_i)
    allowed = ("INT8", "INT16") if is_max else ("INT8",)
    if x_t.type != out_t.type or x_t.type not in allowed:
        raise Unsupported(f"input {x_t.type} and output {out_t.type}: int8 pools and int16 max pools are imported "
                          "(cortexm has no 16x8 average pool kernel)")
    if x_t.type == "INT16" and ctx.qparams(x_i)["zero_points"][0] != 0:
        raise Unsupported("an int16 input with a nonzero zero point")
    if len(x_t.shape) != 4:
        raise Unsupported(f"input rank {len(x_t.shape)} (4 expected)")
    q_in, q_out = ctx.qparams(x_i), ctx.qparams(out_i)
    if (q_in["scales"], q_in["zero_points"]) != (q_out["scales"], q_out["zero_points"]):
        raise Unsupported(f"input qparams {q_in['scales'][0]}, {q_in['zero_points'][0]} differ from the output's "
                          f"{q_out['scales'][0]}, {q_out['zero_points'][0]} (TFLite pools the integers unscaled)")
    x = ctx.value(x_i, "nchw")
    lo, hi = x.qparams["quant_min"], x.qparams["quant_max"]
    qmin, qmax = (-32768, 32767) if x_t.type == "INT16" else (-128, 127)
    act_lo, act_hi = activation_range(activation_of(o, S.POOL_ACTIVATION), q_out["scales"][0],
                                      q_out["zero_points"][0], qmin, qmax)
    if act_lo > lo or act_hi < hi:
        raise Unsupported(f"fused activation range [{act_lo}, {act_hi}] narrower than the input's [{lo}, {hi}]")
    _, _, h, w = x.shape
    oh, top, bottom = window(padding, h, kernel[0], stride[0])
    ow, left, right = window(padding, w, kernel[1], stride[1])
    ph, pw = _torch_padding(h, kernel[0], stride[0], top, bottom, oh), _torch_padding(w, kernel[1], stride[1], left, right, ow)
    if ph is not None and pw is not None and ph[1] != pw[1]:
        # one ceil_mode for both axes: the axis without an extra row must give the same windows with it
        if _torch_windows(h, kernel[0], stride[0], ph[0], True) == oh and \
                _torch_windows(w, kernel[1], stride[1], pw[0], True) == ow:
            ph, pw = (ph[0], True), (pw[0], True)
        else:
            ph = pw = None
    if ph is None or pw is None:
        if not is_max:
            raise Unsupported(f"SAME padding {top}/{bottom}, {left}/{right} with stride {list(stride)} has no "
                              "torch average pool form (torch pads symmetrically)")
        x = ctx.g.call(PAD, [x], {"pad": [left, right, top, bottom], "value": float(lo)}, source=ctx.source())
        ph, pw = (0, False), (0, False)
    xdq = ctx.g.call("quantized_decomposed.dequantize_per_tensor.default", [x],
                     {"scale": q_in["scales"][0], "zero_point": q_in["zero_points"][0], "quant_min": lo,
                      "quant_max": hi, "dtype": x.dtype}, source=ctx.source())
    attrs = {"kernel_size": list(kernel), "stride": list(stride), "padding": [ph[0], pw[0]], "ceil_mode": ph[1]}
    if is_max:
        attrs["dilation"] = [1, 1]
        y = ctx.g.call("aten.max_pool2d.default", [xdq], attrs, source=ctx.source())
    else:
        attrs.update(count_include_pad=False, divisor_override=None)
        y = ctx.g.call("aten.avg_pool2d.default", [xdq], attrs, source=ctx.source())
    check_shape(ctx, out_i, y.shape, out_t.shape, "nchw")
    # The input's range: the pooled integers stay in it (the pool's own activation was checked wider).
    out = ctx.g.call("quantized_decomposed.quantize_per_tensor.default", [y],
                     {"scale": q_out["scales"][0], "zero_point": q_out["zero_points"][0], "quant_min": lo,
                      "quant_max": hi, "dtype": x.dtype}, source=ctx.source())
    ctx.set_value(out_i, out, "nchw")


@tflite_op("AVERAGE_POOL_2D")
def average_pool_2d(ctx, op):
    _pool(ctx, op, is_max=False)


@tflite_op("MAX_POOL_2D")
def max_pool_2d(ctx, op):
    _pool(ctx, op, is_max=True)
