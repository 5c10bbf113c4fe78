"""Data movement: view / reshape, permute / t / transpose, expand / repeat / stack, squeeze /
unsqueeze, cat, slice, select, split / chunk / unbind, constant / reflection padding, nearest and
bilinear upsampling, and the ops whose output is their input (clone, dropout, ...) or a constant:
export, quantizer patterns (passthrough: the output keeps the input's qparams), ops-matrix rows."""

from __future__ import annotations

import math

import numpy as np

from .._export.handlers import Const, dim, handles, instead, ints, keep_whole
from ..quantizer.patterns import (PASSTHROUGH_OPS, Match, NoMatch, Observed, SharedWith, Stage, activation, constant, free,
                                  pattern, single)
from ._matrix import IMG, A, Sample, rows

keep_whole("aten.reflection_pad1d.default", "aten.upsample_nearest2d.default")


def permute_to(cx, x, dims):
    return cx.call("aten.permute_copy.default", [x], {"dims": dims})


@handles("aten.permute.default", "aten.permute_copy.default")
def permute(cx, a):
    rank = len(cx.shape(a["self"]))
    return permute_to(cx, a["self"], [dim(d, rank) for d in a["dims"]])


@handles("aten.t.default", "aten.t_copy.default")
def t(cx, a):
    if len(cx.shape(a["self"])) < 2:
        return a["self"]
    return permute_to(cx, a["self"], [1, 0])


@handles("aten.transpose.int", "aten.transpose_copy.int")
def transpose(cx, a):
    rank = len(cx.shape(a["self"]))
    d0, d1 = dim(a["dim0"], rank), dim(a["dim1"], rank)
    if d0 == d1:
        return a["self"]
    dims = list(range(rank))
    dims[d0], dims[d1] = d1, d0
    return permute_to(cx, a["self"], dims)


@handles("aten.view.default", "aten.view_copy.default", "aten._unsafe_view.default", "aten.reshape.default",
         "aten._reshape_alias.default", "aten._reshape_alias_copy.default", "aten.flatten.using_ints",
         "aten.unflatten.int")
def view(cx, a):
    return cx.call("aten.view_copy.default", [a["self"]], {"size": cx.out_shape()})


@handles("aten.expand.default", "aten.expand_copy.default")
def expand(cx, a):
    """New leading dims by unsqueeze, each broadcast size-1 dim by a cat of copies (shared keys
    of attention heads, a mask over the batch); the identity expand of torch.matmul's
    decomposition is its input."""
    x, out = a["self"], list(cx.out_shape())
    shape = [1] * (len(out) - len(cx.shape(x))) + list(cx.shape(x))
    if any(n_in != n_out and n_in != 1 for n_in, n_out in zip(shape, out)):
        raise cx.unsupported(f"{cx.node.target} from {shape} to {out}",
                             "expand only dims of size 1 (x.expand), or tile with x.repeat")
    return tile(cx, x, [n_out if n_in != n_out else 1 for n_in, n_out in zip(shape, out)])


def tile(cx, x, copies: list):
    """x with new leading dims (size 1) up to len(copies), then copies[d] > 1 of it along each dim d
    by a cat of copies."""
    for _ in range(len(copies) - len(cx.shape(x))):
        x = unsqueeze_at(cx, x, 0)
    for d, n in enumerate(copies):
        if n > 1:
            x = cx.call("aten.cat.default", [x] * n, {"dim": d})
    return x


@handles("aten.repeat.default")
def repeat(cx, a):
    """torch's tile: new leading dims by unsqueeze, then each dim repeated r > 1 times by a cat of r
    copies along it (data movement: quantized values pass through)."""
    x, repeats = a["self"], ints(a["repeats"])
    rank = len(cx.shape(x))
    if len(repeats) < rank:
        raise cx.unsupported(f"{cx.node.target} with {len(repeats)} repeats for a rank-{rank} input",
                             f"give at least {rank} repeats, one per dim")
    if any(r < 1 for r in repeats):
        raise cx.unsupported(f"{cx.node.target} with repeats {repeats} (each must be >= 1)",
                             "drop the empty result from the model (a repeat of 0 makes no values), or "
                             "repeat at least once")
    return tile(cx, x, repeats)


@handles("aten.squeeze.default", "aten.squeeze.dim", "aten.squeeze.dims",
         "aten.squeeze_copy.default", "aten.squeeze_copy.dim", "aten.squeeze_copy.dims")
