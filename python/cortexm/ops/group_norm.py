"""Group norm (torch.nn.GroupNorm, F.group_norm): exported as one aten.group_norm graph op (float:
the interpreter and a program's GroupNorm float fallback compute the same bits), quantized with its
input and output observed per tensor, lowered to cortex_m.quantized_group_norm (int8: the
layer-norm kernel's integer arithmetic per (batch, group) of channels; src/ops/group_norm/).
InstanceNorm is not this op: torch exports it as a batch norm without statistics."""

from __future__ import annotations

from .._export.handlers import Unavailable, handles
from ..quantizer.patterns import Match, Stage, activation, constant, free, pattern, with_tail
from ._matrix import IMG, Sample, no_kernel, rows


def group_norm_call(cx, a, groups):
    """[N, C, *] in `groups` groups of channels; weight / bias ([C]) optional."""
    return cx.call("aten.group_norm.default", [a["input"], a["weight"], a["bias"]],
                   {"num_groups": int(groups), "eps": float(a["eps"])})


@handles("aten.native_group_norm.default")
def native_group_norm(cx, a):
    """Output 0 only: the graph does not compute the mean and rstd outputs (an error if used)."""
    return group_norm_call(cx, a, a["group"]), Unavailable("mean"), Unavailable("rstd")


@handles("aten.group_norm.default")
def group_norm(cx, a):
    return group_norm_call(cx, a, a["num_groups"])


@pattern("group_norm", ("aten.group_norm.default",), stage=Stage.SINGLE, rank=45)
def check_group_norm(ctx, node):
    """The input and the (float) group norm output observed per tensor, or its activation tail's
    output (relu / hardtanh / clamp / hardsigmoid read by nothing else: the lowering folds it into
    the kernel); weight and bias stay float constants, quantized by the lowering (int16 weight, int32
    bias in the kernel's units)."""
    free(ctx, node)
    activation(node, 0)
    for index, what in ((1, "weight"), (2, "bias")):
        if index < len(node.inputs) and node.inputs[index] is not None:
            constant(node, index, what)
    return with_tail(ctx, Match("group_norm", [node], activations=[(node, 0)]))


no_kernel("16x8", "aten.group_norm.default")


@rows
def samples(torch, nn, F, op, Fn):
    return (
        Sample("aten.native_group_norm.default", lambda: nn.GroupNorm(1, 2), (IMG,), row=520),
        Sample("aten.native_group_norm.default", lambda: nn.GroupNorm(2, 4), ((1, 4, 5, 5),),
               "2 groups of 2 channels", row=521),
        Sample("aten.native_group_norm.default", lambda: nn.GroupNorm(3, 3, affine=False), ((1, 3, 7),),
               "1-D, one channel per group, not affine", row=522),
    )
