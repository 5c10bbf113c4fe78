"""Group norm (torch.nn.GroupNorm, F.group_norm) and instance norm (torch.nn.InstanceNorm1d / 2d /
3d, F.instance_norm): exported as one aten.group_norm or aten.instance_norm graph op (float: the
interpreter and a program's GroupNorm float fallback compute the same bits; instance norm is group
norm with one group per channel), quantized with the input and output observed per tensor, lowered
to cortex_m.quantized_group_norm (int8) or cortex_m.quantized_group_norm_s16 (16x8: int16
activations): the layer-norm kernel's integer arithmetic per (batch, group) of channels
(src/ops/group_norm/).

Instance norm with running statistics (track_running_stats=True, in eval mode) normalizes with
constants: it exports as batch norm does (folded into the conv / linear before it, else a per-channel
mul and add)."""

from __future__ import annotations

from .._export.handlers import Unavailable, handles, keep_whole
from ..quantizer.patterns import Match, Stage, activation, constant, free, pattern, with_tail
from ._matrix import IMG, Sample, rows
from .norm import batch_norm

GROUP_NORM = "aten.group_norm.default"
INSTANCE_NORM = "aten.instance_norm.default"

keep_whole(INSTANCE_NORM)  # not torch's batch norm over an [1, N * C, *] view (_native_batch_norm_legit)


def group_norm_call(cx, a, groups):
    """[N, C, *] in `groups` groups of channels; weight / bias ([C]) optional."""
    return cx.call(GROUP_NORM, [a["input"], a["weight"], a["bias"]],
                   {"num_groups": int(groups), "eps": float(a["eps"])})


@handles("aten.native_group_norm.default")
def native_group_norm(cx, a):
    """Output 0 only: the graph does not compute the mean and rstd outputs (an error if used)."""
    return group_norm_call(cx, a, a["group"]), Unavailable("mean"), Unavailable("rstd")


@handles(GROUP_NORM)
def group_norm(cx, a):
    return group_norm_call(cx, a, a["num_groups"])


@handles(INSTANCE_NORM)
def instance_norm(cx, a):
    """The input's statistics (use_input_stats: track_running_stats=False, or training): one
    aten.instance_norm op (the running statistics, if given, are not updated: their update does not
    change the output); otherwise the running ones: batch norm's per-channel affine."""
    if not a["use_input_stats"]:
        return batch_norm(cx, a)
    return cx.call(INSTANCE_NORM, [a["input"], a["weight"], a["bias"]], {"eps": float(a["eps"])})


@pattern("group_norm", (GROUP_NORM, INSTANCE_NORM), stage=Stage.SINGLE, rank=45)
def check_group_norm(ctx, node):
    """The input and the (float) norm output observed per tensor, or its activation tail's output
    (relu / hardtanh / clamp / hardsigmoid read by nothing else: the lowering folds it into the
    kernel); weight and bias stay float constants, quantized by the lowering (int16 weight, int32
    bias in the kernel's units). The match is named after the op (group_norm / instance_norm)."""
    free(ctx, node)
    activation(node, 0)
    for index, what in ((1, "weight"), (2, "bias")):
        if index < len(node.inputs) and node.inputs[index] is not None:
            constant(node, index, what)
    name = "instance_norm" if node.op == INSTANCE_NORM else "group_norm"
    return with_tail(ctx, Match(name, [node], activations=[(node, 0)]))


@rows
def samples(torch, nn, F, op, Fn):
    return (
        Sample("aten.native_group_norm.default", lambda: nn.GroupNorm(1, 2), (IMG,), row=520),
        Sample("aten.native_group_norm.default", lambda: nn.GroupNorm(2, 4), ((1, 4, 5, 5),),
               "2 groups of 2 channels", row=521),
        Sample("aten.native_group_norm.default", lambda: nn.GroupNorm(3, 3, affine=False), ((1, 3, 7),),
               "1-D, one channel per group, not affine", row=522),
        Sample(INSTANCE_NORM, lambda: nn.InstanceNorm2d(2, affine=True), (IMG,), "InstanceNorm2d, affine",
               row=530),
        Sample(INSTANCE_NORM, lambda: nn.InstanceNorm1d(3), ((2, 3, 7),), "InstanceNorm1d, not affine", row=531),
        Sample(INSTANCE_NORM, lambda: nn.InstanceNorm2d(2, affine=True, track_running_stats=True), (IMG,),
               "InstanceNorm2d, running statistics: track_running_stats=True, eval", row=532),
    )
