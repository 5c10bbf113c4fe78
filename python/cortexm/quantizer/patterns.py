"""Annotation patterns: one small checker per pattern.

A checker takes (ctx, node) -> Match, or raises NoMatch with the reason the node does not fit.
`ctx` is an annotator.GraphView (users of a value, graph outputs, which nodes are taken, the
quantizer). A Match says which nodes it quantizes and how:
- activations: (node, input index) edges that read a quantized activation with its own qparams;
- requantized: edges that read it requantized to the match's output qparams (cat);
- weights / biases: constant inputs turned into int8 / int32 constants;
- constants: other constant operands (a binary op's), quantized per tensor over their own range;
- masks: constant attention masks (0 / MASKED) quantized against the output's qparams;
- outputs: value name -> Observed() | SharedWith(value name) | Fixed(scale, zero point) |
  BelowMask(value name).
Values inside a match that are not in outputs (a producer's output before its activation tail)
get no quantize / dequantize.
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field

import numpy as np

from .. import _core


class NoMatch(Exception):
    """A pattern check failed; str(e) says why."""


class NotApplicable(NoMatch):
    """The node is another pattern's case (e.g. a depthwise conv offered to conv2d); its reason
    is reported only when no pattern gave a more specific one."""


@dataclass(frozen=True)
class Observed:
    """The value gets its own observer."""


@dataclass(frozen=True)
class SharedWith:
    """The value uses the qparams of another value (the op does not change the range)."""

    value: str


@dataclass(frozen=True)
class Fixed:
    scale: float
    zero_point: int
    dtype: str = "int8"


@dataclass(frozen=True)
class BelowMask:
    """The qparams of `value` (the attention scores) with the range extended down by
    mask_gap(...): masked entries saturate there, more than softmax's 32 below any score."""

    value: str


@dataclass
class WeightUse:
    node: object  # Node reading the weight constant
    index: int
    axis: int  # output-channel axis of the constant


@dataclass
class BiasUse:
    node: object
    index: int
    input_edge: tuple  # (node, index) whose activation scale multiplies ...
    weight_edge: tuple  # ... the scales of this weight edge


@dataclass
class Match:
    pattern: str
    nodes: list
    activations: list = field(default_factory=list)
    requantized: list = field(default_factory=list)
    weights: list = field(default_factory=list)
    biases: list = field(default_factory=list)
    outputs: dict = field(default_factory=dict)
    range_includes: list = field(default_factory=list)  # values the output qparams must hold
    constants: list = field(default_factory=list)  # (node, index) float constants quantized per tensor
    masks: list = field(default_factory=list)  # (node, index) attention mask constants (check_attention_mask)


def short(op: str) -> str:
    """'aten.convolution.default' -> 'convolution'."""
    parts = op.split(".")
    return parts[1] if len(parts) > 1 else op


# --- shared checks -------------------------------------------------------------------------


def activation(node, index: int):
    """Input `index` of node, which must be a float32 activation (not a constant, not absent)."""
    inputs = node.inputs
    if index >= len(inputs) or inputs[index] is None:
        raise NoMatch(f"input {index} is absent")
    v = inputs[index]
    if v.kind == "constant":
        raise NoMatch(f"input {index} ('{v.name}') is a float constant, not an activation")
    if v.dtype != "float32":
        raise NoMatch(f"input {index} ('{v.name}') is {v.dtype}, not float32")
    return v


def constant(node, index: int, what: str, rank: int | None = None):
    v = node.inputs[index]
    if v.kind != "constant":
        raise NoMatch(f"{what} ('{v.name}') is not a constant but {v.kind}")
    if v.dtype != "float32":
        raise NoMatch(f"{what} ('{v.name}') is {v.dtype}, not float32")
    if rank is not None and len(v.shape) != rank:
        raise NoMatch(f"{what} ('{v.name}') has rank {len(v.shape)}, expected {rank}")
    return v


