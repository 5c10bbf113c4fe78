"""Data movement on the int8 values (TFLite Micro moves the integers: input and output qparams
must agree): RESHAPE, SQUEEZE, EXPAND_DIMS -> aten.view_copy (the file's layout, the output
tensor's shape); PAD / PADV2 -> aten.constant_pad_nd; CONCATENATION -> aten.cat."""

from __future__ import annotations

import numpy as np

from . import schema as S
from .importer import Malformed, Unsupported, tflite_op


@tflite_op("RESHAPE", "SQUEEZE", "EXPAND_DIMS")
def reshape(ctx, op):
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    x_t, out_t = ctx.tensor(x_i), ctx.tensor(out_i)
    if x_t.type != out_t.type or x_t.type not in ("INT8", "INT16"):
        raise Unsupported(f"input {x_t.type} and output {out_t.type}: int8 / int16 reshapes are imported")
    q_in, q_out = ctx.qparams(x_i), ctx.qparams(out_i)
    if (q_in["scales"], q_in["zero_points"]) != (q_out["scales"], q_out["zero_points"]):
        raise Unsupported("input and output qparams differ (TFLite copies the integers)")
    if int(np.prod(x_t.shape)) != int(np.prod(out_t.shape)):
        raise Malformed(f"input shape {list(x_t.shape)} and output shape {list(out_t.shape)} differ in size")
    x = ctx.value(x_i, "file")
    if list(x.shape) == list(out_t.shape):
        ctx.set_value(out_i, x)
        return
    ctx.set_value(out_i, ctx.g.call("aten.view_copy.default", [x], {"size": list(out_t.shape)},
                                    source=ctx.source()))


def _int_constant(ctx, op, k: int, what: str) -> np.ndarray:
    i = ctx.input_index(k)
    t = ctx.tensor(i)
    if t.data is None or t.type not in ("INT32", "INT64"):
        raise Unsupported(f"{what} tensor {i} '{t.name}' is {t.type}{'' if t.data is not None else ', not constant'} "
                          "(an int32 / int64 constant is imported)")
    return t.data.astype(np.int64)


@tflite_op("PAD", "PADV2")
def pad(ctx, op):
    """-> aten.constant_pad_nd of the int8 value (the file's layout) with the output zero point, or
    PADV2's constant value, as TFLite Micro pads."""
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    x_t, out_t = ctx.tensor(x_i), ctx.tensor(out_i)
    if x_t.type != "INT8" or out_t.type != "INT8":
        raise Unsupported(f"input {x_t.type} and output {out_t.type}: int8 pads are imported")
    q_in, q_out = ctx.qparams(x_i), ctx.qparams(out_i)
    if (q_in["scales"], q_in["zero_points"]) != (q_out["scales"], q_out["zero_points"]):
        raise Unsupported("input and output qparams differ (TFLite Micro pads the integers)")
    paddings = _int_constant(ctx, op, 1, "paddings")
    rank = len(x_t.shape)
    if paddings.shape != (rank, 2):
        raise Malformed(f"paddings of shape {list(paddings.shape)} for a rank-{rank} input ([{rank}, 2] expected)")
    if (paddings < 0).any():
        raise Malformed(f"negative paddings {paddings.tolist()}")
    value = q_out["zero_points"][0]
    if op.builtin == "PADV2" and len(op.inputs) > 2 and op.inputs[2] >= 0:
        c = ctx.tensor(op.inputs[2])
        if c.data is None or c.type != "INT8" or c.data.size != 1:
            raise Unsupported(f"constant_values tensor {op.inputs[2]} must be one int8 constant")
        value = int(c.data.reshape(-1)[0])
    expected = [d + int(a) + int(b) for d, (a, b) in zip(x_t.shape, paddings.tolist())]
    if expected != list(out_t.shape):
        raise Malformed(f"output shape {list(out_t.shape)} is not the padded {expected}")
    x = ctx.value(x_i, "file")
    if not paddings.any():
        ctx.set_value(out_i, x)
        return
    torch_pad = []
    for a, b in reversed(paddings.tolist()):
        torch_pad += [int(a), int(b)]
    y = ctx.g.call("aten.constant_pad_nd.default", [x], {"pad": torch_pad, "value": float(value)},
                   source=ctx.source())
    # the pad value must stay within the value's range (a fused activation's, upstream)
    q = dict(y.qparams)
    q["quant_min"], q["quant_max"] = min(q["quant_min"], value), max(q["quant_max"], value)
    y.qparams = q
    ctx.set_value(out_i, y)


