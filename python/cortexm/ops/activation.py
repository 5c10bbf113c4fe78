"""Activations and the other single-input elementwise ops: relu, hardtanh / relu6, clamp, the
activation tails; sigmoid, tanh, silu, gelu, hardswish, hardsigmoid, elu / celu / selu, leaky_relu
/ prelu, mish, softplus; and sqrt, abs, exp, log, neg, reciprocal, rsqrt, pow.Tensor_Scalar, add /
sub / mul / div .Scalar, which the lowering makes lookup tables: export, quantizer patterns,
ops-matrix rows and lowering facts."""

from __future__ import annotations

import math

from .._export.handlers import handles, keep_whole, makes_infinity, scalar_value
from ..patches import register_elementwise
from ..quantizer.config import register_fixed_qparams
from ..quantizer.patterns import (Observed, Stage, fixed_or_observed, pattern, register_saturation, register_tail,
                                  short, single)
from ._matrix import A, Sample, lowered_by_pass, rows

# --- export ------------------------------------------------------------------------------------

keep_whole("aten.hardswish.default", "aten.hardsigmoid.default", "aten.silu.default", "aten.softplus.default",
           "aten.mish.default", "aten.celu.default", "aten.prelu.default")
makes_infinity("aten.log.default", "aten.log2.default", "aten.log10.default", "aten.log1p.default",
               "aten.reciprocal.default", "aten.rsqrt.default", "aten.exp.default", "aten.exp2.default",
               "aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor", "aten.pow.Scalar", "aten.tan.default")

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
        raise cx.unsupported(f"{cx.node.target} with alpha=0",
                             "use a positive alpha, or relu (celu with alpha -> 0 is relu)")
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
        raise cx.unsupported(f"{cx.node.target} with a weight computed at run time",
                             "make the slopes a parameter of the model (nn.PReLU), or compute "
                             "relu(x) + slope * clamp(x, max=0)")
    if weight.numel() == 1:
        return cx.call("aten.leaky_relu.default", [x], {"negative_slope": float(weight.reshape(-1)[0])})
    shape = cx.shape(x)
    if len(shape) < 2 or weight.dim() != 1 or weight.numel() != shape[1]:
        raise cx.unsupported(f"{cx.node.target} with weight of shape {tuple(weight.shape)} for input "
                             f"{tuple(shape)} (one slope, or one per channel of dim 1)",
                             "give nn.PReLU one slope or num_parameters = the channels of dim 1, or compute "
                             "relu(x) + slope * clamp(x, max=0) with slope shaped to broadcast")
    slopes = weight.detach().float().numpy().reshape([shape[1]] + [1] * (len(shape) - 2))
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


@handles("aten.clamp.default", "aten.clamp_.default", "aten.clamp.Tensor", "aten.clamp_.Tensor",
         "aten.clamp_min.default", "aten.clamp_max.default")
def clamp(cx, a):
    lo, hi = (scalar_value(cx, a.get(k), k) for k in ("min", "max"))
    return cx.call("aten.clamp.default", [a["self"]],
                   {"min": None if lo is None else float(lo), "max": None if hi is None else float(hi)})


@handles("aten.pow.Tensor_Scalar", "aten.pow_.Scalar")
def pow_(cx, a):
    return cx.call("aten.pow.Tensor_Scalar", [a["self"]], {"exponent": float(a["exponent"])})


# --- quantizer patterns ------------------------------------------------------------------------


def _relu6_or_hardtanh(node) -> str:
    return "relu6" if node.attrs["min_val"] == 0 and node.attrs["max_val"] == 6 else "hardtanh"


# The activations a weighted or binary op's match takes along (they share its output's qparams).
for _op in ("aten.relu.default", "aten.hardsigmoid.default", "aten.clamp.default"):
    register_tail(_op)
register_tail("aten.hardtanh.default", _relu6_or_hardtanh)

ACTIVATION_OPS = ("aten.sigmoid.default", "aten.tanh.default", "aten.silu.default", "aten.gelu.default",
                  "aten.hardswish.default",
                  "aten.leaky_relu.default", "aten.elu.default", "aten.softplus.default", "aten.mish.default")
