"""Reductions: mean, sum, amax / amin, argmax / argmin: export, quantizer patterns (the mean's is
the pool family's average), ops-matrix rows."""

from __future__ import annotations

from .._export.handlers import dim, handles, instead, ints, require_float_dtype
from ..quantizer.patterns import Match, Observed, Stage, activation, free, pattern, single
from ._matrix import A, Sample, rows

# --- export ------------------------------------------------------------------------------------


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


# --- quantizer patterns (amax / amin keep their input's qparams: data_movement's passthrough) ---


@pattern("sum", ("aten.sum.dim_IntList",), stage=Stage.SINGLE, rank=80)
def check_sum(ctx, node):
    """A sum's range grows with the count: its output is observed."""
    return single(ctx, node, "sum", Observed())


@pattern("index", ("aten.argmax.default", "aten.argmin.default"), stage=Stage.SINGLE, rank=90)
def check_index(ctx, node):
    """argmax / argmin read their input quantized and give an int64 index, not quantized: a
    dequantize of positive scale keeps the integers' order and ties, so the index is the float op's."""
    free(ctx, node)
    activation(node, 0)
    return Match("index", [node], activations=[(node, 0)])


instead("aten.topk.default", "for k = 1 use torch.max(x, dim) or x.argmax(dim); for larger k return the "
        "scores and take topk outside the model")
instead("aten.cumsum.default", "multiply by a constant triangular matrix instead: a cumulative sum over the "
        "last dim (size n) is x @ U with U = torch.triu(torch.ones(n, n)), made once as a buffer of the model")


@rows
def samples(torch, nn, F, op, Fn):
    return (
        Sample("aten.mean.dim", op(lambda x: x.mean(-1)), (A,), row=330),
        Sample("aten.amin.default", op(lambda x: x.amin(-1)), (A,), row=600),
        Sample("aten.sum.dim_IntList", op(lambda x: x.sum(-1)), (A,), row=660),
        Sample("aten.amax.default", op(lambda x: x.amax(-1)), (A,), row=670),
        Sample("aten.argmax.default", op(lambda x: x.argmax(-1)), (A,), row=680),
        Sample("aten.argmin.default", op(lambda x: x.argmin()), (A,), "every dim", row=690),
        Sample("aten.topk.default", op(lambda x: torch.topk(x, 2, -1)[0]), (A,), row=700),
        Sample("aten.cumsum.default", op(lambda x: torch.cumsum(x, -1)), (A,), row=750),
    )