def optional_bias(node, index: int, channels: int):
    """The bias input if present: a 1-D float constant of `channels` elements."""
    inputs = node.inputs
    if index >= len(inputs) or inputs[index] is None:
        return None
    b = constant(node, index, "bias", rank=1)
    if b.shape[0] != channels:
        raise NoMatch(f"bias ('{b.name}') has {b.shape[0]} elements for {channels} output channels")
    return b


def free(ctx, node) -> None:
    if ctx.taken(node):
        raise NoMatch(f"node '{node.name}' is already part of another pattern")


TAIL_OPS = ("aten.relu.default", "aten.hardtanh.default", "aten.hardsigmoid.default", "aten.clamp.default")


def tail_name(node) -> str:
    if node.op == "aten.hardtanh.default" and node.attrs["min_val"] == 0 and node.attrs["max_val"] == 6:
        return "relu6"
    return short(node.op)


def activation_tail(ctx, node):
    """The activation (relu, hardtanh / relu6, hardsigmoid, clamp) that is the only user of node's
    output, or None: it then shares node's output quantization (no Q / DQ between them)."""
    out = node.outputs[0]
    users = ctx.users(out)
    if len(users) != 1 or ctx.is_output(out):
        return None
    user = users[0]
    if user.op not in TAIL_OPS or ctx.taken(user) or user.inputs[0] != out:
        return None
    return user


def with_tail(ctx, match: Match) -> Match:
    """Extends a single-output match with its activation tail, if there is one."""
    anchor = match.nodes[0]
    tail = activation_tail(ctx, anchor)
    out = anchor.outputs[0].name
    if tail is None:
        match.outputs = {out: Observed()}
        return match
    match.pattern += "+" + tail_name(tail)
    match.nodes.append(tail)
    match.outputs = {tail.outputs[0].name: Observed()}
    return match


def weighted(ctx, node, pattern: str, x_index: int, w_index: int, axis: int, bias_index: int | None,
             channels: int, weight_edge=None) -> Match:
    """Match for an op reading activation x, a weight and an optional bias (conv / linear / addmm)."""
    activation(node, x_index)
    weight_edge = weight_edge or (node, w_index)
    match = Match(pattern, [node], activations=[(node, x_index)],
                  weights=[WeightUse(weight_edge[0], weight_edge[1], axis)])
    if bias_index is not None and optional_bias(node, bias_index, channels) is not None:
        match.biases.append(BiasUse(node, bias_index, (node, x_index), weight_edge))
    return with_tail(ctx, match)


# --- weighted ops -----------------------------------------------------------------------------


def _convolution(ctx, node, rank: int):
    """(input channels, groups) of a convolution whose weight has `rank`; else NotApplicable."""
    free(ctx, node)
    if node.attrs["transposed"]:
        raise NoMatch("transposed convolution")
    w_rank = len(node.inputs[1].shape)
    if w_rank != rank:
        raise NotApplicable(f"weight has rank {w_rank}, not {rank}")
    return node.inputs[0].shape[1], node.attrs["groups"]


def _conv(ctx, node, pattern: str) -> Match:
    w = constant(node, 1, "weight")
    return weighted(ctx, node, pattern, 0, 1, 0, 2, w.shape[0])


def check_conv1d(ctx, node) -> Match:
    """Any groups: plain, grouped and depthwise 1-D convs share one pattern (the lowering picks)."""
    _convolution(ctx, node, 3)
    return _conv(ctx, node, "conv1d")


def check_conv2d(ctx, node) -> Match:
    """Groups 1 or grouped (each group a conv over C_in / groups channels; the conv kernels take
    groups); groups == C_in is depthwise's case."""
    c_in, groups = _convolution(ctx, node, 4)
    if groups == c_in and groups != 1:
        raise NotApplicable(f"groups={groups} == input channels is depthwise")
    return _conv(ctx, node, "conv2d")


