"""Normalization: layer norm (export, quantizer pattern) and batch norm, which export folds into the
convolution or linear before it or makes a mul and an add; ops-matrix rows (group and instance
norm are group_norm.py's) and lowering facts.

Batch norm in eval mode: y = x * scale + shift per channel (dim 1), with
scale = weight / sqrt(running_var + eps) and shift = bias - running_mean * scale.
Folded into the convolution or linear that produces x when nothing else reads that output and its
weight and bias are constants (new constants computed in float64, stored as float32); otherwise a
mul and an add with per-channel constants shaped to broadcast."""

from __future__ import annotations

import numpy as np

from .._export.handlers import Unavailable, handles, ints
from ..quantizer.patterns import Match, Observed, Stage, activation, constant, free, pattern
from ._matrix import IMG, A, Sample, no_kernel, rows

# --- layer norm --------------------------------------------------------------------------------


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


@pattern("layer_norm", ("aten.layer_norm.default",), stage=Stage.SINGLE, rank=40)
def check_layer_norm(ctx, node):
    """The input and the (float) layer norm output observed per tensor; weight and bias stay float
    constants, quantized by the lowering (int16 weight, int32 bias in the kernel's units)."""
    free(ctx, node)
    activation(node, 0)
    for index, what in ((1, "weight"), (2, "bias")):
        if index < len(node.inputs) and node.inputs[index] is not None:
            constant(node, index, what)
    return Match("layer_norm", [node], activations=[(node, 0)], outputs={node.outputs[0].name: Observed()})


no_kernel("16x8", "aten.layer_norm.default")

# --- batch norm --------------------------------------------------------------------------------

FOLDABLE = {"aten.convolution.default", "aten.linear.default"}
# The torch ops whose handlers return the output of one of those graph nodes.
FOLDABLE_SOURCES = {"aten.convolution.default", "aten.conv1d.default", "aten.conv2d.default",
                    "aten.conv1d.padding", "aten.conv2d.padding", "aten.linear.default"}


def scale_shift(cx, a) -> tuple[np.ndarray, np.ndarray]:
    def data(key):
        if a[key] is None:
            return None
        t = cx.const(a[key])
        if t is None:
            raise cx.unsupported(f"{cx.node.target} with a {key} computed at run time",
                                 f"make the {key} a parameter or buffer of the model (nn.BatchNorm's)")
        return t.double().numpy()

    mean, var, weight, bias = (data(k) for k in ("running_mean", "running_var", "weight", "bias"))
    if mean is None or var is None:
        raise cx.unsupported(f"{cx.node.target} without running statistics",
                             "use track_running_stats=True (and model.eval()), or, to normalize each "
                             "sample by its own statistics, nn.InstanceNorm or nn.GroupNorm")
    scale = (1.0 if weight is None else weight) / np.sqrt(var + float(a["eps"]))
    return scale, (0.0 if bias is None else bias) - mean * scale


def foldable_producer(cx, x):
    """The convolution / linear node to fold into, or None."""
    src = cx.node.args[0]
    if src.op != "call_function" or cx.op_name(src) not in FOLDABLE_SOURCES or len(src.users) != 1:
        return None
    producer = x.producer
    if producer.op not in FOLDABLE:
        return None
    if producer.op == "aten.convolution.default" and producer.attrs["transposed"]:
        return None
    if producer.op == "aten.linear.default" and len(x.shape) != 2:
        return None  # the channel dim of batch norm is the out-feature dim only for [N, C]
    ins = producer.inputs
    if ins[1].kind != "constant" or (ins[2] is not None and ins[2].kind != "constant"):
        return None
    return producer


def batch_norm(cx, a):
    x = a["input"]
    shape = cx.shape(x)
    scale, shift = scale_shift(cx, a)
    producer = foldable_producer(cx, x)
    if producer is not None:
        weight, bias = producer.inputs[1], producer.inputs[2]
        w = weight.data.astype(np.float64)
        b = np.zeros(shape[1]) if bias is None else bias.data.astype(np.float64)
        new_w = (w * scale.reshape((-1,) + (1,) * (w.ndim - 1))).astype(np.float32)
        new_b = (b * scale + shift).astype(np.float32)
        producer.replace_input(1, cx.add_constant(f"{weight.name}_bn_folded", new_w))
        producer.replace_input(2, cx.add_constant(f"{bias.name if bias else producer.name + '_bias'}_bn_folded", new_b))
        producer.reinfer()
        return x
    per_channel = (-1,) + (1,) * (len(shape) - 2)
    s = cx.add_constant(f"{cx.node.name}_scale", scale.astype(np.float32).reshape(per_channel))
    t = cx.add_constant(f"{cx.node.name}_shift", shift.astype(np.float32).reshape(per_channel))
    return cx.call("aten.add.Tensor", [cx.call("aten.mul.Tensor", [x, s]), t])


def reject_training(cx, a):
    if a["training"]:
        raise cx.unsupported(f"{cx.node.target} in training mode",
                             "export the model in eval mode (model.eval()), where batch norm uses its running "
                             "statistics")


@handles("aten._native_batch_norm_legit_no_training.default")
def legit_no_training(cx, a):
    return batch_norm(cx, a), Unavailable("save_mean"), Unavailable("save_invstd")


@handles("aten.native_batch_norm.default", "aten._native_batch_norm_legit.default")
def native_batch_norm(cx, a):
    reject_training(cx, a)
    return batch_norm(cx, a), Unavailable("save_mean"), Unavailable("save_invstd")


@handles("aten.batch_norm.default")
def batch_norm_op(cx, a):
    reject_training(cx, a)
    return batch_norm(cx, a)


@rows
def samples(torch, nn, F, op, Fn):
    return (
        Sample("aten.native_layer_norm.default", lambda: nn.LayerNorm(8), (A,), row=320),
        Sample("aten._native_batch_norm_legit_no_training.default", lambda: nn.BatchNorm2d(2), (IMG,),
               "alone", row=510),
    )
