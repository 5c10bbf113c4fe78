"""Annotation: which nodes are quantized by which pattern, and which activations share qparams.

annotate(graph, quantizer) offers every node to the patterns of patterns.PASSES in order; a node no
pattern takes stays float with the reasons of the checks that failed. Then, in execution order,
each quantized activation value gets a Group: its own observer, another value's group (shared), or
fixed qparams. Inputs of a quantized node that come from a graph input or a float node get an
observed group of their own, so a float region ends with a quantize.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from .observers import ACTIVATION_RANGES, Observer, QParams
from .patterns import PASSES, Fixed, Match, NoMatch, NotApplicable, Observed, SharedWith


class GraphView:
    """Read-only helpers over a graph for the pattern checkers."""

    def __init__(self, graph, quantizer):
        self.graph = graph
        self.quantizer = quantizer
        self.nodes = graph.nodes
        self.position = {n.name: i for i, n in enumerate(self.nodes)}
        self._users = defaultdict(list)
        for n in self.nodes:
            for name in dict.fromkeys(v.name for v in n.inputs if v is not None):
                self._users[name].append(n)
        self._outputs = {v.name for v in graph.outputs}
        self.match_of: dict[str, Match] = {}

    def users(self, value) -> list:
        """Nodes reading value, in execution order, each once."""
        return self._users.get(value.name, [])

    def is_output(self, value) -> bool:
        return value.name in self._outputs

    def taken(self, node) -> bool:
        return node.name in self.match_of

    def take(self, match: Match) -> None:
        for n in match.nodes:
            self.match_of[n.name] = match


class Group:
    """One set of activation qparams: observed, or fixed. members: the values that use it."""

    def __init__(self, root: str, observer: Observer | None = None, fixed: QParams | None = None):
        self.root = root
        self.observer = observer
        self.fixed = fixed
        self.members = [root]
        self._qparams = fixed

    def qparams(self) -> QParams:
        if self._qparams is None:
            self._qparams = self.observer.qparams()
        return self._qparams


@dataclass
class Annotation:
    view: GraphView
    matches: list  # in execution order of their anchors
    float_reasons: dict  # node name -> why no pattern took it
    groups: dict = field(default_factory=dict)  # value name -> Group (gets quantize / dequantize)
    edge_groups: dict = field(default_factory=dict)  # (node name, input index) -> requantize Group

    def observed_groups(self) -> dict:
        """value name -> Group for the values whose tensors feed an observer."""
        return {g.root: g for g in self.groups.values() if g.observer is not None}


def _reason(failures: list, op: str) -> str:
    """'pattern: why' for each failed check (patterns with the same reason share one entry); the
    NotApplicable ones only when no other check says more."""
    if not failures:
        return f"no quantization pattern for {op}"
    real = [(name, e) for name, e in failures if not isinstance(e, NotApplicable)] or failures
    by_message = {}
    for name, e in real:
        by_message.setdefault(str(e), []).append(name)
    return "; ".join(f"{', '.join(names)}: {message}" for message, names in by_message.items())


def annotate(graph, quantizer) -> Annotation:
    view = GraphView(graph, quantizer)
    failures = defaultdict(list)
    for patterns in PASSES:
        for node in view.nodes:
            if view.taken(node):
                continue
            for pattern in patterns:
                if node.op not in pattern.ops:
                    continue
                try:
                    match = pattern.check(view, node)
                except NoMatch as e:
                    failures[node.name].append((pattern.name, e))
                    continue
                view.take(match)
                break
    floats = {n.name: _reason(failures[n.name], n.op) for n in view.nodes if not view.taken(n)}
    matches = sorted({id(m): m for m in view.match_of.values()}.values(),
                     key=lambda m: view.position[m.nodes[0].name])
    annotation = Annotation(view, matches, floats)
    _assign_groups(annotation, quantizer)
    return annotation


def _assign_groups(annotation: Annotation, quantizer) -> None:
    groups = annotation.groups
    qmin, qmax, _ = ACTIVATION_RANGES[quantizer.activation_dtype]

    def observed(name: str) -> Group:
        g = Group(name, observer=quantizer.make_observer(quantizer.dtype_of(name)))
        groups[name] = g
        return g

    for match in annotation.matches:
        for node, index in match.activations:
            value = node.inputs[index]
            if value.name not in groups:
                observed(value.name)
        for name, spec in match.outputs.items():
            if isinstance(spec, Observed):
                observed(name)
            elif isinstance(spec, SharedWith):
                groups[name] = groups[spec.value]
                groups[name].members.append(name)
            elif isinstance(spec, Fixed):
                fixed = QParams(float(spec.scale), int(spec.zero_point), qmin, qmax, quantizer.activation_dtype)
                groups[name] = Group(name, fixed=fixed)
            else:
                raise TypeError(f"unknown output spec {spec!r}")
        if match.requantized:
            (out,) = match.outputs
            for node, index in match.requantized:
                annotation.edge_groups[(node.name, index)] = groups[out]
    _check_int16_names(annotation, quantizer)


def _check_int16_names(annotation: Annotation, quantizer) -> None:
    """Every name in quantizer.int16_activations is an observed group's own value."""
    graph = annotation.view.graph
    values = {v.name for v in graph.inputs} | {o.name for n in graph.nodes for o in n.outputs}
    for name in sorted(quantizer.int16_activations):
        group = annotation.groups.get(name)
        if name not in values:
            raise ValueError(f"int16_activations names '{name}', which is not a value of the graph")
        if group is None:
            raise ValueError(f"int16_activations names '{name}', which is not quantized (it stays float)")
        if group.observer is None:
            raise ValueError(f"int16_activations names '{name}', whose qparams are fixed, not observed")
        if group.root != name:
            raise ValueError(f"int16_activations names '{name}', which takes its qparams from "
                             f"'{group.root}'; name '{group.root}' instead")
