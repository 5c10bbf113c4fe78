"""Annotation patterns: the registry, the Match a checker returns, and the checks patterns share.
The patterns themselves live with their ops, in the family modules of cortexm.ops, registered with
@pattern(name, ops, stage=..., rank=...); passes() (also PASSES) orders them.

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

import enum
from dataclasses import dataclass, field
from typing import Callable

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


# Activation tails: op -> the name a pattern gets for it (registered by the activation family).
TAILS: dict[str, Callable] = {}


def register_tail(op: str, name: Callable | None = None) -> None:
    """op, when it is the only reader of a weighted op's or a binary op's output, joins that op's match
    (sharing its output quantization); name(node) is its part of the pattern name (default: the op's)."""
    if op in TAILS:
        raise ValueError(f"{op} is registered as an activation tail twice")
    TAILS[op] = name or (lambda node: short(node.op))


def tail_name(node) -> str:
    return TAILS[node.op](node)


def activation_tail(ctx, node):
    """The activation tail (TAILS: relu, hardtanh / relu6, hardsigmoid, clamp) that is the only user
    of node's output, or None: it then shares node's output quantization (no Q / DQ between them)."""
    out = node.outputs[0]
    users = ctx.users(out)
    if len(users) != 1 or ctx.is_output(out):
        return None
    user = users[0]
    if user.op not in TAILS or ctx.taken(user) or user.inputs[0] != out:
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


def single(ctx, node, pattern: str, output) -> Match:
    """A match of node alone reading activation 0; output: "shared" (its outputs keep the input's
    qparams) or the spec of every output (Observed(), Fixed(...))."""
    free(ctx, node)
    x = activation(node, 0)
    spec = SharedWith(x.name) if output == "shared" else output
    return Match(pattern, [node], activations=[(node, 0)],
                 outputs={out.name: spec for out in node.outputs})


def two_activations(ctx, node) -> Match:
    """bmm / mm of two activations, maximum / minimum: both inputs observed, the output observed
    (no activation tail: their kernels take the output's qparams only)."""
    free(ctx, node)
    activation(node, 0)
    activation(node, 1)
    return Match(short(node.op), [node], activations=[(node, 0), (node, 1)],
                 outputs={node.outputs[0].name: Observed()})

def fixed_or_observed(ctx, node, kind: str):
    """The quantizer's fixed qparams of kind (softmax, sigmoid, ...) for node's output, else Observed()."""
    name = node.outputs[0].name
    fixed = ctx.quantizer.fixed_qparams(kind, name)
    return Observed() if fixed is None else Fixed(*fixed, ctx.quantizer.dtype_of(name))


# export's attention_mask.MASKED: a masked entry of a constant attention mask.
MASKED = float(np.finfo(np.float32).min)


def mask_gap(lo: float, hi: float) -> float:
    """How far below the scores' range [lo, hi] masked entries sit. The int8 softmax counts
    differences to the row maximum below its diff_min as exp 0, and diff_min is never more than 31
    below (5 integer bits); 32 plus two steps of the widened scale (rounding of the range's
    minimum and of each score) stays beyond it."""
    return 32.0 + 2.0 * (hi - lo + 40.0) / 255.0


# Bounded activations with fixed output qparams: op -> saturation(output scale), the |x| beyond which
# the op is within half an output step of its bound (an int16 input range reaches it: annotator).
SATURATION: dict[str, Callable] = {}


def register_saturation(op: str):
    def register(fn):
        SATURATION[op] = fn
        return fn

    return register


# The ops whose int8 output keeps input 0's qparams (their descriptors' keeps_qparams).
PASSTHROUGH_OPS = tuple(sorted(op for op in _core.registered_ops() if _core.op_info(op).keeps_qparams))


# --- the registry ------------------------------------------------------------------------------


class Stage(enum.IntEnum):
    """The passes the annotator makes, in order: a node taken in one pass (a weighted op's activation
    tail, addmm's permuted weight, a magnitude's squares) is not offered to later ones."""

    WEIGHTED = 1  # ops with weights, which take their activation tail; the magnitude
    BINARY = 2  # ops of two activations (or an activation and a constant)
    SINGLE = 3  # the other ops with a quantization of their own
    PASSTHROUGH = 4  # what keeps its input's qparams (data movement, clamps)


@dataclass(frozen=True)
class Pattern:
    name: str
    ops: tuple
    check: Callable
    stage: Stage
    rank: int  # within the stage, patterns of lower rank are offered a node first
    int16_weights: bool = False  # its weight can be int16 (a 16x16 kernel; quantizer.int16_weights)
    int16_only: bool = False  # no int8 kernel: precision='auto' makes it int16 whenever anything is


_REGISTERED: list[Pattern] = []


def pattern(name: str, ops, *, stage: Stage, rank: int, int16_weights: bool = False, int16_only: bool = False):
    """Registers check(ctx, node) -> Match for the nodes of ops, offered in pass `stage` before the
    patterns of that stage with a higher rank."""

    def register(check):
        clash = [p.check.__name__ for p in _REGISTERED if (p.stage, p.rank) == (stage, rank)]
        if clash:
            raise ValueError(f"patterns {clash[0]} and {check.__name__} both have stage {stage.name}, rank {rank}")
        _REGISTERED.append(Pattern(name, tuple(ops), check, Stage(stage), rank, int16_weights, int16_only))
        return check

    return register


def passes() -> tuple:
    """The registered patterns, one tuple per stage in order, each ordered by rank."""
    return tuple(tuple(sorted((p for p in _REGISTERED if p.stage == stage), key=lambda p: p.rank))
                 for stage in Stage)


def int16_weight_patterns() -> tuple:
    """The names of the patterns whose weight can be int16."""
    return tuple(p.name for group in passes() for p in group if p.int16_weights)


def int16_only_patterns() -> tuple:
    """The names of the patterns with no int8 kernel."""
    return tuple(p.name for group in passes() for p in group if p.int16_only)


def __getattr__(name):
    # PASSES is derived from the registry, filled when cortexm.ops is imported (cortexm's __init__).
    if name == "PASSES":
        return passes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
