"""A constant attention mask with -inf entries, rewritten so that int8 can compute it.

torch adds the mask to the scores before softmax: `softmax(s + M)`, M built from a bool mask
(`where(mask, 0, -inf)`), a causal mask (`is_causal=True`, a triu of -inf), a key padding mask or
a float mask. When M depends on constants only (buffers, parameters, sizes; not on model
inputs) it is evaluated here and the add is rewritten:

    s + M  ->  (s + F) + B        F: M's finite entries (0 where M is -inf), omitted when all 0
                                  B: MASKED where M is -inf, else 0 (a constant of s + F's shape)

MASKED is float32's most negative value. In float, s + MASKED is MASKED and softmax gives those
entries exactly 0, as torch does. The quantizer recognizes the add of B (ops/binary.py,
`check_attention_mask`): masked entries saturate to the int8 minimum of a range that reaches
MASKED_GAP below the scores' own, so the int8 softmax (differences below diff_min count as exp 0)
gives them exactly 0 probability too and the other entries exactly what they get without them.

A row masked entirely (every entry -inf) is 0 after torch's safe softmax (nn.MultiheadAttention,
scaled_dot_product_attention): here the softmax output is multiplied by a constant 0 / 1 per row
(int8: quantized_mul, exactly 0 in masked rows). A plain softmax of such a row is NaN in torch and
is refused.
"""

from __future__ import annotations

import torch
from torch.export.graph_signature import InputKind

from .._core import UnsupportedError
from .handlers import refusal

aten = torch.ops.aten

MASKED = float(torch.finfo(torch.float32).min)


def ancestors(node: torch.fx.Node):
    """node and every node it reads, directly or not, each once."""
    seen, todo = set(), [node]
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            yield n
            todo.extend(n.all_input_nodes)


def constant_tensor(ep, node):
    """The tensor of a program-constant placeholder or get_attr, else None."""
    if node.op == "get_attr":
        obj = ep.graph_module
        for part in node.target.split("."):
            obj = getattr(obj, part)
        return obj if isinstance(obj, torch.Tensor) else None
    spec = next((s for s in ep.graph_signature.input_specs if s.arg.name == node.name), None)
    if spec is None or spec.kind not in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
        return None
    store = ep.state_dict if spec.target in ep.state_dict else ep.constants
    return store.get(spec.target)


def depends_on_model_inputs(ep, node: torch.fx.Node) -> bool:
    user_inputs = {s.arg.name for s in ep.graph_signature.input_specs if s.kind == InputKind.USER_INPUT}
    return any(n.op == "placeholder" and n.name in user_inputs for n in ancestors(node))


def evaluate(ep, node: torch.fx.Node) -> torch.Tensor:
    """node's value computed from the program's constants (it reads no model input)."""
    values: dict = {}

    def value(n):
        if n not in values:
            if n.op in ("placeholder", "get_attr"):
                values[n] = constant_tensor(ep, n)
            else:
                args, kwargs = torch.fx.node.map_arg((n.args, n.kwargs), value)
                values[n] = n.target(*args, **kwargs)
        return values[n]

    return value(node)


def add_constant(ep, graph, before: torch.fx.Node, name: str, tensor: torch.Tensor) -> torch.fx.Node:
    """A get_attr node reading a new constant of the graph module."""
    attr = name
    i = 0
    while hasattr(ep.graph_module, attr):
        i += 1
        attr = f"{name}_{i}"
    ep.graph_module.register_buffer(attr, tensor.contiguous())
    with graph.inserting_before(before):
        node = graph.get_attr(attr)
    node.meta["val"] = tensor
    node.meta["nn_module_stack"] = before.meta.get("nn_module_stack", {})
    return node


def mask_operand(ep, s: torch.fx.Node):
    """(index of the scores operand, the mask's value) when s = scores + M with M a constant
    holding -inf, else None."""
    if not (isinstance(s, torch.fx.Node) and s.op == "call_function" and s.target == aten.add.Tensor):
        return None
    if len(s.args) < 2 or s.kwargs.get("alpha", 1) != 1 or not all(isinstance(a, torch.fx.Node) for a in s.args[:2]):
        return None
    for i in (1, 0):
        operand = s.args[i]
        if depends_on_model_inputs(ep, operand):
            continue
        mask = evaluate(ep, operand)
        if isinstance(mask, torch.Tensor) and mask.is_floating_point() and bool(torch.isneginf(mask).any()):
            return 1 - i, mask.to(torch.float32)
    return None


def rewrite_masked_softmax(ep, p: torch.fx.Node, branch: list | None, where: str) -> bool:
    """Rewrites softmax p's input when it adds a constant -inf mask (see the module doc). branch:
    the safe-softmax nodes after p (where first), or None. False when p's input has no such mask."""
    graph = ep.graph_module.graph
    s = p.args[0]
    found = mask_operand(ep, s)
    if found is None:
        return False
    scores_index, mask = found
    scores = s.args[scores_index]
    shape = tuple(s.meta["val"].shape)
    dim = p.args[1] % len(shape)
    if bool(torch.isposinf(mask).any() | torch.isnan(mask).any()):
        raise UnsupportedError(refusal(f"cortexm.export: softmax '{p.name}' in {where}: its mask holds +inf or NaN",
                                       "mask with 0 (keep) and -inf (hide) only"))
    masked = torch.isneginf(mask).expand(shape)
    dead = masked.all(dim=dim, keepdim=True)
    if bool(dead.any()) and branch is None:
        raise UnsupportedError(refusal(
            f"cortexm.export: softmax '{p.name}' in {where}: its mask hides every entry of a row, which torch's "
            "softmax makes NaN", "mask fewer entries, or use nn.MultiheadAttention or "
            "F.scaled_dot_product_attention, which give such rows 0 (cortexm supports that)"))
    finite = torch.where(torch.isneginf(mask), torch.zeros_like(mask), mask)
    x = scores
    if bool((finite != 0).any()):
        f = add_constant(ep, graph, s, f"{p.name}_mask_values", finite)
        with graph.inserting_before(s):
            x = graph.call_function(aten.add.Tensor, (scores, f))
        x.meta.update(s.meta)
    b = add_constant(ep, graph, s, f"{p.name}_mask",
                     torch.where(masked, torch.tensor(MASKED), torch.tensor(0.0)))
    s.args = (x, b)
    s.kwargs = {}
    if branch is not None:
        where_node, nodes = branch[0], branch
        out = p
        if bool(dead.any()):
            keep = add_constant(ep, graph, where_node, f"{p.name}_rows_kept", (~dead).to(torch.float32))
            with graph.inserting_before(where_node):
                out = graph.call_function(aten.mul.Tensor, (p, keep))
            out.meta.update(where_node.meta)
        where_node.replace_all_uses_with(out)
        for node in nodes:
            graph.erase_node(node)
    return True