NHWC_TO_NCHW_DIM = [0, 2, 3, 1]  # NHWC dim d is NCHW dim NHWC_TO_NCHW_DIM[d]


@tflite_op("CONCATENATION")
def concatenation(ctx, op):
    """-> aten.cat of the int8 values (NCHW when all are 4-D, the axis mapped). TFLite Micro copies
    the integers: every input's qparams must be the output's, and no fused activation."""
    o = ctx.options(S.OPTIONS_CONCATENATION)
    if o.scalar(S.CONCAT_ACTIVATION, "int8", "fused_activation_function") != 0:
        raise Unsupported("a fused activation (TFLite Micro requires NONE)")
    out_i = op.outputs[0]
    out_t = ctx.tensor(out_i)
    ins = [i for i in op.inputs]
    if not ins or any(i < 0 for i in ins):
        raise Malformed("an absent input")
    q_out = ctx.qparams(out_i)
    for i in ins:
        t = ctx.tensor(i)
        if t.type != "INT8" or t.data is not None:
            raise Unsupported(f"input {i} '{t.name}' is {t.type}{' constant' if t.data is not None else ''} "
                              "(int8 activations are imported)")
        q = ctx.qparams(i)
        if (q["scales"], q["zero_points"]) != (q_out["scales"], q_out["zero_points"]):
            raise Unsupported(f"input {i} qparams {q['scales'][0]}, {q['zero_points'][0]} differ from the output's "
                              "(TFLite Micro copies the integers)")
    rank = len(out_t.shape)
    axis = o.scalar(S.CONCAT_AXIS, "int32", "axis")
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank:
        raise Malformed(f"axis {axis} outside rank {rank}")
    layout = "nchw" if rank == 4 else "file"
    dim = NHWC_TO_NCHW_DIM[axis] if layout == "nchw" else axis
    values = [ctx.value(i, layout) for i in ins]
    lo = min(v.qparams["quant_min"] for v in values)
    hi = max(v.qparams["quant_max"] for v in values)
    # One range for the int8 cat's inputs: where an upstream activation narrowed one, a view of it
    # with the widest range (the integers are the same).
    y = ctx.g.call("aten.cat.default", values, {"dim": dim}, source=ctx.source())
    q = dict(y.qparams) if y.qparams else dict(values[0].qparams)
    q["quant_min"], q["quant_max"] = lo, hi
    y.qparams = q
    ctx.set_value(out_i, y, layout)


def _same_qparams(ctx, x_i: int, out_i: int, what: str) -> None:
    types = (ctx.tensor(x_i).type, ctx.tensor(out_i).type)
    if types[0] != types[1] or types[0] not in ("INT8", "INT16"):
        raise Unsupported(f"input {types[0]} and output {types[1]}: int8 / int16 {what} are imported")
    q_in, q_out = ctx.qparams(x_i), ctx.qparams(out_i)
    if (q_in["scales"], q_in["zero_points"]) != (q_out["scales"], q_out["zero_points"]):
        raise Unsupported(f"input and output qparams differ (TFLite Micro's {what} copy the integers)")