def check_transpose_conv(ctx, node) -> Match:
    """Transposed 2-D or 1-D convolution, groups 1: weight [C_in, C_out, KH, KW] ([C_in, C_out, K])
    per channel along axis 1."""
    free(ctx, node)
    if not node.attrs["transposed"]:
        raise NotApplicable("not transposed")
    rank = len(node.inputs[1].shape)
    if rank not in (3, 4):
        raise NoMatch(f"transposed convolution with a rank {rank} weight (1-D or 2-D only)")
    if node.attrs["groups"] != 1:
        raise NoMatch(f"transposed convolution with groups={node.attrs['groups']}")
    w = constant(node, 1, "weight")
    return weighted(ctx, node, f"transpose_conv{rank - 2}d", 0, 1, 1, 2, w.shape[1])


def check_depthwise(ctx, node) -> Match:
    c_in, groups = _convolution(ctx, node, 4)
    if groups == 1:
        raise NotApplicable("groups=1 is conv2d")
    if groups != c_in:
        raise NotApplicable(f"groups={groups} with {c_in} input channels is grouped, not depthwise")
    return _conv(ctx, node, "depthwise")


def check_linear(ctx, node) -> Match:
    free(ctx, node)
    w = constant(node, 1, "weight", rank=2)
    return weighted(ctx, node, "linear", 0, 1, 0, 2, w.shape[0])


def check_addmm(ctx, node) -> Match:
    """addmm(bias, x, W^T): mat2 a constant [K, N] or permute_copy(constant [N, K], [1, 0])."""
    free(ctx, node)
    if node.attrs["alpha"] != 1 or node.attrs["beta"] != 1:
        raise NoMatch(f"alpha={node.attrs['alpha']}, beta={node.attrs['beta']} (need 1, 1)")
    mat2 = node.inputs[2]
    permute = mat2.producer
    if mat2.kind == "constant":
        w = constant(node, 2, "mat2", rank=2)
        edge, axis, channels, extra = (node, 2), 1, w.shape[1], []
    elif permute is not None and permute.op == "aten.permute_copy.default":
        if list(permute.attrs["dims"]) != [1, 0]:
            raise NoMatch(f"mat2 is permute_copy with dims {permute.attrs['dims']}, not [1, 0]")
        if len(ctx.users(mat2)) != 1 or ctx.is_output(mat2) or ctx.taken(permute):
            raise NoMatch("mat2's permute_copy has other users")
        w = constant(permute, 0, "mat2's permuted weight", rank=2)
        edge, axis, channels, extra = (permute, 0), 0, w.shape[0], [permute]
    else:
        raise NoMatch(f"mat2 ('{mat2.name}') is neither a constant nor permute_copy of one")
    match = weighted(ctx, node, "addmm", 1, 2, axis, 0, channels, weight_edge=edge)
    match.nodes.extend(extra)
    return match


# --- elementwise binary -----------------------------------------------------------------------


def _binary(ctx, node, pattern: str) -> Match:
    """Two activations, or an activation and a float constant (`1 - x`, a buffer): the constant
    becomes an int8 tensor with qparams of its own, as TFLite quantizes ADD / SUB / MUL's constant
    inputs."""
    free(ctx, node)
    edges, constants = [], []
    for i in (0, 1):
        v = node.inputs[i] if i < len(node.inputs) else None
        if v is not None and v.kind == "constant":
            constant(node, i, f"input {i}")
            constants.append((node, i))
        else:
            activation(node, i)
            edges.append((node, i))
    if not edges:
        raise NoMatch("both inputs are constants")
    return with_tail(ctx, Match(pattern, [node], activations=edges, constants=constants))


# export's attention_mask.MASKED: a masked entry of a constant attention mask.
MASKED = float(np.finfo(np.float32).min)


