"""Matrix products: linear, addmm (a linear with its weight transposed), mm / bmm of two
activations: export, quantizer patterns and ops-matrix rows."""

from __future__ import annotations

from .._export.handlers import handles, keep_whole
from ..patches import register_macs
from ..quantizer.gptq import register_layout, rows as input_rows
from ..quantizer.patterns import NoMatch, Stage, constant, free, pattern, two_activations, weighted
from ._matrix import A, Sample, rows

# --- export ------------------------------------------------------------------------------------


keep_whole("aten.linear.default")


@handles("aten.linear.default")
def linear(cx, a):
    return cx.call("aten.linear.default", [a["input"], a["weight"], a["bias"]])


@handles("aten.addmm.default")
def addmm(cx, a):
    return cx.call("aten.addmm.default", [a["self"], a["mat1"], a["mat2"]],
                   {"beta": float(a["beta"]), "alpha": float(a["alpha"])})


@handles("aten.mm.default", "aten.bmm.default")
def matmul(cx, a):
    return cx.call(str(cx.node.target), [a["self"], a["mat2"]])


# --- quantizer patterns ------------------------------------------------------------------------


@pattern("linear", ("aten.linear.default",), stage=Stage.WEIGHTED, rank=40, int16_weights=True)
def check_linear(ctx, node):
    free(ctx, node)
    w = constant(node, 1, "weight", rank=2)
    return weighted(ctx, node, "linear", 0, 1, 0, 2, w.shape[0])


@pattern("addmm", ("aten.addmm.default",), stage=Stage.WEIGHTED, rank=50, int16_weights=True)
def check_addmm(ctx, node):
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


# GPTQ rounds their weights; their input vectors are the rows of x.
register_layout("aten.linear.default", "aten.addmm.default", columns=input_rows)


pattern("matmul", ("aten.bmm.default", "aten.mm.default"), stage=Stage.BINARY, rank=40)(two_activations)


# MACs per output element of the lowered kernels: weight [C_out, C_in].
for _op in ("cortex_m.quantized_linear.default", "cortex_m.quantized_linear_s16.default",
            "cortex_m.quantized_linear_s16w16.default"):
    register_macs(_op, lambda w: w[-1])


# --- the ops matrix ----------------------------------------------------------------------------


@rows
def samples(torch, nn, F, op, Fn):
    def params(m):
        m.w = nn.Parameter(torch.randn(8, 4))
        m.b = nn.Parameter(torch.randn(4))

    return (
        Sample("aten.linear.default", lambda: nn.Linear(8, 4), (A,), row=50),
        Sample("aten.addmm.default", lambda: Fn(lambda m, x: torch.addmm(m.b, x, m.w), params), (A,), row=60),
        Sample("aten.mm.default", op(torch.mm), ((2, 8), (8, 4)), row=70),
        Sample("aten.bmm.default", op(torch.bmm), ((1, 2, 8), (1, 8, 4)), row=80),
    )
