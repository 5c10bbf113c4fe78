"""The op mapping table: torch op name -> handler(cx, args) emitting cortexm graph ops
(docs/graph_ops.md). args are the op's schema arguments by name (see Converter.bind); a handler
returns the op's result: a Value, a tuple, a Const or Python value passed through."""

from __future__ import annotations

import math

import numpy as np
import torch

from .converter import DTYPES, Const, HandlerTable, Unavailable, op_name

HANDLERS = HandlerTable()
handles = HANDLERS.handles


def ints(v, n: int | None = None) -> list[int]:
    """An int or int list as a list (a single int repeated n times when n is given)."""
    if isinstance(v, (list, tuple)):
        return [int(x) for x in v]
    return [int(v)] * (n or 1)


def dim(d: int, rank: int) -> int:
    if not -max(rank, 1) <= d < max(rank, 1):
        raise IndexError(f"dim {d} is out of range for rank {rank}")
    return d % rank if rank else 0


def is_scalar(x) -> bool:
    return isinstance(x, (bool, int, float))


# --- convolution and matmul ------------------------------------------------------------------


@handles("aten.convolution.default")
def convolution(cx, a):
    return cx.call("aten.convolution.default", [a["input"], a["weight"], a["bias"]], {
        "stride": ints(a["stride"]), "padding": ints(a["padding"]), "dilation": ints(a["dilation"]),
        "transposed": bool(a["transposed"]), "output_padding": ints(a["output_padding"]),
        "groups": int(a["groups"])})


