"""Removes the fully-masked-row branch torch exports after the softmax of attention.

nn.MultiheadAttention and F.scaled_dot_product_attention (the math path torch.export takes)
compute a "safe softmax": rows whose inputs are all -inf give zeros instead of NaN. Decomposed:

    p    = _softmax(s, dim)
    dead = logical_not(any(logical_not(eq(s, -inf)), dim, keepdim=True))
    out  = where(dead, full_like(p, 0), p)

When s cannot hold -inf, no row is dead and `out` is `p`: the branch goes and readers of `out`
read `p`. s can hold -inf when one of its ancestors is a program constant holding a non-finite
value, an op with a non-finite scalar argument (`scalar_tensor(-inf)`, `masked_fill(m, -inf)`:
how attention masks are built), or an op that makes infinities of finite values (log, division,
reciprocal, ...). Model inputs count as finite: the program quantizes them, and
cortexm.quantize refuses non-finite calibration data. Float overflow is not considered.

A softmax whose input adds a constant -inf mask is rewritten first (attention_mask.py: its
branch becomes the identity, or a 0 / 1 row multiplier when a row is masked entirely). A branch
whose softmax input can still hold -inf (a mask computed from model inputs) is refused, naming
the node and its module.
"""

from __future__ import annotations

import math

import torch

from .._core import UnsupportedError
from .attention_mask import ancestors, constant_tensor, rewrite_masked_softmax
from .converter import module_path, op_name
from .handlers import INFINITY_MAKING, refusal

aten = torch.ops.aten


def is_op(node, target) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target == target


def is_neg_inf(v) -> bool:
    return isinstance(v, float) and v == -math.inf


def branch_of(where: torch.fx.Node):
    """The branch's (softmax, nodes to erase) when `where` ends a safe-softmax branch, else None."""
    if not is_op(where, aten.where.self) or len(where.args) != 3:
        return None
    dead, zeros, p = where.args
    if not (is_op(p, aten._softmax.default) and is_op(zeros, aten.full_like.default)
            and zeros.args[0] is p and zeros.args[1] == 0 and is_op(dead, aten.logical_not.default)):
        return None
    any_ = dead.args[0]
    if not is_op(any_, aten.any.dim) or not is_op(any_.args[0], aten.logical_not.default):
        return None
    eq = any_.args[0].args[0]
    if not is_op(eq, aten.eq.Scalar) or not is_neg_inf(eq.args[1]):
        return None
    s, rank = p.args[0], p.meta["val"].dim()
    any_dim = any_.args[1] if len(any_.args) > 1 else any_.kwargs.get("dim")
    keepdim = any_.args[2] if len(any_.args) > 2 else any_.kwargs.get("keepdim", False)
    if eq.args[0] is not s or not keepdim or any_dim % rank != p.args[1] % rank:
        return None
    nodes = [where, zeros, dead, any_, any_.args[0], eq]
    if any(len(n.users) != 1 for n in nodes[1:]):
        return None  # a part of the branch is read elsewhere
    return p, nodes


# What to do instead, by what may put -inf into a softmax input.
PLAIN_SOFTMAX = "write the attention with a plain torch.softmax (it has no fully-masked-row branch)"
INSTEAD_OF_CONSTANT = ("make the constant finite, or mask with a constant -inf mask added to the scores (which "
                       "cortexm rewrites), or " + PLAIN_SOFTMAX)
INSTEAD_OF_OP = "compute {} outside the model, or " + PLAIN_SOFTMAX
INSTEAD_OF_SCALAR = ("make the mask a constant (a buffer, not computed from model inputs), which cortexm "
                     "rewrites, or " + PLAIN_SOFTMAX)


def infinity_source(ep, s: torch.fx.Node) -> tuple[str, str] | None:
    """What may put -inf into s (a sentence naming the node) and what to do instead, or None when
    nothing can."""
    for node in ancestors(s):
        if node.op in ("placeholder", "get_attr"):
            t = constant_tensor(ep, node)
            if t is not None and t.is_floating_point() and not bool(torch.isfinite(t).all()):
                return f"the constant '{node.name}' holds non-finite values", INSTEAD_OF_CONSTANT
            continue
        if node.op != "call_function":
            continue
        name = op_name(node.target)
        if name in INFINITY_MAKING:
            return f"'{node.name}' ({name}) can make infinities of finite values", INSTEAD_OF_OP.format(name)
        scalars = []
        torch.fx.node.map_aggregate((node.args, node.kwargs),
                                    lambda v: scalars.append(v) if isinstance(v, float) else None)
        if any(not math.isfinite(v) for v in scalars):
            return f"'{node.name}' ({name}) has a non-finite scalar argument (an attention mask)", INSTEAD_OF_SCALAR
    return None


def where_of(node) -> str:
    return f"module '{module_path(node)}'" if module_path(node) else "the top-level module"


def remove_safe_softmax_branches(ep: torch.export.ExportedProgram) -> torch.export.ExportedProgram:
    """Rewrites each softmax reading a constant -inf mask (attention_mask.py) and removes each
    identity branch from ep's graph in place; refuses the other branches. Returns ep."""
    graph = ep.graph_module.graph
    for p in [n for n in graph.nodes if is_op(n, aten._softmax.default)]:
        branch = next((found[1] for found in map(branch_of, list(p.users)) if found is not None), None)
        masked = rewrite_masked_softmax(ep, p, branch, where_of(p))
        if not masked and branch is None:
            continue
        # After a mask's rewrite its constants are finite: the scores must be too.
        found = infinity_source(ep, p.args[0])
        if found is not None:
            source, instead = found
            raise UnsupportedError(refusal(
                f"cortexm.export: softmax '{p.name}' in {where_of(p)}: its input can hold -inf ({source}), so its "
                "fully-masked-row branch (eq -inf, any, where) cannot be removed; masks are supported when "
                "they are constants (buffers, not model inputs)", instead))
        if not masked:
            branch[0].replace_all_uses_with(p)
            for node in branch:
                graph.erase_node(node)
    graph.eliminate_dead_code()
    graph.lint()
    ep.graph_module.recompile()
    return ep
