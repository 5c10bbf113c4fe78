"""Annotation: which nodes are quantized by which pattern, and which activations share qparams.

annotate(graph, quantizer) offers every node to the patterns of patterns.passes() in order; a node no
pattern takes stays float with the reasons of the checks that failed. Then, in execution order,
each quantized activation value gets a Group: its own observer, another value's group (shared), or
fixed qparams. Inputs of a quantized node that come from a graph input or a float node get an
observed group of their own, so a float region ends with a quantize.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from .observers import ACTIVATION_RANGES, Observer, QParams, qparams_from_min_max
from .patterns import (SATURATION, BelowMask, Fixed, Match, NoMatch, NotApplicable, Observed, SharedWith, mask_gap,
                       passes)


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
    """One set of activation qparams: observed, fixed, or another group's widened below an
    attention mask (patterns.BelowMask). members: the values that use it."""

    def __init__(self, root: str, observer: Observer | None = None, fixed: QParams | None = None,
                 below_mask: "Group | None" = None):
        self.root = root
        self.observer = observer
        self.fixed = fixed
        self.below_mask = below_mask
        self.members = [root]
        self._qparams = fixed
        self.saturation = None  # |x| an int16 range must reach: see _widen_to_saturation
        self.includes = []  # values the range must hold (a constant pad's value)
        self.same_as = None  # a fed-back state's input takes its output's qparams (_tie_state_feedback)

    def qparams(self) -> QParams:
        if self.same_as is not None:
            return self.same_as.qparams()
        if self._qparams is None and self.below_mask is not None:
            q = self.below_mask.qparams()
            lo, hi = (q.quant_min - q.zero_point) * q.scale, (q.quant_max - q.zero_point) * q.scale
            self._qparams = qparams_from_min_max(lo - mask_gap(lo, hi), hi, q.dtype)
        if self._qparams is None:
            lo, hi = self.observer.range() if self.observer.observed else (None, None)
            if lo is not None and (self.includes or self.saturation is not None):
                lo, hi = min([lo, *self.includes]), max([hi, *self.includes])
                if self.saturation is not None and self.observer.dtype == "int16":
                    lo, hi = min(lo, -self.saturation), max(hi, self.saturation)
                self._qparams = qparams_from_min_max(lo, hi, self.observer.dtype)
            else:
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
    for patterns in passes():
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
            elif isinstance(spec, BelowMask):
                groups[name] = Group(name, below_mask=groups[spec.value])
            elif isinstance(spec, Fixed):
                qmin, qmax, _ = ACTIVATION_RANGES[spec.dtype]
                fixed = QParams(float(spec.scale), int(spec.zero_point), qmin, qmax, spec.dtype)
                groups[name] = Group(name, fixed=fixed)
            else:
                raise TypeError(f"unknown output spec {spec!r}")
        for name in match.outputs:
            groups[name].includes.extend(match.range_includes)
        if match.requantized:
            (out,) = match.outputs
            for node, index in match.requantized:
                annotation.edge_groups[(node.name, index)] = groups[out]
    _check_int16_names(annotation, quantizer)
    _tie_repeated_steps(annotation)
    _widen_to_saturation(annotation)
    _tie_state_feedback(annotation, quantizer)


def _repeated_steps(view: GraphView) -> list:
    """Unrolled recurrences: for each weight read by three or more nodes of one module (torch.export
    unrolls nn.LSTM / nn.GRU into one cell per step, every step's cell reading the same weights),
    the steps' node lists when every step runs the same ops in the same order: [step][position].
    A step runs from its weight-reading node to the next step's; the last one as far as its ops
    are the others'."""
    readers = defaultdict(list)
    for node in view.nodes:
        for v in node.inputs:
            if v is not None and v.kind == "constant":
                readers[(v.name, node.source, node.op)].append(node)
    found, anchored = [], set()
    for anchors in readers.values():
        if len(anchors) < 3 or any(a.name in anchored for a in anchors):
            continue
        source = anchors[0].source
        module_nodes = [n for n in view.nodes if n.source == source]
        where = {n.name: i for i, n in enumerate(module_nodes)}
        firsts = [where[a.name] for a in anchors]
        length = firsts[1] - firsts[0]
        if length <= 0 or any(b - a != length for a, b in zip(firsts, firsts[1:])):
            continue
        steps = [module_nodes[f:f + length] for f in firsts]
        ops = [n.op for n in steps[0]]
        if any([n.op for n in step] != ops for step in steps[:-1]):
            continue
        # The last step ends where its ops leave the others' (a GRU's step ends with the next
        # step's input split; after the last cell come the module's cat of outputs and the rest).
        last = steps[-1]
        same = next((i for i, n in enumerate(last) if n.op != ops[i]), len(last))
        steps[-1] = last[:same]
        anchored.update(a.name for a in anchors)
        found.append(steps)
    return found


def _tie_repeated_steps(annotation: Annotation) -> None:
    """The corresponding activations of an unrolled recurrence's steps share one observer, so every
    step gets the same qparams, as one sequence op (TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM, CMSIS-NN's
    LSTM) has one set per gate: then the steps' tables, folded biases and requantize parameters are
    the same constants, which the program stores once (50 LSTM steps: one table per gate, not 50)."""
    groups = annotation.groups
    for steps in _repeated_steps(annotation.view):
        for position in range(len(steps[0])):
            having = [step for step in steps if position < len(step)]
            for k in range(len(steps[0][position].outputs)):
                tied = [groups.get(step[position].outputs[k].name) for step in having]
                if any(g is None or g.observer is None or g.root != step[position].outputs[k].name
                       for g, step in zip(tied, having)):
                    continue  # not each step's own observed value (shared, fixed or float)
                if len({g.observer.dtype for g in tied}) != 1:
                    continue
                for g in tied[1:]:
                    g.observer = tied[0].observer


def check_state_feedback(graph, state_feedback: dict) -> None:
    """Raises ValueError unless each {output: input} pair names an output and an input of graph of
    the same shape."""
    outputs, inputs = graph.outputs, graph.inputs
    for output, input_ in state_feedback.items():
        if output >= len(outputs) or input_ >= len(inputs):
            raise ValueError(f"state_feedback {{{output}: {input_}}}: the graph has {len(outputs)} outputs and "
                             f"{len(inputs)} inputs")
        if list(outputs[output].shape) != list(inputs[input_].shape):
            raise ValueError(f"state_feedback {{{output}: {input_}}}: output '{outputs[output].name}' has shape "
                             f"{list(outputs[output].shape)}, input '{inputs[input_].name}' {list(inputs[input_].shape)}")


def _tie_state_feedback(annotation: Annotation, quantizer) -> None:
    """A fed-back state's input takes the qparams of the output it is fed from, one observer seeing
    both (the output's own qparams when they are fixed), so a program with integer I/O gets its state
    output back as the next step's input byte for byte, with no requantize in the caller."""
    graph, groups = annotation.view.graph, annotation.groups
    check_state_feedback(graph, quantizer.state_feedback)
    for output, input_ in quantizer.state_feedback.items():
        source, state = graph.outputs[output], graph.inputs[input_]
        out_group, in_group = groups.get(source.name), groups.get(state.name)
        if out_group is None or in_group is None or out_group is in_group:
            continue  # float on one side (nothing to share) or already one group
        out_dtype = out_group.fixed.dtype if out_group.fixed is not None else out_group.observer.dtype
        if in_group.observer is None or in_group.observer.dtype != out_dtype:
            raise ValueError(f"state_feedback {{{output}: {input_}}}: output '{source.name}' is {out_dtype} and "
                             f"input '{state.name}' is not; give both the same activation dtype (name both or "
                             f"neither in int16_activations)")
        if out_group.observer is not None:
            in_group.observer = out_group.observer
        out_group.includes.extend(in_group.includes)  # (a graph output's group has no saturation bound)
        in_group.same_as = out_group


def _saturation_point(op: str, output_scale: float) -> float | None:
    """|x| beyond which op (sigmoid / tanh: patterns.SATURATION) is within half an output step of
    its bound; None for other ops."""
    point = SATURATION.get(op)
    return None if point is None else point(output_scale)


def _widen_to_saturation(annotation: Annotation) -> None:
    """An int16 value read only by sigmoid / tanh (their outputs have fixed qparams) keeps a range
    reaching their saturation points, so inputs beyond what calibration saw are not clipped: a
    logit seen up to 4.5 would read p = 0.989 for every larger one. In int16 this costs at most
    about one output step of resolution (in int8 it would cost several, so int8 keeps the observed
    range)."""
    view = annotation.view
    for group in annotation.observed_groups().values():
        if group.observer.dtype != "int16":
            continue
        bound = 0.0
        for name in group.members:
            value = view.graph.value(name)
            if view.is_output(value):
                bound = None
                break
            for user in view.users(value):
                if all(annotation.groups.get(o.name) is group for o in user.outputs):
                    continue  # data movement sharing the qparams: its readers are other members
                out = annotation.groups.get(user.outputs[0].name)
                point = None if out is None or out.fixed is None else _saturation_point(user.op, out.fixed.scale)
                if point is None:
                    bound = None
                    break
                bound = max(bound, point)
            if bound is None:
                break
        if bound:
            group.saturation = bound


def _check_int16_names(annotation: Annotation, quantizer) -> None:
    """Every name in quantizer.int16_activations is a quantized group's own value."""
    graph = annotation.view.graph
    values = {v.name for v in graph.inputs} | {o.name for n in graph.nodes for o in n.outputs}
    for name in sorted(quantizer.int16_activations):
        group = annotation.groups.get(name)
        if name not in values:
            raise ValueError(f"int16_activations names '{name}', which is not a value of the graph")
        if group is None:
            raise ValueError(f"int16_activations names '{name}', which is not quantized (it stays float)")
        if group.root != name:
            raise ValueError(f"int16_activations names '{name}', which takes its qparams from "
                             f"'{group.root}'; name '{group.root}' instead")