def mask_gap(lo: float, hi: float) -> float:
    """How far below the scores' range [lo, hi] masked entries sit. The int8 softmax counts
    differences to the row maximum below its diff_min as exp 0, and diff_min is never more than 31
    below (5 integer bits); 32 plus two steps of the widened scale (rounding of the range's
    minimum and of each score) stays beyond it."""
    return 32.0 + 2.0 * (hi - lo + 40.0) / 255.0


def check_attention_mask(ctx, node) -> Match:
    """scores + mask, read by softmax only, with the mask a constant of 0 and MASKED (export's
    rewrite of a -inf mask): the scores observed, the sum at the scores' qparams widened down by
    mask_gap, the mask an int8 constant whose MASKED entries saturate the sum to its minimum."""
    free(ctx, node)
    if node.attrs["alpha"] != 1:
        raise NotApplicable(f"alpha={node.attrs['alpha']}")
    mask = [i for i in (0, 1) if node.inputs[i].kind == "constant"]
    if len(mask) != 1:
        raise NotApplicable("not an activation plus a constant")
    data = np.asarray(constant(node, mask[0], "the mask").data, dtype=np.float32)
    if not (data == MASKED).any() or not ((data == MASKED) | (data == 0)).all():
        raise NotApplicable("the constant is not an attention mask of 0 and float32's lowest value")
    # No other pattern can quantize float32's lowest value: what does not fit is an error.
    out = node.outputs[0]
    users = ctx.users(out)
    where = f"node '{node.name}' (aten.add.Tensor, module '{node.source}')"
    if ctx.is_output(out) or not users or any(u.op != "aten._softmax.default" for u in users):
        raise ValueError(f"{where} adds an attention mask and is read by other ops than softmax; "
                         "cortexm quantizes a mask's sum read by softmax only")
    if ctx.quantizer.dtype_of(out.name) != "int8":
        raise ValueError(f"{where} adds an attention mask, which cortexm quantizes in int8 only "
                         f"(this sum is {ctx.quantizer.dtype_of(out.name)}): quantize with precision='int8'")
    scores = activation(node, 1 - mask[0])
    return Match("attention_mask", [node], activations=[(node, 1 - mask[0])], masks=[(node, mask[0])],
                 outputs={out.name: BelowMask(scores.name)})


def check_add(ctx, node) -> Match:
    if node.attrs["alpha"] != 1:
        raise NoMatch(f"alpha={node.attrs['alpha']} (need 1)")
    return _binary(ctx, node, "add")


def check_mul(ctx, node) -> Match:
    return _binary(ctx, node, "mul")


def check_two_activations(ctx, node) -> Match:
    """bmm / mm of two activations, maximum / minimum: both inputs observed, the output observed
    (no activation tail: their kernels take the output's qparams only)."""
    free(ctx, node)
    activation(node, 0)
    activation(node, 1)
    return Match(short(node.op), [node], activations=[(node, 0), (node, 1)],
                 outputs={node.outputs[0].name: Observed()})


# --- single ops -------------------------------------------------------------------------------


def _unary(ctx, node, pattern: str, output) -> Match:
    free(ctx, node)
    x = activation(node, 0)
    spec = SharedWith(x.name) if output == "shared" else output
    return Match(pattern, [node], activations=[(node, 0)],
                 outputs={out.name: spec for out in node.outputs})


def check_passthrough(ctx, node) -> Match:
    """Data movement and clamping: outputs keep the input's qparams."""
    return _unary(ctx, node, "passthrough", "shared")


def check_pad(ctx, node) -> Match:
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


def check_pool(ctx, node) -> Match:
    """Averages stay within the input's range: the output keeps the input's qparams."""
    return _unary(ctx, node, "avg_pool" if "pool" in node.op else "mean", "shared")


def check_sum(ctx, node) -> Match:
    """A sum's range grows with the count: its output is observed."""
    return _unary(ctx, node, "sum", Observed())


