"""Convolutions (aten.convolution: 1-D and 2-D, grouped, depthwise, transposed): export, quantizer
patterns, ops-matrix rows and lowering facts."""

from __future__ import annotations

import numpy as np

from .._export.handlers import handles, ints
from ..patches import register_conv, register_macs
from ..quantizer.gptq import register_layout
from ..quantizer.patterns import NoMatch, NotApplicable, Stage, constant, free, pattern, weighted
from ._matrix import IMG, Sample, refused, rows

CONVOLUTION = ("aten.convolution.default",)

# --- export ------------------------------------------------------------------------------------


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
        raise cx.unsupported(f"{cx.node.target} with padding='{padding}'",
                             "use padding='valid', padding='same' or numbers")
    else:
        padding = ints(padding, n)
    return cx.call("aten.convolution.default", [x, weight, a["bias"]], {
        "stride": stride, "padding": padding, "dilation": dilation, "transposed": False,
        "output_padding": [0] * n, "groups": int(a["groups"])})


# --- quantizer patterns (all on aten.convolution: each refuses the others' cases) ---------------


def _convolution(ctx, node, rank: int):
    """(input channels, groups) of a convolution whose weight has `rank`; else NotApplicable."""
    free(ctx, node)
    if node.attrs["transposed"]:
        raise NoMatch("transposed convolution")
    w_rank = len(node.inputs[1].shape)
    if w_rank != rank:
        raise NotApplicable(f"weight has rank {w_rank}, not {rank}")
    return node.inputs[0].shape[1], node.attrs["groups"]


def _conv(ctx, node, pattern: str):
    w = constant(node, 1, "weight")
    return weighted(ctx, node, pattern, 0, 1, 0, 2, w.shape[0])


@pattern("conv1d", CONVOLUTION, stage=Stage.WEIGHTED, rank=10, int16_weights=True)
def check_conv1d(ctx, node):
    """Any groups: plain, grouped and depthwise 1-D convs share one pattern (the lowering picks)."""
    _convolution(ctx, node, 3)
    return _conv(ctx, node, "conv1d")


@pattern("conv2d", CONVOLUTION, stage=Stage.WEIGHTED, rank=20, int16_weights=True)
def check_conv2d(ctx, node):
    """Groups 1 or grouped (each group a conv over C_in / groups channels; the conv kernels take
    groups); groups == C_in is depthwise's case."""
    c_in, groups = _convolution(ctx, node, 4)
    if groups == c_in and groups != 1:
        raise NotApplicable(f"groups={groups} == input channels is depthwise")
    return _conv(ctx, node, "conv2d")


@pattern("depthwise", CONVOLUTION, stage=Stage.WEIGHTED, rank=30, int16_weights=True)
def check_depthwise(ctx, node):
    c_in, groups = _convolution(ctx, node, 4)
    if groups == 1:
        raise NotApplicable("groups=1 is conv2d")
    if groups != c_in:
        raise NotApplicable(f"groups={groups} with {c_in} input channels is grouped, not depthwise")
    return _conv(ctx, node, "depthwise")


@pattern("transpose_conv", CONVOLUTION, stage=Stage.WEIGHTED, rank=60)
def check_transpose_conv(ctx, node):
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


def _windows(node, x: np.ndarray, groups: int) -> np.ndarray:
    """GPTQ's input vectors of a convolution: the window each output position reads, per group:
    [groups, positions, columns]."""
    a = node.attrs
    spatial = x.ndim - 2
    kernel = node.inputs[1].shape[2:]
    stride, padding, dilation = (list(a[k]) * (spatial if len(a[k]) == 1 else 1) for k in ("stride", "padding", "dilation"))
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    windows = np.lib.stride_tricks.sliding_window_view(x, spans, axis=tuple(range(2, x.ndim)))
    index = (slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride) \
        + tuple(slice(None, None, d) for d in dilation)
    windows = windows[index]  # [N, C, *out, *kernel]
    n, c = windows.shape[:2]
    out = windows.shape[2:2 + spatial]
    windows = np.moveaxis(windows, 1, 1 + spatial)  # [N, *out, C, *kernel]
    per_group = windows.reshape(n * int(np.prod(out)), groups, -1)
    return np.moveaxis(per_group, 1, 0)


# GPTQ rounds the weights of convolutions, not transposed ones.
register_layout("aten.convolution.default", columns=_windows, groups=lambda node: node.attrs["groups"],
                takes=lambda node: not node.attrs["transposed"])


# --- the lowered kernels (patch-based execution) ----------------------------------------------------

register_conv("cortex_m.quantized_conv2d.default", "cortex_m.quantized_depthwise_conv2d.default")
# MACs per output element: conv weight OHWI [C_out, KH, KW, C_in / groups], depthwise IHWO.
for _op in ("cortex_m.quantized_conv2d.default", "cortex_m.quantized_conv2d_s16.default",
            "cortex_m.quantized_conv2d_s16w16.default"):
    register_macs(_op, lambda w: w[1] * w[2] * w[3])
register_macs("cortex_m.quantized_depthwise_conv2d.default", lambda w: w[1] * w[2])


# --- lowering and the ops matrix -----------------------------------------------------------------


@refused("aten.convolution.default", "16x8")
def _transposed(node) -> bool:
    return node.attrs["transposed"]  # no 16x8 transposed conv


@rows
def samples(torch, nn, F, op, Fn):
    return (
        Sample("aten.convolution.default", lambda: nn.Conv2d(2, 4, 3), (IMG,), row=10),
        Sample("aten.convolution.default", lambda: nn.Conv2d(4, 4, 3, groups=2), ((1, 4, 6, 6),), "groups 2",
               row=20),
        Sample("aten.convolution.default", lambda: nn.ConvTranspose2d(2, 4, 2, stride=2), (IMG,), "transposed",
               row=30),
        Sample("aten.convolution.default", lambda: nn.Conv1d(2, 4, 3), ((1, 2, 8),), "1-D", row=40),
    )
