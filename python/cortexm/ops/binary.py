"""Elementwise ops of two tensors: add / sub / mul / div (and their forms with a Python number, which
export makes the .Scalar ops of the activation family), minimum / maximum, the attention mask's add
and the complex magnitude sqrt(a * a + b * b): export, quantizer patterns, ops-matrix rows and
lowering facts."""

from __future__ import annotations

import numpy as np

from .._export.handlers import handles, instead, is_scalar, makes_infinity
from ..patches import register_elementwise
from ..quantizer.patterns import (MASKED, BelowMask, Match, NoMatch, NotApplicable, Observed, Stage, activation,
                                  constant, free, pattern, short, two_activations, with_tail)
from ._matrix import A, Sample, no_kernel, rows

# --- export ------------------------------------------------------------------------------------


makes_infinity("aten.div.Tensor", "aten.div.Tensor_mode")


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
        raise cx.unsupported(f"{cx.node.target} with rounding_mode='{a['rounding_mode']}'",
                             "divide without rounding_mode (true division), or round outside the model")
    return binary(cx, "div", a["self"], a["other"])


@handles("aten.rsub.Tensor", "aten.rsub.Scalar")
def rsub(cx, a):
    return binary(cx, "sub", a["other"], a["self"], a["alpha"])


@handles("aten.minimum.default", "aten.maximum.default")
def min_max(cx, a):
    return cx.call(str(cx.node.target), [a["self"], a["other"]])


# --- quantizer patterns ------------------------------------------------------------------------


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


@pattern("attention_mask", ("aten.add.Tensor",), stage=Stage.BINARY, rank=10)
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
                         "cortexm quantizes a mask's sum read by softmax only: add the mask in the softmax's "
                         "argument (softmax(scores + mask)) and read the sum nowhere else")
    if ctx.quantizer.dtype_of(out.name) != "int8":
        raise ValueError(f"{where} adds an attention mask, which cortexm quantizes in int8 only "
                         f"(this sum is {ctx.quantizer.dtype_of(out.name)}): quantize with precision='int8'")
    scores = activation(node, 1 - mask[0])
    return Match("attention_mask", [node], activations=[(node, 1 - mask[0])], masks=[(node, mask[0])],
                 outputs={out.name: BelowMask(scores.name)})


@pattern("add", ("aten.add.Tensor", "aten.sub.Tensor"), stage=Stage.BINARY, rank=20)
def check_add(ctx, node) -> Match:
    if node.attrs["alpha"] != 1:
        raise NoMatch(f"alpha={node.attrs['alpha']} (need 1)")
    return _binary(ctx, node, "add")


@pattern("mul", ("aten.mul.Tensor",), stage=Stage.BINARY, rank=30)
def check_mul(ctx, node) -> Match:
    return _binary(ctx, node, "mul")


pattern("minmax", ("aten.maximum.default", "aten.minimum.default"), stage=Stage.BINARY, rank=50)(two_activations)


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


@pattern("magnitude", ("aten.sqrt.default",), stage=Stage.WEIGHTED, rank=70, int16_only=True)
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


# --- lowering, patch-based execution and the ops matrix -------------------------------------

no_kernel("16x8", "aten.sub.Tensor", "aten.maximum.default", "aten.minimum.default")
register_elementwise("cortex_m.quantized_add.default", "cortex_m.quantized_sub.default",
                     "cortex_m.quantized_mul.default", "cortex_m.quantized_maximum.default",
                     "cortex_m.quantized_minimum.default")


instead("aten.eq.Scalar", "return the values and compare outside the model, or, for a fixed mask, compute it "
        "once and keep it as a buffer of the model")


@rows
def samples(torch, nn, F, op, Fn):
    return (
        Sample("aten.add.Tensor", op(torch.add), (A, A), row=90),
        Sample("aten.add.Tensor", op(lambda x: x + 1.5), (A,), "scalar operand", row=100),
        Sample("aten.sub.Tensor", op(torch.sub), (A, A), row=110),
        Sample("aten.sub.Tensor", op(lambda x: x - 1.5), (A,), "scalar operand", row=120),
        Sample("aten.sub.Tensor", op(lambda x: 1 - x), (A,), "1 - x", row=130),
        Sample("aten.mul.Tensor", op(torch.mul), (A, A), row=140),
        Sample("aten.mul.Tensor", op(lambda x: x * 1.5), (A,), "scalar operand", row=150),
        Sample("aten.div.Tensor", op(torch.div), (A, A), positive=True, row=160),
        Sample("aten.div.Tensor", op(lambda x: x / 1.5), (A,), "scalar operand", row=170),
        Sample("aten.maximum.default", op(torch.maximum), (A, A), row=180),
        Sample("aten.minimum.default", op(torch.minimum), (A, A), row=190),
        Sample("aten.eq.Scalar", op(lambda x: (x == 0).float()), (A,), row=770),
    )
