"""x / y with y computed at run time, as x * reciprocal(y) before annotation: the quantizer
observes 1 / y, which the lowering makes a 256-entry table of y (an interpolated table in 16x8),
and the product a quantized_mul. docs/lowering.md ("div.Tensor") says how accurate it is."""

from __future__ import annotations

DIV = "aten.div.Tensor"


def divides_by_activation(node) -> bool:
    return node.op == DIV and node.inputs[1].kind != "constant"


def divisions_as_reciprocals(graph):
    """graph, or a copy in which every div.Tensor by a non-constant divisor is mul(x, reciprocal(y))
    (the float result may differ from x / y in the last place; the quantized one is the point)."""
    if not any(divides_by_activation(n) for n in graph.nodes):
        return graph
    graph = graph.copy()
    for node in [n for n in graph.nodes if divides_by_activation(n)]:
        x, y = node.inputs
        reciprocal = graph.call("aten.reciprocal.default", [y], name=f"{node.name}_reciprocal",
                                source=node.source, before=node)
        product = graph.call("aten.mul.Tensor", [x, reciprocal], name=f"{node.name}_times_reciprocal",
                             source=node.source, before=node)
        graph.replace_all_uses(node.outputs[0], product)
        graph.erase_node(node)
    return graph