def check_index(ctx, node) -> Match:
    """argmax / argmin read their input quantized and give an int64 index, not quantized: a
    dequantize of positive scale keeps the integers' order and ties, so the index is the float op's."""
    free(ctx, node)
    activation(node, 0)
    return Match("index", [node], activations=[(node, 0)])


def check_softmax(ctx, node) -> Match:
    free(ctx, node)
    if node.attrs["half_to_float"]:
        raise NoMatch("half_to_float=True")
    return _unary(ctx, node, "softmax", _fixed_or_observed(ctx, node, "softmax"))


def check_log_softmax(ctx, node) -> Match:
    free(ctx, node)
    if node.attrs["half_to_float"]:
        raise NoMatch("half_to_float=True")
    return _unary(ctx, node, "log_softmax", _fixed_or_observed(ctx, node, "log_softmax"))


def check_layer_norm(ctx, node) -> Match:
    """The input and the (float) layer norm output observed per tensor; weight and bias stay float
    constants, quantized by the lowering (int16 weight, int32 bias in the kernel's units)."""
    free(ctx, node)
    activation(node, 0)
    for index, what in ((1, "weight"), (2, "bias")):
        if index < len(node.inputs) and node.inputs[index] is not None:
            constant(node, index, what)
    return Match("layer_norm", [node], activations=[(node, 0)], outputs={node.outputs[0].name: Observed()})


BOUNDED_ACTIVATIONS = {"aten.sigmoid.default": "sigmoid", "aten.tanh.default": "tanh"}


def check_activation(ctx, node) -> Match:
    """Non-linear activations: sigmoid and tanh with TFLite's fixed output qparams, the others
    with an observed output range."""
    kind = BOUNDED_ACTIVATIONS.get(node.op)
    return _unary(ctx, node, short(node.op), Observed() if kind is None else _fixed_or_observed(ctx, node, kind))


def _fixed_or_observed(ctx, node, kind: str):
    name = node.outputs[0].name
    fixed = ctx.quantizer.fixed_qparams(kind, name)
    return Observed() if fixed is None else Fixed(*fixed, ctx.quantizer.dtype_of(name))


def check_cat(ctx, node) -> Match:
    """Inputs observed separately, requantized to the output's (observed) qparams; copies of one
    value (a repeat, an expand) keep its qparams, as data movement does."""
    free(ctx, node)
    edges = [(node, i) for i in range(len(node.inputs))]
    for _, i in edges:
        activation(node, i)
    if len({v.name for v in node.inputs}) == 1:
        return Match("passthrough", [node], activations=edges,
                     outputs={node.outputs[0].name: SharedWith(node.inputs[0].name)})
    return Match("cat", [node], activations=edges, requantized=edges,
                 outputs={node.outputs[0].name: Observed()})


def _single_reader_producer(ctx, value, op: str, what: str):
    """The producer of value, which must run op and be read only by one node (not an output)."""
    node = value.producer
    if node is None or node.op != op:
        raise NoMatch(f"{what} ('{value.name}') is not computed by {short(op)}")
    if len(ctx.users(value)) != 1 or ctx.is_output(value):
        raise NoMatch(f"{what} ('{value.name}') has other readers")
    if ctx.taken(node):
        raise NoMatch(f"node '{node.name}' is already part of another pattern")
    return node


def check_magnitude(ctx, node) -> Match:
    """sqrt(a * a + b * b) (a complex magnitude, silero's STFT) when the quantizer fuses it: a and
    b observed, the magnitude observed, the squares and their sum not quantized."""
    if not ctx.quantizer.fuse_magnitude:
        raise NotApplicable("the quantizer does not fuse magnitudes (fuse_magnitude=False)")
    free(ctx, node)
    add = _single_reader_producer(ctx, node.inputs[0], "aten.add.Tensor", "the sqrt's input")
    if add.attrs["alpha"] != 1:
        raise NoMatch(f"the sum has alpha={add.attrs['alpha']} (need 1)")
    squares = []
    for i, what in ((0, "the sum's first term"), (1, "the sum's second term")):
        mul = _single_reader_producer(ctx, add.inputs[i], "aten.mul.Tensor", what)
        if mul.inputs[0] != mul.inputs[1]:
            raise NoMatch(f"{what} ('{mul.name}') is not a square")
        activation(mul, 0)
        squares.append(mul)
    if squares[0].inputs[0].shape != squares[1].inputs[0].shape:
        raise NoMatch("the squared values have different shapes")
    return Match("magnitude", [*squares, add, node],
                 activations=[(squares[0], 0), (squares[0], 1), (squares[1], 0), (squares[1], 1)],
                 outputs={node.outputs[0].name: Observed()})