@tflite_op("TRANSPOSE")
def transpose(ctx, op):
    """-> aten.permute_copy of the integers (the file's layout), perm a constant."""
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    _same_qparams(ctx, x_i, out_i, "transposes")
    rank = len(ctx.tensor(x_i).shape)
    perm = [int(d) for d in _int_constant(ctx, op, 1, "perm").reshape(-1).tolist()]
    perm = [d + rank if d < 0 else d for d in perm]
    if sorted(perm) != list(range(rank)):
        raise Malformed(f"perm {perm} is not a permutation of the input's {rank} dims")
    want = [ctx.tensor(x_i).shape[d] for d in perm]
    if want != list(ctx.tensor(out_i).shape):
        raise Malformed(f"output shape {list(ctx.tensor(out_i).shape)} is not the transposed {want}")
    x = ctx.value(x_i, "file")
    if perm == list(range(rank)):
        ctx.set_value(out_i, x)
        return
    ctx.set_value(out_i, ctx.g.call("aten.permute_copy.default", [x], {"dims": perm}, source=ctx.source()))


@tflite_op("STRIDED_SLICE")
def strided_slice(ctx, op):
    """-> aten.slice_copy.Tensor per sliced dim (positive strides; begin / end masks, negative
    indices clamped as TFLite's StridedSlice does), then a view_copy for shrink_axis_mask. The
    ellipsis and new-axis masks and the offset form are refused."""
    o = ctx.options(S.OPTIONS_STRIDED_SLICE)
    begin_mask = o.scalar(S.STRIDED_SLICE_BEGIN_MASK, "int32", "begin_mask", 0)
    end_mask = o.scalar(S.STRIDED_SLICE_END_MASK, "int32", "end_mask", 0)
    for fid, name in ((S.STRIDED_SLICE_ELLIPSIS_MASK, "ellipsis_mask"), (S.STRIDED_SLICE_NEW_AXIS_MASK, "new_axis_mask")):
        if o.scalar(fid, "int32", name, 0):
            raise Unsupported(f"{name} is set (not imported)")
    if o.scalar(S.STRIDED_SLICE_OFFSET, "bool", "offset", False):
        raise Unsupported("offset = true (not imported)")
    shrink = o.scalar(S.STRIDED_SLICE_SHRINK_AXIS_MASK, "int32", "shrink_axis_mask", 0)
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    _same_qparams(ctx, x_i, out_i, "strided slices")
    shape = list(ctx.tensor(x_i).shape)
    rank = len(shape)
    begin, end, strides = (_int_constant(ctx, op, k, name).reshape(-1).tolist()
                           for k, name in ((1, "begin"), (2, "end"), (3, "strides")))
    if not len(begin) == len(end) == len(strides) <= rank:
        raise Malformed(f"begin, end and strides of lengths {len(begin)}, {len(end)}, {len(strides)} for rank {rank}")
    x = ctx.value(x_i, "file")
    kept = []
    for d in range(rank):
        n = shape[d]
        if d >= len(begin):
            kept.append(n)
            continue
        stride = int(strides[d])
        if stride < 1:
            raise Unsupported(f"stride {stride} on dim {d} (positive strides are imported)")
        if shrink >> d & 1:
            b = 0 if begin_mask >> d & 1 else (int(begin[d]) + n if int(begin[d]) < 0 else int(begin[d]))
            if not 0 <= b < n:
                raise Malformed(f"shrink_axis_mask index {int(begin[d])} outside dim {d} of size {n}")
            lo, hi = b, b + 1
        else:
            lo = 0 if begin_mask >> d & 1 else min(max(int(begin[d]) + n if int(begin[d]) < 0 else int(begin[d]), 0), n)
            hi = n if end_mask >> d & 1 else min(max(int(end[d]) + n if int(end[d]) < 0 else int(end[d]), 0), n)
        size = max(0, -(-(hi - lo) // stride))
        if size < 1:
            raise Unsupported(f"dim {d} slices to nothing (an empty tensor)")
        if not shrink >> d & 1:
            kept.append(size)
        if (lo, hi, stride) != (0, n, 1):
            x = ctx.g.call("aten.slice_copy.Tensor", [x], {"dim": d, "start": lo, "end": lo + (size - 1) * stride + 1,
                                                         "step": stride}, source=ctx.source())
    if kept != list(ctx.tensor(out_i).shape):
        raise Malformed(f"output shape {list(ctx.tensor(out_i).shape)} is not the sliced {kept}")
    if list(x.shape) != kept:
        x = ctx.g.call("aten.view_copy.default", [x], {"size": kept}, source=ctx.source())
    ctx.set_value(out_i, x)


def _resize_operands(ctx, op, options_type, align_fid, half_fid):
    o = ctx.options(options_type)
    align = bool(o.scalar(align_fid, "bool", "align_corners", False))
    half = bool(o.scalar(half_fid, "bool", "half_pixel_centers", False))
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    _same_qparams(ctx, x_i, out_i, "resizes")
    x_t, out_t = ctx.tensor(x_i), ctx.tensor(out_i)
    if len(x_t.shape) != 4:
        raise Unsupported(f"input rank {len(x_t.shape)} (NHWC expected)")
    size = [int(v) for v in _int_constant(ctx, op, 1, "size").reshape(-1).tolist()]
    if len(size) != 2 or min(size) < 1:
        raise Malformed(f"size {size} (two positive sizes expected)")
    n, _, _, c = x_t.shape
    if list(out_t.shape) != [n, size[0], size[1], c]:
        raise Malformed(f"output shape {list(out_t.shape)} is not [N, {size[0]}, {size[1]}, C]")
    return x_i, out_i, size, align, half


@tflite_op("RESIZE_NEAREST_NEIGHBOR")
def resize_nearest_neighbor(ctx, op):
    """-> aten.upsample_nearest2d of the integers (NCHW): source index floor(dst * float32(in / out)),
    TFLite Micro's without align_corners and half_pixel_centers (those are refused)."""
    x_i, out_i, size, align, half = _resize_operands(ctx, op, S.OPTIONS_RESIZE_NEAREST_NEIGHBOR,
                                                     S.RESIZE_NEAREST_ALIGN_CORNERS,
                                                     S.RESIZE_NEAREST_HALF_PIXEL_CENTERS)
    if align or half:
        raise Unsupported(f"align_corners = {align}, half_pixel_centers = {half} (cortexm's nearest resize is "
                          "TFLite's with both false)")
    y = ctx.g.call("aten.upsample_nearest2d.default", [ctx.value(x_i, "nchw")], {"output_size": size},
                   source=ctx.source())
    ctx.set_value(out_i, y, "nchw")


@tflite_op("RESIZE_BILINEAR")
def resize_bilinear(ctx, op):
    """-> aten.upsample_bilinear2d at the input's qparams, which cortexm lowers to TFLite Micro's
    RESIZE_BILINEAR arithmetic (10-bit coordinates) with half_pixel_centers = not align_corners;
    the legacy form (both false) is refused."""
    x_i, out_i, size, align, half = _resize_operands(ctx, op, S.OPTIONS_RESIZE_BILINEAR,
                                                     S.RESIZE_BILINEAR_ALIGN_CORNERS,
                                                     S.RESIZE_BILINEAR_HALF_PIXEL_CENTERS)
    if half == align:
        raise Unsupported(f"align_corners = {align}, half_pixel_centers = {half} (cortexm's bilinear resize is "
                          "TFLite's with half_pixel_centers = not align_corners)")
    y = ctx.g.call("aten.upsample_bilinear2d.default", [ctx.dequantized(x_i, "nchw")],
                   {"output_size": size, "align_corners": align, "scales": []}, source=ctx.source())
    q = ctx.value(x_i, "nchw").qparams
    out = ctx.g.call("quantized_decomposed.quantize_per_tensor.default", [y],
                     {"scale": q["scales"][0], "zero_point": q["zero_points"][0], "quant_min": q["quant_min"],
                      "quant_max": q["quant_max"], "dtype": ctx.value(x_i, "nchw").dtype}, source=ctx.source())
    ctx.set_value(out_i, out, "nchw")