def squeeze(cx, a):
    shape = cx.shape(a["self"])
    rank = len(shape)
    given = a.get("dim", list(range(rank)))
    given = [given] if isinstance(given, int) else given
    dims = sorted({dim(d, rank) for d in given if rank and shape[dim(d, rank)] == 1})
    if not dims:
        return a["self"]  # squeezing only dims of size != 1 changes nothing
    return cx.call("aten.squeeze_copy.dims", [a["self"]], {"dim": dims})


def unsqueeze_at(cx, x, d: int):
    return cx.call("aten.unsqueeze_copy.default", [x], {"dim": dim(d, len(cx.shape(x)) + 1)})


@handles("aten.unsqueeze.default", "aten.unsqueeze_copy.default")
def unsqueeze(cx, a):
    return unsqueeze_at(cx, a["self"], a["dim"])


@handles("aten.cat.default")
def cat(cx, a):
    tensors = list(a["tensors"])
    return cx.call("aten.cat.default", tensors, {"dim": dim(a["dim"], len(cx.shape(tensors[0])))})


@handles("aten.stack.default")
def stack(cx, a):
    tensors = list(a["tensors"])
    d = dim(a["dim"], len(cx.shape(tensors[0])) + 1)
    parts = [unsqueeze_at(cx, x, d) for x in tensors]
    return parts[0] if len(parts) == 1 else cx.call("aten.cat.default", parts, {"dim": d})


@handles("aten.slice.Tensor", "aten.slice_copy.Tensor")
def slice_(cx, a):
    shape = cx.shape(a["self"])
    d = dim(a["dim"], len(shape))
    size, step = shape[d], int(a["step"])
    start = 0 if a["start"] is None else int(a["start"])
    end = size if a["end"] is None else int(a["end"])
    start, end = (v + size if v < 0 else v for v in (start, end))
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    if start == 0 and end == size and step == 1:
        return a["self"]
    return cx.call("aten.slice_copy.Tensor", [a["self"]], {"dim": d, "start": start, "end": end, "step": step})


def select_at(cx, x, d: int, index: int):
    shape = cx.shape(x)
    d = dim(d, len(shape))
    return cx.call("aten.select_copy.int", [x], {"dim": d, "index": index % shape[d]})


@handles("aten.select.int", "aten.select_copy.int")
def select(cx, a):
    return select_at(cx, a["self"], a["dim"], int(a["index"]))


def split_into(cx, x, sizes: list[int], d: int):
    d = dim(d, len(cx.shape(x)))
    data = cx.const(x)
    if data is not None:  # MultiheadAttention's packed in_proj_bias: constants the linears can take
        return tuple(Const(part, f"{x.name}_split_{i}") for i, part in enumerate(data.split(sizes, d)))
    out = cx.call("aten.split_with_sizes_copy.default", [x], {"split_sizes": sizes, "dim": d})
    return out if isinstance(out, tuple) else (out,)


@handles("aten.split_with_sizes.default", "aten.split_with_sizes_copy.default")
def split_with_sizes(cx, a):
    return split_into(cx, a["self"], ints(a["split_sizes"]), a["dim"])


@handles("aten.split.Tensor", "aten.split_copy.Tensor")
def split(cx, a):
    size = cx.shape(a["self"])[dim(a["dim"], len(cx.shape(a["self"])))]
    step = int(a["split_size"])
    return split_into(cx, a["self"], [min(step, size - i) for i in range(0, size, step)] or [0], a["dim"])


@handles("aten.chunk.default")
def chunk(cx, a):
    size = cx.shape(a["self"])[dim(a["dim"], len(cx.shape(a["self"])))]
    step = math.ceil(size / int(a["chunks"])) if size else 0
    sizes = [min(step, size - i) for i in range(0, size, step)] if step else [0]
    return split_into(cx, a["self"], sizes, a["dim"])


@handles("aten.unbind.int", "aten.unbind_copy.int")
def unbind(cx, a):
    n = cx.shape(a["self"])[dim(a["dim"], len(cx.shape(a["self"])))]
    return tuple(select_at(cx, a["self"], a["dim"], i) for i in range(n))


@handles("aten.constant_pad_nd.default")
def constant_pad_nd(cx, a):
    return cx.call("aten.constant_pad_nd.default", [a["self"]], {"pad": ints(a["pad"]), "value": float(a["value"])})


@handles("aten.reflection_pad1d.default")
def reflection_pad1d(cx, a):
    return cx.call("aten.reflection_pad1d.default", [a["self"]], {"padding": ints(a["padding"])})


