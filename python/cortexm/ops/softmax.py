"""softmax and log_softmax: export, quantizer patterns (TFLite's fixed output qparams), ops-matrix
rows and lowering facts."""

from __future__ import annotations

from .._export.handlers import dim, handles, makes_infinity, require_float_dtype
from ..quantizer.config import register_fixed_qparams
from ..quantizer.patterns import NoMatch, Stage, fixed_or_observed, free, pattern, single
from ._matrix import A, Sample, no_kernel, rows


makes_infinity("aten._log_softmax.default", "aten.log_softmax.int")


@handles("aten._softmax.default", "aten._log_softmax.default", "aten.softmax.int", "aten.log_softmax.int")
def softmax(cx, a):
    require_float_dtype(cx, a.get("dtype"))
    name = cx.node.target._schema.name.split("::")[1].lstrip("_")
    rank = len(cx.shape(a["self"]))
    return cx.call(f"aten._{name}.default", [a["self"]], {"dim": dim(a["dim"], rank), "half_to_float": False})


# softmax [0, 1), int8 log_softmax [-16, 0]; int16 log_softmax is observed.
register_fixed_qparams("softmax", int8=(1 / 256, -128), int16=(1 / 32768, 0))
register_fixed_qparams("log_softmax", int8=(16 / 256, 127), int16=None)


@pattern("softmax", ("aten._softmax.default",), stage=Stage.SINGLE, rank=20)
def check_softmax(ctx, node):
    free(ctx, node)
    if node.attrs["half_to_float"]:
        raise NoMatch("half_to_float=True")
    return single(ctx, node, "softmax", fixed_or_observed(ctx, node, "softmax"))


@pattern("log_softmax", ("aten._log_softmax.default",), stage=Stage.SINGLE, rank=30)
def check_log_softmax(ctx, node):
    free(ctx, node)
    if node.attrs["half_to_float"]:
        raise NoMatch("half_to_float=True")
    return single(ctx, node, "log_softmax", fixed_or_observed(ctx, node, "log_softmax"))


no_kernel("16x8", "aten._log_softmax.default")


@rows
def samples(torch, nn, F, op, Fn):
    return (
        Sample("aten._softmax.default", op(lambda x: torch.softmax(x, -1)), (A,), row=340),
        Sample("aten._log_softmax.default", op(lambda x: torch.log_softmax(x, -1)), (A,), row=350),
    )