@dataclass(frozen=True)
class Pattern:
    name: str
    ops: tuple
    check: object


CONVOLUTION = ("aten.convolution.default",)
# The ops whose int8 output keeps input 0's qparams (their descriptors' keeps_qparams).
PASSTHROUGH_OPS = tuple(sorted(op for op in _core.registered_ops() if _core.op_info(op).keeps_qparams))
ACTIVATION_OPS = ("aten.sigmoid.default", "aten.tanh.default", "aten.silu.default", "aten.gelu.default",
                  "aten.hardswish.default",
                  "aten.leaky_relu.default", "aten.elu.default", "aten.softplus.default", "aten.mish.default")
# Other single-input elementwise ops with an observed output range (lowered through a table).
ELEMENTWISE_OPS = ("aten.sqrt.default", "aten.abs.default", "aten.pow.Tensor_Scalar", "aten.add.Scalar",
                   "aten.sub.Scalar", "aten.mul.Scalar", "aten.div.Scalar",
                   "aten.exp.default", "aten.log.default", "aten.rsqrt.default", "aten.neg.default",
                   "aten.reciprocal.default")

# Passes in order: a node taken by an earlier pass (a weighted op's activation tail, addmm's
# permuted weight) is not offered to later ones.
PASSES = (
    (Pattern("conv1d", CONVOLUTION, check_conv1d), Pattern("conv2d", CONVOLUTION, check_conv2d),
     Pattern("depthwise", CONVOLUTION, check_depthwise), Pattern("linear", ("aten.linear.default",), check_linear),
     Pattern("addmm", ("aten.addmm.default",), check_addmm),
     Pattern("transpose_conv", CONVOLUTION, check_transpose_conv),
     Pattern("magnitude", ("aten.sqrt.default",), check_magnitude)),
    (Pattern("attention_mask", ("aten.add.Tensor",), check_attention_mask),
     Pattern("add", ("aten.add.Tensor", "aten.sub.Tensor"), check_add),
     Pattern("mul", ("aten.mul.Tensor",), check_mul),
     Pattern("matmul", ("aten.bmm.default", "aten.mm.default"), check_two_activations),
     Pattern("minmax", ("aten.maximum.default", "aten.minimum.default"), check_two_activations)),
    (Pattern("cat", ("aten.cat.default",), check_cat), Pattern("softmax", ("aten._softmax.default",), check_softmax),
     Pattern("log_softmax", ("aten._log_softmax.default",), check_log_softmax),
     Pattern("layer_norm", ("aten.layer_norm.default",), check_layer_norm),
     Pattern("activation", ACTIVATION_OPS, check_activation),
     Pattern("elementwise", ELEMENTWISE_OPS, check_activation),
     Pattern("avg_pool", ("aten.avg_pool2d.default", "aten.adaptive_avg_pool2d.default", "aten.mean.dim"),
             check_pool),
     Pattern("sum", ("aten.sum.dim_IntList",), check_sum),
     Pattern("index", ("aten.argmax.default", "aten.argmin.default"), check_index)),
    (Pattern("passthrough", PASSTHROUGH_OPS, check_passthrough),
     Pattern("passthrough", ("aten.constant_pad_nd.default",), check_pad)),
)