# Other single-input elementwise ops with an observed output range (lowered through a table).
ELEMENTWISE_OPS = ("aten.sqrt.default", "aten.abs.default", "aten.pow.Tensor_Scalar", "aten.add.Scalar",
                   "aten.sub.Scalar", "aten.mul.Scalar", "aten.div.Scalar",
                   "aten.exp.default", "aten.log.default", "aten.rsqrt.default", "aten.neg.default",
                   "aten.reciprocal.default")
# The activations with TFLite's fixed output qparams (CortexMQuantizer.fixed_qparams' kinds): sigmoid
# [0, 1), tanh [-1, 1).
BOUNDED_ACTIVATIONS = {"aten.sigmoid.default": "sigmoid", "aten.tanh.default": "tanh"}
register_fixed_qparams("sigmoid", int8=(1 / 256, -128), int16=(1 / 32768, 0))
register_fixed_qparams("tanh", int8=(1 / 128, 0), int16=(1 / 32768, 0))


@register_saturation("aten.sigmoid.default")
def _sigmoid_saturation(output_scale: float) -> float:
    return math.log(2 / output_scale - 1)


@register_saturation("aten.tanh.default")
def _tanh_saturation(output_scale: float) -> float:
    return math.atanh(1 - output_scale / 2)


@pattern("activation", ACTIVATION_OPS, stage=Stage.SINGLE, rank=50)
def check_activation(ctx, node):
    """Non-linear activations: sigmoid and tanh with TFLite's fixed output qparams, the others
    with an observed output range."""
    kind = BOUNDED_ACTIVATIONS.get(node.op)
    return single(ctx, node, short(node.op), Observed() if kind is None else fixed_or_observed(ctx, node, kind))


pattern("elementwise", ELEMENTWISE_OPS, stage=Stage.SINGLE, rank=60)(check_activation)


# --- lowering, patch-based execution and the ops matrix -------------------------------------

# Fused into the op before them (ActivationFusion), else lowered alone (ConvertUnfusedClamps).
lowered_by_pass("ConvertUnfusedClamps", "aten.relu.default", "aten.hardtanh.default", "aten.clamp.default",
                "aten.hardsigmoid.default")
register_elementwise("cortex_m.quantized_activation.default")


@rows
def samples(torch, nn, F, op, Fn):
    return (
        Sample("aten.pow.Tensor_Scalar", op(lambda x: x ** 2), (A,), row=200),
        Sample("aten.relu.default", op(torch.relu), (A,), row=210),
        Sample("aten.hardtanh.default", op(F.relu6), (A,), row=220),
        Sample("aten.clamp.default", op(lambda x: torch.clamp(x, -0.5, 0.5)), (A,), row=230),
        Sample("aten.sigmoid.default", op(torch.sigmoid), (A,), row=240),
        Sample("aten.tanh.default", op(torch.tanh), (A,), row=250),
        Sample("aten.hardsigmoid.default", op(F.hardsigmoid), (A,), row=260),
        Sample("aten.hardswish.default", op(F.hardswish), (A,), row=270),
        Sample("aten.silu.default", op(F.silu), (A,), row=280),
        Sample("aten.gelu.default", op(F.gelu), (A,), row=290),
        Sample("aten.sqrt.default", op(torch.sqrt), (A,), positive=True, row=300),
        Sample("aten.abs.default", op(torch.abs), (A,), row=310),
        Sample("aten.leaky_relu.default", op(F.leaky_relu), (A,), row=540),
        Sample("aten.prelu.default", lambda: nn.PReLU(), (A,), "one slope", row=550),
        Sample("aten.prelu.default", lambda: nn.PReLU(8), ((2, 8, 3),), "a slope per channel", row=560),
        Sample("aten.reciprocal.default", op(torch.reciprocal), (A,), positive=True, row=570),
        Sample("aten.softplus.default", op(F.softplus), (A,), row=580),
        Sample("aten.mish.default", op(F.mish), (A,), row=590),
        Sample("aten.elu.default", op(F.elu), (A,), row=610),
        Sample("aten.exp.default", op(torch.exp), (A,), row=620),
        Sample("aten.log.default", op(torch.log), (A,), positive=True, row=630),
        Sample("aten.rsqrt.default", op(torch.rsqrt), (A,), positive=True, row=640),
        Sample("aten.neg.default", op(torch.neg), (A,), row=650),
    )