@handles("aten.pad.default")
def pad(cx, a):
    if a["mode"] == "constant":
        value = 0.0 if a["value"] is None else float(a["value"])
        return cx.call("aten.constant_pad_nd.default", [a["self"]], {"pad": ints(a["pad"]), "value": value})
    if a["mode"] == "reflect" and len(a["pad"]) == 2:
        return cx.call("aten.reflection_pad1d.default", [a["self"]], {"padding": ints(a["pad"])})
    raise cx.unsupported(f"aten.pad.default with mode='{a['mode']}' over {len(a['pad']) // 2} dims",
                         "use mode='constant' (zero padding), or mode='reflect' over the last dim only")


@handles("aten.upsample_nearest2d.vec", "aten.upsample_nearest2d.default")
def upsample_nearest2d(cx, a):
    x = a["input"] if "input" in a else a["self"]
    in_hw, out_hw = cx.shape(x)[2:], cx.out_shape()[2:]
    scales = a.get("scale_factors") or [a.get("scales_h"), a.get("scales_w")]
    # The graph op indexes with in/out; torch with 1/scale when a scale is given. Same pixels?
    for n_in, n_out, s in zip(in_hw, out_hw, scales):
        if s is not None and s > 0 and n_out not in (n_in, 2 * n_in):
            o = np.arange(n_out, dtype=np.float32)
            by_scale = np.minimum(np.floor(o * np.float32(1.0 / s)), n_in - 1)
            by_size = np.minimum(np.floor(o * (np.float32(n_in) / np.float32(n_out))), n_in - 1)
            if not np.array_equal(by_scale, by_size):
                raise cx.unsupported(f"{cx.node.target} with scale factor {s} from size {n_in} to {n_out}",
                                     "give the output size instead (F.interpolate(x, size=...)), or an "
                                     "integer scale factor")
    return cx.call("aten.upsample_nearest2d.default", [x], {"output_size": out_hw})


@handles("aten.upsample_bilinear2d.vec", "aten.upsample_bilinear2d.default")
def upsample_bilinear2d(cx, a):
    x = a["input"] if "input" in a else a["self"]
    align_corners = bool(a["align_corners"])
    scales = a.get("scale_factors") or [a.get("scales_h"), a.get("scales_w")]
    # torch's half-pixel step is 1 / scale for a given positive scale, else in / out; align_corners
    # steps by (in - 1) / (out - 1) whatever the scales.
    scales = [] if align_corners or all(s is None for s in scales) else [0.0 if s is None else float(s) for s in scales]
    return cx.call("aten.upsample_bilinear2d.default", [x],
                   {"output_size": cx.out_shape()[2:], "align_corners": align_corners, "scales": scales})


# --- constants built in the graph -------------------------------------------------------------


@handles("aten.full.default", "aten.zeros.default", "aten.ones.default")
def full(cx, a):
    """A tensor of one value (nn.LSTM's zero initial state): a program constant."""
    if cx.graph_dtype(cx.out_dtype()) is None:
        raise cx.unsupported(f"{cx.node.target} of {cx.out_dtype()}",
                             "make the constant float32 (dtype=torch.float32)")
    value = {"aten.zeros.default": 0, "aten.ones.default": 1}.get(cx.op_name(), a.get("fill_value"))
    if not isinstance(value, (int, float, bool)):
        raise cx.unsupported(f"{cx.node.target} with a fill value computed at run time",
                             "fill with a Python number, or multiply torch.ones(...) by the value")
    return cx.full(value)


# --- ops whose output is their input ---------------------------------------------------------


@handles("aten.clone.default", "aten.alias.default", "aten.alias_copy.default", "aten.contiguous.default",
         "aten.detach.default", "aten.detach_.default", "aten.detach_copy.default",
         "aten.lift_fresh_copy.default")
def identity(cx, a):
    return a["self"]


@handles("aten.dropout.default", "aten.feature_dropout.default", "aten.alpha_dropout.default")
def dropout(cx, a):
    if a["train"]:
        raise cx.unsupported(f"{cx.node.target} in training mode",
                             "export the model in eval mode (model.eval()), where dropout is the identity")
    return a["input"]


@handles("aten._to_copy.default", "aten.to.dtype", "aten.to.dtype_layout", "aten.to.device")
def to_copy(cx, a):
    if cx.graph_dtype(cx.out_dtype()) != cx.dtype(a["self"]):
        raise cx.unsupported(f"{cx.node.target} to {cx.out_dtype()}",
                             "keep the values float32 (cortexm.quantize makes the integers), and cast "
                             "outside the model")
    return a["self"]


@handles("aten._assert_tensor_metadata.default", "aten._assert_scalar.default", "aten._assert_async.msg",
         "aten.sym_constrain_range_for_size.default", "aten.sym_constrain_range.default")