@handles("aten.conv1d.default", "aten.conv2d.default", "aten.conv1d.padding", "aten.conv2d.padding")
def conv(cx, a):
    x, weight = a["input"], a["weight"]
    kernel = cx.shape(weight)[2:]
    n = len(kernel)
    stride, dilation = ints(a["stride"], n), ints(a["dilation"], n)
    padding = a["padding"]
    if padding == "valid":
        padding = [0] * n
    elif padding == "same":
        # As torch: total d*(k-1) per dim, half on each side, the odd pixel at the end.
        totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
        padding = [t // 2 for t in totals]
        if any(t % 2 for t in totals):
            pad = []
            for t in reversed(totals):
                pad += [0, t % 2]
            x = cx.call("aten.constant_pad_nd.default", [x], {"pad": pad, "value": 0.0})
    elif isinstance(padding, str):
        raise cx.unsupported(f"{cx.node.target} with padding='{padding}'")
    else:
        padding = ints(padding, n)
    return cx.call("aten.convolution.default", [x, weight, a["bias"]], {
        "stride": stride, "padding": padding, "dilation": dilation, "transposed": False,
        "output_padding": [0] * n, "groups": int(a["groups"])})


@handles("aten.linear.default")
def linear(cx, a):
    return cx.call("aten.linear.default", [a["input"], a["weight"], a["bias"]])


@handles("aten.addmm.default")
def addmm(cx, a):
    return cx.call("aten.addmm.default", [a["self"], a["mat1"], a["mat2"]],
                   {"beta": float(a["beta"]), "alpha": float(a["alpha"])})


@handles("aten.mm.default", "aten.bmm.default")
def matmul(cx, a):
    return cx.call(str(cx.node.target), [a["self"], a["mat2"]])


# --- data movement ---------------------------------------------------------------------------


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
        raise cx.unsupported(f"{cx.node.target} from {shape} to {out}")
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
        raise cx.unsupported(f"{cx.node.target} with {len(repeats)} repeats for a rank-{rank} input")
    if any(r < 1 for r in repeats):
        raise cx.unsupported(f"{cx.node.target} with repeats {repeats} (each must be >= 1)")
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
        return tuple(Const(part, f"{x.name}_split_{i}") for i, part in enumerate(torch.split(data, sizes, d)))
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
    raise cx.unsupported(f"aten.pad.default with mode='{a['mode']}' over {len(a['pad']) // 2} dims")


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
                raise cx.unsupported(f"{cx.node.target} with scale factor {s} from size {n_in} to {n_out}")
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


# --- elementwise -----------------------------------------------------------------------------

UNARY = ("relu", "sigmoid", "tanh", "hardsigmoid", "hardswish", "silu", "sqrt", "abs",
         "exp", "log", "rsqrt", "neg", "reciprocal", "mish")


@handles(*(f"aten.{op}.default" for op in UNARY), *(f"aten.{op}_.default" for op in UNARY))
def unary(cx, a):
    name = cx.node.target._schema.name.split("::")[1].rstrip("_")
    return cx.call(f"aten.{name}.default", [a["self"]])


@handles("aten.gelu.default", "aten.gelu_.default")
def gelu(cx, a):
    return cx.call("aten.gelu.default", [a["self"]], {"approximate": a["approximate"]})


@handles("aten.leaky_relu.default", "aten.leaky_relu_.default")
def leaky_relu(cx, a):
    return cx.call("aten.leaky_relu.default", [a["self"]], {"negative_slope": float(a["negative_slope"])})


def elu_call(cx, x, alpha, scale, input_scale):
    return cx.call("aten.elu.default", [x], {"alpha": float(alpha), "scale": float(scale),
                                             "input_scale": float(input_scale)})


@handles("aten.elu.default", "aten.elu_.default")
def elu(cx, a):
    return elu_call(cx, a["self"], a["alpha"], a["scale"], a["input_scale"])


@handles("aten.celu.default", "aten.celu_.default")
def celu(cx, a):
    """As torch computes it: elu(x, alpha, 1, 1 / alpha)."""
    alpha = float(a["alpha"])
    if alpha == 0:
        raise cx.unsupported(f"{cx.node.target} with alpha=0")
    return elu_call(cx, a["self"], alpha, 1.0, 1.0 / alpha)


# torch's SELU constants (aten/src/ATen/native/Activation.cpp).
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


@handles("aten.selu.default", "aten.selu_.default")
def selu(cx, a):
    return elu_call(cx, a["self"], SELU_ALPHA, SELU_SCALE, 1.0)


@handles("aten.softplus.default")
def softplus(cx, a):
    return cx.call("aten.softplus.default", [a["self"]],
                   {"beta": float(a["beta"]), "threshold": float(a["threshold"])})


@handles("aten.prelu.default", "aten._prelu_kernel.default")
def prelu(cx, a):
    """One slope: leaky_relu. A slope per channel (dim 1): relu(x) + slope * clamp(x, max=0), the
    same float32 values (x + slope * 0 is x; 0 + slope * x is slope * x) from int8 ops."""
    x = a["self"]
    weight = cx.const(a["weight"])
    if weight is None:
        raise cx.unsupported(f"{cx.node.target} with a weight computed at run time")
    if weight.numel() == 1:
        return cx.call("aten.leaky_relu.default", [x], {"negative_slope": float(weight.reshape(-1)[0])})
    shape = cx.shape(x)
    if len(shape) < 2 or weight.dim() != 1 or weight.numel() != shape[1]:
        raise cx.unsupported(f"{cx.node.target} with weight of shape {tuple(weight.shape)} for input "
                             f"{tuple(shape)} (one slope, or one per channel of dim 1)")
    slopes = weight.detach().to(torch.float32).numpy().reshape([shape[1]] + [1] * (len(shape) - 2))
    slopes = cx.add_constant(f"{cx.node.name}_slopes", slopes.copy())
    positive = cx.call("aten.relu.default", [x])
    negative = cx.call("aten.clamp.default", [x], {"min": None, "max": 0.0})
    return cx.call("aten.add.Tensor", [positive, cx.call("aten.mul.Tensor", [negative, slopes])],
                   {"alpha": 1.0})


@handles("aten.hardtanh.default", "aten.hardtanh_.default")
def hardtanh(cx, a):
    return cx.call("aten.hardtanh.default", [a["self"]],
                   {"min_val": float(a["min_val"]), "max_val": float(a["max_val"])})


@handles("aten.relu6.default", "aten.relu6_.default")
def relu6(cx, a):
    return cx.call("aten.hardtanh.default", [a["self"]], {"min_val": 0.0, "max_val": 6.0})


def scalar_value(cx, v, what: str):
    """A Python number, or the value of a one-element constant tensor."""
    if v is None or is_scalar(v):
        return v
    data = cx.const(v)
    if data is None or data.numel() != 1:
        raise cx.unsupported(f"{cx.node.target} with a {what} computed at run time")
    return data.item()


@handles("aten.clamp.default", "aten.clamp_.default", "aten.clamp.Tensor", "aten.clamp_.Tensor",
         "aten.clamp_min.default", "aten.clamp_max.default")
def clamp(cx, a):
    lo, hi = (scalar_value(cx, a.get(k), k) for k in ("min", "max"))
    return cx.call("aten.clamp.default", [a["self"]],
                   {"min": None if lo is None else float(lo), "max": None if hi is None else float(hi)})


def binary(cx, op: str, x, y, alpha=1):
    """x (op) alpha*y for op in add, sub, mul, div; a Python-number operand becomes the .Scalar
    form (or, as x of sub/div, a 0-d constant)."""
    attrs = {"alpha": float(alpha)} if op in ("add", "sub") else {}
    if is_scalar(x) and op in ("add", "mul") and alpha == 1:
        x, y = y, x
    if is_scalar(y):
        return cx.call(f"aten.{op}.Scalar", [x], {"other": float(y), **attrs})
    if is_scalar(x):
        x = cx.add_constant(f"{cx.node.name}_self", np.array(x, dtype=np.float32))
    return cx.call(f"aten.{op}.Tensor", [x, y], attrs)


@handles(*(f"aten.{op}{ip}.{kind}" for op in ("add", "sub", "mul", "div") for ip in ("", "_")
           for kind in ("Tensor", "Scalar")))
def arithmetic(cx, a):
    op = cx.node.target._schema.name.split("::")[1].rstrip("_")
    return binary(cx, op, a["self"], a["other"], a.get("alpha", 1))


@handles("aten.div.Tensor_mode", "aten.div_.Tensor_mode", "aten.div.Scalar_mode", "aten.div_.Scalar_mode")
def div_mode(cx, a):
    if a["rounding_mode"] is not None:
        raise cx.unsupported(f"{cx.node.target} with rounding_mode='{a['rounding_mode']}'")
    return binary(cx, "div", a["self"], a["other"])


@handles("aten.rsub.Tensor", "aten.rsub.Scalar")
def rsub(cx, a):
    return binary(cx, "sub", a["other"], a["self"], a["alpha"])


@handles("aten.minimum.default", "aten.maximum.default")
def min_max(cx, a):
    return cx.call(str(cx.node.target), [a["self"], a["other"]])


@handles("aten.pow.Tensor_Scalar", "aten.pow_.Scalar")
def pow_(cx, a):
    return cx.call("aten.pow.Tensor_Scalar", [a["self"]], {"exponent": float(a["exponent"])})


# --- reductions, pooling, softmax ------------------------------------------------------------


def require_float_dtype(cx, dtype):
    if dtype is not None and dtype != torch.float32:
        raise cx.unsupported(f"{cx.node.target} with dtype={dtype}")


def reduction(cx, op: str, a):
    """op over a's dims (absent or empty: every dim), normalized, with keepdim."""
    rank = len(cx.shape(a["self"]))
    dims = a.get("dim") or list(range(rank))
    return cx.call(op, [a["self"]],
                   {"dim": [dim(d, rank) for d in ints(dims)], "keepdim": bool(a.get("keepdim", False))})


@handles("aten.mean.dim", "aten.mean.default")
def mean(cx, a):
    require_float_dtype(cx, a["dtype"])
    return reduction(cx, "aten.mean.dim", a)


@handles("aten.sum.dim_IntList", "aten.sum.default")
def sum_(cx, a):
    require_float_dtype(cx, a["dtype"])
    return reduction(cx, "aten.sum.dim_IntList", a)


@handles("aten.amax.default", "aten.amin.default")
def amax_amin(cx, a):
    return reduction(cx, str(cx.node.target), a)


@handles("aten.argmax.default", "aten.argmin.default")
def argmax_argmin(cx, a):
    """The index along dim, or (dim None) into the flattened input: dim [] is every dim."""
    rank = len(cx.shape(a["self"]))
    dims = [] if a.get("dim") is None else [dim(a["dim"], rank)]
    return cx.call(str(cx.node.target), [a["self"]], {"dim": dims, "keepdim": bool(a.get("keepdim", False))})


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
    if cx.node.target == torch.ops.aten.max_pool2d_with_indices.default:
        return out, Unavailable("indices")
    return out


@handles("aten.adaptive_max_pool2d.default")
def adaptive_max_pool2d(cx, a):
    """A max pool whose kernel and stride are the input over the output size, when it divides it: then
    torch's adaptive windows [floor(i*H/OH), ceil((i+1)*H/OH)) are exactly the pool's."""
    size = cx.shape(a["self"])[-2:]
    out = [s if o is None else o for s, o in zip(size, list(a["output_size"]))]
    if any(o <= 0 or s % o for s, o in zip(size, out)):
        raise cx.unsupported(f"{cx.node.target} from {list(size)} to {out} (only output sizes that divide the input)")
    kernel = [s // o for s, o in zip(size, out)]
    pooled = cx.call("aten.max_pool2d.default", [a["self"]], {
        "kernel_size": kernel, "stride": kernel, "padding": [0, 0], "dilation": [1, 1], "ceil_mode": False})
    return pooled, Unavailable("indices")


@handles("aten._softmax.default", "aten._log_softmax.default", "aten.softmax.int", "aten.log_softmax.int")
def softmax(cx, a):
    require_float_dtype(cx, a.get("dtype"))
    name = cx.node.target._schema.name.split("::")[1].lstrip("_")
    rank = len(cx.shape(a["self"]))
    return cx.call(f"aten._{name}.default", [a["self"]], {"dim": dim(a["dim"], rank), "half_to_float": False})


def layer_norm_call(cx, a):
    """Layer norm over the trailing dims normalized_shape names; weight / bias optional."""
    normalized = ints(a["normalized_shape"])
    return cx.call("aten.layer_norm.default", [a["input"], a["weight"], a["bias"]],
                   {"normalized_shape": normalized, "eps": float(a["eps"])})


@handles("aten.native_layer_norm.default")
def native_layer_norm(cx, a):
    """Output 0 only: the graph does not compute the mean and rstd outputs (an error if used)."""
    return layer_norm_call(cx, a), Unavailable("mean"), Unavailable("rstd")


@handles("aten.layer_norm.default")
def layer_norm(cx, a):
    return layer_norm_call(cx, a)


# --- constants built in the graph -------------------------------------------------------------


@handles("aten.full.default", "aten.zeros.default", "aten.ones.default")
def full(cx, a):
    """A tensor of one value (nn.LSTM's zero initial state): a program constant."""
    dtype = cx.out_dtype()
    if dtype not in DTYPES:
        raise cx.unsupported(f"{cx.node.target} of {dtype}")
    value = {"aten.zeros.default": 0, "aten.ones.default": 1}.get(op_name(cx.node.target), a.get("fill_value"))
    if not isinstance(value, (int, float, bool)):
        raise cx.unsupported(f"{cx.node.target} with a fill value computed at run time")
    return Const(torch.full(cx.out_shape(), value, dtype=dtype), cx.node.name)


# --- ops whose output is their input ---------------------------------------------------------


@handles("aten.clone.default", "aten.alias.default", "aten.alias_copy.default", "aten.contiguous.default",
         "aten.detach.default", "aten.detach_.default", "aten.detach_copy.default",
         "aten.lift_fresh_copy.default")
def identity(cx, a):
    return a["self"]


@handles("aten.dropout.default", "aten.feature_dropout.default", "aten.alpha_dropout.default")
def dropout(cx, a):
    if a["train"]:
        raise cx.unsupported(f"{cx.node.target} in training mode")
    return a["input"]


@handles("aten._to_copy.default", "aten.to.dtype", "aten.to.dtype_layout", "aten.to.device")
def to_copy(cx, a):
    if DTYPES.get(cx.out_dtype()) != cx.dtype(a["self"]):
        raise cx.unsupported(f"{cx.node.target} to {cx.out_dtype()}")
    return a["self"]


@handles("aten._assert_tensor_metadata.default", "aten._assert_scalar.default", "aten._assert_async.msg",
         "aten.sym_constrain_range_for_size.default", "aten.sym_constrain_range.default")
def no_output(cx, a):
    return None


# --- recurrent -------------------------------------------------------------------------------


@handles("aten.lstm_cell.default")
def lstm_cell(cx, a):
    """As torch decomposes it: gates = linear(h) + linear(x) split into i, f, g, o."""
    h, c = a["hx"]
    gates = cx.call("aten.add.Tensor", [cx.call("aten.linear.default", [h, a["w_hh"], a["b_hh"]]),
                                        cx.call("aten.linear.default", [a["input"], a["w_ih"], a["b_ih"]])])
    n = cx.shape(h)[1]
    i, f, g, o = split_into(cx, gates, [n] * 4, 1)
    i, f, o = (cx.call("aten.sigmoid.default", [v]) for v in (i, f, o))
    g = cx.call("aten.tanh.default", [g])
    c_next = cx.call("aten.add.Tensor", [cx.call("aten.mul.Tensor", [f, c]), cx.call("aten.mul.Tensor", [i, g])])
    h_next = cx.call("aten.mul.Tensor", [o, cx.call("aten.tanh.default", [c_next])])
    return h_next, c_next
