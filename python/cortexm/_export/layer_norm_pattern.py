"""A layer norm written out by hand becomes one aten.layer_norm call, before conversion.

Matched over the last dim of x, in the core-ATen FX graph of the ExportedProgram:

    m = x.mean(-1, keepdim=True)
    v = ((x - m) ** 2).mean(-1, keepdim=True)      # or (x - m) * (x - m), or
                                                   # x.var(-1, unbiased=False, keepdim=True)
    y = (x - m) / torch.sqrt(v + eps)              # or (x - m) * torch.rsqrt(v + eps)
    y = y * w + b                                  # optional; w, b constants of shape [N]

It runs on the FX graph, not on the cortexm graph, because rsqrt and var have no graph op: the
converter would refuse them before a graph pass could see them. A match is rewritten only when
every intermediate is read by the pattern alone (no other user, not an output) and the shapes are
x's or x's with the last dim 1; otherwise the graph is left as it is.
"""

from __future__ import annotations

import torch
from torch.export.graph_signature import InputKind

aten = torch.ops.aten


class _NoMatch(Exception):
    pass


def _call(node, *targets):
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target in targets


def _require(condition: bool):
    if not condition:
        raise _NoMatch


def _shape(node) -> tuple:
    val = node.meta.get("val")
    _require(isinstance(val, torch.Tensor) and val.dtype == torch.float32)
    return tuple(val.shape)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _alpha_one(node) -> bool:
    return node.kwargs.get("alpha", 1) == 1 and len(node.args) <= 2


class _Matcher:
    def __init__(self, ep: torch.export.ExportedProgram):
        self.constants = {spec.arg.name for spec in ep.graph_signature.input_specs
                          if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)}

    def constant(self, node, n: int) -> bool:
        if not isinstance(node, torch.fx.Node):
            return False
        if not (node.op == "get_attr" or (node.op == "placeholder" and node.name in self.constants)):
            return False
        val = node.meta.get("val")
        return isinstance(val, torch.Tensor) and val.dtype == torch.float32 and tuple(val.shape) == (n,)

    def row_mean(self, node, rank: int):
        """The input of a mean over the last dim with keepdim=True."""
        _require(_call(node, aten.mean.dim))
        x, dims = node.args[0], node.args[1]
        keepdim = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
        _require(node.kwargs.get("dtype") is None and keepdim is True)
        _require(list(dims) in ([-1], [rank - 1]))
        return x

    def centered(self, node, x, m):
        """node is x - m."""
        _require(_call(node, aten.sub.Tensor) and _alpha_one(node) and node.args[:2] == (x, m))

    def variance(self, node, x, m, rank: int) -> list:
        """The nodes of the biased variance of x over the last dim (m its mean)."""
        if _call(node, aten.var.correction):
            dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
            _require(node.args[0] is x and dims is not None and list(dims) in ([-1], [rank - 1]))
            _require(node.kwargs.get("correction") == 0 and node.kwargs.get("keepdim") is True)
            return [node]
        square = self.row_mean(node, rank)
        if _call(square, aten.pow.Tensor_Scalar):
            _require(square.args[1] == 2)
            terms = [square.args[0]]
        else:
            _require(_call(square, aten.mul.Tensor))
            terms = list(dict.fromkeys(square.args[:2]))  # (x - m) * (x - m), one node or two
        for t in terms:
            self.centered(t, x, m)
        return [node, square, *terms]

    def match(self, nrm):
        """(x, n, w, b, eps, nodes, last) for a normalization node, else _NoMatch."""
        if _call(nrm, aten.div.Tensor):
            diff, root = nrm.args
            _require(_call(root, aten.sqrt.default))
        else:
            _require(_call(nrm, aten.mul.Tensor))
            a, b = nrm.args
            diff, root = (a, b) if _call(b, aten.rsqrt.default) else (b, a)
            _require(_call(root, aten.rsqrt.default))
        shifted = root.args[0]
        eps = 0.0
        if _call(shifted, aten.add.Tensor, aten.add.Scalar) and _alpha_one(shifted):
            a, b = shifted.args
            var, eps = (a, b) if _is_number(b) else (b, a)
            _require(_is_number(eps) and eps >= 0)
            extra = [shifted]
        else:
            var, extra = shifted, []
        _require(_call(diff, aten.sub.Tensor) and _alpha_one(diff))
        x, m = diff.args
        _require(isinstance(x, torch.fx.Node) and isinstance(m, torch.fx.Node))
        shape = _shape(x)
        rank = len(shape)
        _require(rank >= 1 and shape[-1] >= 1)
        _require(self.row_mean(m, rank) is x)
        var_nodes = self.variance(var, x, m, rank)
        nodes = [m, diff, *var_nodes, *extra, root, nrm]
        stat_shape = shape[:-1] + (1,)
        for node in nodes:
            _require(_shape(node) in (shape, stat_shape))
        _require(_shape(nrm) == shape and _shape(diff) == shape)
        n = shape[-1]
        w = b = None
        last = nrm
        if len(last.users) == 1:
            user = next(iter(last.users))
            if _call(user, aten.mul.Tensor) and _shape(user) == shape:
                other = user.args[1] if user.args[0] is last else user.args[0]
                if self.constant(other, n):
                    w, last = other, user
                    nodes.append(user)
        if len(last.users) == 1:
            user = next(iter(last.users))
            if _call(user, aten.add.Tensor) and _alpha_one(user) and _shape(user) == shape:
                other = user.args[1] if user.args[0] is last else user.args[0]
                if self.constant(other, n):
                    b, last = other, user
                    nodes.append(user)
        # Every intermediate is read by the pattern alone.
        inside = set(nodes)
        for node in nodes:
            if node is not last:
                _require(all(u in inside for u in node.users))
        return x, n, w, b, float(eps), nodes, last


def fuse_layer_norms(ep: torch.export.ExportedProgram) -> int:
    """Rewrites each hand-written layer norm of ep's graph in place; returns how many."""
    graph = ep.graph
    matcher = _Matcher(ep)
    erased: set = set()
    count = 0
    for node in list(graph.nodes):
        if node in erased or not _call(node, aten.div.Tensor, aten.mul.Tensor):
            continue
        try:
            x, n, w, b, eps, nodes, last = matcher.match(node)
        except _NoMatch:
            continue
        with graph.inserting_before(last):
            fused = graph.call_function(aten.layer_norm.default, (x, [n], w, b, eps))
        fused.meta = dict(last.meta)
        last.replace_all_uses_with(fused)
        order = {n: i for i, n in enumerate(graph.nodes)}
        for dead in sorted(set(nodes), key=order.__getitem__, reverse=True):
            graph.erase_node(dead)
            erased.add(dead)
        count += 1
    if count:
        ep.graph_module.recompile()
    return count