def no_output(cx, a):
    return None


# --- quantizer patterns ------------------------------------------------------------------------


@pattern("cat", ("aten.cat.default",), stage=Stage.SINGLE, rank=10)
def check_cat(ctx, node):
    """Inputs observed separately, requantized to the output's (observed) qparams; a constant input
    (a class token) is quantized to the output's qparams, whose range holds it; copies of one value
    (a repeat, an expand) keep its qparams, as data movement does."""
    free(ctx, node)
    edges = [(node, i) for i in range(len(node.inputs))]
    constants = [(node, i) for i, v in enumerate(node.inputs) if v is not None and v.kind == "constant"]
    for _, i in constants:
        constant(node, i, f"input {i}")
    activations = [e for e in edges if e not in constants]
    for _, i in activations:
        activation(node, i)
    if not activations:
        raise NoMatch("every input is a constant (folded at lowering)")
    if len({v.name for v in node.inputs}) == 1:
        return Match("passthrough", [node], activations=edges,
                     outputs={node.outputs[0].name: SharedWith(node.inputs[0].name)})
    held = [float(f(np.asarray(node.inputs[i].data))) for _, i in constants for f in (np.min, np.max)
            if node.inputs[i].data.size]
    return Match("cat", [node], activations=activations, requantized=edges,
                 outputs={node.outputs[0].name: Observed()}, range_includes=held)


@pattern("passthrough", PASSTHROUGH_OPS, stage=Stage.PASSTHROUGH, rank=10)
def check_passthrough(ctx, node):
    """Data movement and clamping: outputs keep the input's qparams."""
    return single(ctx, node, "passthrough", "shared")


@pattern("passthrough", ("aten.constant_pad_nd.default",), stage=Stage.PASSTHROUGH, rank=20)
def check_pad(ctx, node):
    """Constant padding keeps the input's qparams, whose range is widened to hold the pad value
    (0 is always in it)."""
    free(ctx, node)
    value = float(node.attrs["value"])
    if not math.isfinite(value):
        raise NoMatch(f"pad value {value} is not finite")
    match = check_passthrough(ctx, node)
    if value != 0:
        match.range_includes = [value]
    return match


instead("aten.flip.default", "reverse by slices instead: torch.cat([x.narrow(d, i, 1) for i in "
        "reversed(range(x.shape[d]))], d) flips dim d")
instead("aten.native_dropout.default", "export the model in eval mode (model.eval()), where dropout is the "
        "identity")
instead("aten.arange.start_step", "compute the range once as a buffer of the model (register_buffer), or index "
        "with slices instead")
instead("aten.index.Tensor", "index with slices (x[:, a:b]) or single indices (x[:, i]) and torch.cat of "
        "them; indices computed from the input: gather outside the model")


@rows
def samples(torch, nn, F, op, Fn):
    return (
        Sample("aten.view.default", op(lambda x: x.reshape(4, 4)), (A,), row=400),
        Sample("aten.permute.default", op(lambda x: x.permute(1, 0)), (A,), row=410),
        Sample("aten.cat.default", op(lambda x, y: torch.cat([x, y], 1)), (A, A), row=420),
        Sample("aten.slice.Tensor", op(lambda x: x[:, 1:5]), (A,), row=430),
        Sample("aten.select.int", op(lambda x: x[:, 3]), (A,), row=440),
        Sample("aten.split_with_sizes.default", op(lambda x: torch.split(x, [3, 5], 1)), (A,), row=450),
        Sample("aten.squeeze.dims", op(lambda x: x.squeeze(0)), ((1, 8),), row=460),
        Sample("aten.unsqueeze.default", op(lambda x: x.unsqueeze(0)), (A,), row=470),
        Sample("aten.constant_pad_nd.default", op(lambda x: F.pad(x, (1, 1))), (A,), row=480),
        Sample("aten.reflection_pad1d.default", op(lambda x: F.pad(x, (2, 2), mode="reflect")), ((1, 2, 8),), row=490),
        Sample("aten.upsample_nearest2d.vec", op(lambda x: F.interpolate(x, scale_factor=2)), (IMG,), row=500),
        Sample("aten.upsample_bilinear2d.vec",
               op(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)), (IMG,), row=720),
        Sample("aten.repeat.default", op(lambda x: x.repeat(1, 2)), (A,), row=730),
        Sample("aten.index.Tensor", op(lambda x: x[:, torch.tensor([0, 2])]), (A,), row=740),
        Sample("aten.flip.default", op(lambda x: torch.flip(x, [-1])), (A,), row=760),
    )
