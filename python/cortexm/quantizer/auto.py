"""precision="auto": the fewest activation groups in int16 (16x8: int16 activations, int8 weights)
and, when it helps, GPTQ weights and int16 weights (16x16 layers), so that the quantized graph
meets an accuracy target.

One calibration pass feeds, for every activation group, an int8 and an int16 observer (and GPTQ's
input statistics), so any assignment of dtypes to groups converts without calibrating again. A
quantized op takes the dtype of its output; an input from a group of the other dtype is
requantized on that edge (an int8 <-> int16 requantize_s16 after lowering), so every op reads and
writes one dtype and lowers onto its int8 or _s16 kernel.

The score of an assignment is the SQNR against the float graph of each of the graph's outputs on
the evaluation samples, or the user's metric(qgraph). The default evaluation samples hold at least
MIN_VALUES values of every output (an SQNR from 16 scalar probabilities moves by a dB between
sample sets, more than the tolerance it is compared with). The search:
1. all int8 (round to nearest, then GPTQ): its lowest output SQNR meets the target
   (target_sqnr_db: int8 is good enough) -> done.
2. all int16: the best activations can do (`reach`), with the weight rounding that reaches
   further (GPTQ, when its statistics are determined, costs nothing at run time). With the SQNR
   score, when 16x8 everywhere gains less than min_gain_db over int8 on every output, activation
   precision is not what limits the model: it stays int8. Otherwise, when int16 weights on every
   conv / linear (16x16, at twice those weights' bytes) reach further still on every output, the
   weights are candidates too: int8 weights can limit a model as much as its activations
   (silero's STFT basis and encoder). The aim is all-16x8's SQNR - tolerance_db on every output:
   the accuracy of 16x8 everywhere, with fewer groups; on an output the caller feeds back
   (state_feedback) the SQNR of the best reach itself (with a metric: metric_target, or the best
   reach below it). Every output, not the lowest: when the lowest is another output (silero's
   recurrent state), the one the user reads (its probability) could lose more than the tolerance
   unseen.
3. the weights: when all int16 activations miss the aim (a state held to the 16x16 reach, a metric
   target beyond 16x8), each weight's loss when it alone is int8 in the all-16x16 graph; weights
   promoted in order of loss until all int16 activations meet the aim, then each demoted again if
   the aim still holds.
4. the groups, with those weights: each group's loss when it alone is int8 in the all-int16 graph
   (the most any output loses); groups promoted in order of loss until the aim is met, then each
   promoted group demoted again if the aim still holds. A weight stays int16 only where its op's
   group is (a 16x16 op reads and writes int16).
Groups with no int8 kernel (a fused magnitude) are int16 whenever anything is; groups whose int16
would leave a float op in the lowered graph (no int16 kernel, e.g. softmax) stay int8.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np

from . import gptq
from ..progress import bar
from .annotator import Group, annotate, check_state_feedback
from .calibrate import calibrate, sample_arrays, warn_if_few_samples
from .config import CortexMQuantizer
from .convert import convert
from .patterns import int16_only_patterns, int16_weight_patterns

META_KEY = "auto_precision"  # the summary, a JSON string on the quantized graph's first node
MIN_EVALUATION = 16  # calibration samples the score uses at least, when no evaluation samples are given
MIN_VALUES = 256  # values of each output those samples hold at least (when there are enough samples)


class _Frozen:
    """An observer's range, computed once (a histogram's L2 search is the slow part of convert)."""

    def __init__(self, observer):
        self.dtype = observer.dtype
        self.observed = observer.observed
        self._range = observer.range() if observer.observed else (None, None)
        self._qparams = observer.qparams() if observer.observed else None

    def range(self):
        return self._range

    def qparams(self):
        if self._qparams is None:
            raise ValueError("observer has seen no data")
        return self._qparams


def _dtype(group: Group) -> str:
    if group.below_mask is not None:
        return _dtype(group.below_mask)
    return group.fixed.dtype if group.fixed is not None else group.observer.dtype


def output_sqnrs_db(reference: list, outputs: list) -> tuple:
    """The SQNR of each of the graph's outputs; reference / outputs: per sample, a list of arrays."""
    sqnrs = []
    for k in range(len(reference[0])):
        ref = np.concatenate([np.asarray(r[k], np.float64).ravel() for r in reference])
        out = np.concatenate([np.asarray(o[k], np.float64).ravel() for o in outputs])
        noise = float(((ref - out) ** 2).sum())
        signal = float((ref ** 2).sum())
        sqnrs.append(10 * math.log10(max(signal, 1e-30) / max(noise, 1e-30)))
    return tuple(sqnrs)


def output_sqnr_db(reference: list, outputs: list) -> float:
    """The lowest SQNR over the graph's outputs."""
    return min(output_sqnrs_db(reference, outputs))


def evaluation_samples(graph, samples: list) -> list:
    """The first samples that hold MIN_VALUES values of every output (at least MIN_EVALUATION
    samples; all of them when they hold fewer)."""
    first = _as_list(graph.run(*sample_arrays(samples[0], graph.inputs, 0))) if samples else []
    fewest = min((max(np.asarray(o).size, 1) for o in first), default=MIN_VALUES)
    return samples[:max(MIN_EVALUATION, math.ceil(MIN_VALUES / fewest))]


def _as_list(outputs) -> list:
    return list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]


class _Search:
    def __init__(self, graph, samples, quantizer, evaluation, progress, lowering):
        self.progress, self.shown = progress, bar(desc="", enabled=False)
        self.graph = graph
        self.lowering = lowering
        self.quantizer = quantizer
        self.base = CortexMQuantizer(quantizer.activation_observer, quantizer.per_channel, "int8",
                                     fuse_magnitude=True)
        annotation = annotate(graph, self.base)
        self.roots = list(dict.fromkeys(g.root for g in annotation.groups.values()))
        bank = {root: {dtype: self.base.make_observer(dtype) for dtype in ("int8", "int16")} for root in self.roots}
        watchers = {}
        for root in self.roots:
            watchers.setdefault(root, []).extend(bank[root].values())
        statistics = gptq.collect(annotation)
        for stats, (node, index) in statistics.values():
            watchers.setdefault(node.inputs[index].name, []).append(stats)
        for group in annotation.observed_groups().values():
            group.observer = bank[group.root]["int8"]  # fed through watchers instead
            watchers[group.root].remove(group.observer)
        calibrate(graph, annotation, samples, progress, watchers)
        self.bank = {root: {d: _Frozen(o) for d, o in obs.items()} for root, obs in bank.items()}
        self.statistics = {use: stats for use, (stats, _) in statistics.items()}
        self.gptq_determined = any(s.determined for s in self.statistics.values())
        # Groups of matches with no int8 kernel: int16 whenever anything is.
        self.required = set()
        int16_only = int16_only_patterns()
        for match in annotation.matches:
            if match.pattern in int16_only:
                self.required.update(annotation.groups[n.inputs[i].name].root for n, i in match.activations)
                self.required.update(annotation.groups[name].root for name in match.outputs)
        self.candidates = [r for r in self.roots if r not in self.required]
        # Weights that can be int16 (conv / linear): weight name -> the root of its op's group.
        self.weight_groups = {}
        int16_patterns = int16_weight_patterns()
        for match in annotation.matches:
            if match.pattern.split("+")[0] in int16_patterns and match.outputs:
                root = annotation.groups[next(iter(match.outputs))].root
                for use in match.weights:
                    self.weight_groups[use.node.inputs[use.index].name] = root
        self.rounding_cache = {}
        self.evaluation = [sample_arrays(s, graph.inputs, i) for i, s in enumerate(evaluation)]
        self.reference = [_as_list(graph.run(*arrays)) for arrays in self.evaluation]
        self.evaluations = 0

    def convert(self, int16: frozenset, rounding: str, weights: frozenset = frozenset()):
        """The graph with the groups of `int16` in int16, the rest int8, and the weights of
        `weights` whose op's group is int16 in int16."""
        quantizer = CortexMQuantizer(self.base.activation_observer, self.base.per_channel, "int8",
                                     int16_activations=int16, fuse_magnitude=True,
                                     int16_weights=self.applicable(weights, int16))
        annotation = annotate(self.graph, quantizer)
        for group in annotation.observed_groups().values():
            group.observer = self.bank[group.root][group.observer.dtype]
        edges = {}
        for match in annotation.matches:
            if not match.outputs:
                continue
            dtype = _dtype(annotation.groups[next(iter(match.outputs))])
            for node, index in match.activations:
                if (node.name, index) in annotation.edge_groups:
                    continue  # requantized to the op's output qparams already (cat)
                source = annotation.groups[node.inputs[index].name]
                if _dtype(source) != dtype:
                    key = (source.root, dtype)
                    if key not in edges:
                        edges[key] = Group(source.root, observer=self.bank[source.root][dtype])
                        edges[key].includes = source.includes  # a constant pad's value, as the source's
                    annotation.edge_groups[(node.name, index)] = edges[key]
        statistics = self.statistics if rounding == "gptq" else {}
        return convert(self.graph, annotation, quantizer, statistics, self.rounding_cache)

    def applicable(self, weights, int16) -> frozenset:
        """The weights whose op's group is in int16 (a 16x16 op reads and writes int16)."""
        return frozenset(w for w in weights if self.weight_groups[w] in int16)

    def score(self, qgraph) -> tuple:
        """Per output SQNRs (dB), or (metric,)."""
        self.evaluations += 1
        self.shown.update()
        if self.quantizer.metric is not None:
            value = self.quantizer.metric(qgraph)
            try:
                score = float(value)
            except (TypeError, ValueError):
                score = math.nan
            if not math.isfinite(score):
                raise ValueError(f"metric returned {value!r} for a quantized graph: it must return a finite "
                                 f"number (higher is better) for every graph auto tries")
            return (score,)
        outputs = [_as_list(qgraph.run(*arrays)) for arrays in self.evaluation]
        return output_sqnrs_db(self.reference, outputs)

    def run(self):
        with bar(desc="precision auto: int8 and 16x8", unit="graph", enabled=self.progress) as self.shown:
            return self._search()

    def stage(self, what: str, graphs: int | None = None) -> None:
        """The progress bar's next stage: what it scores, and how many graphs when known."""
        self.shown.reset(total=graphs)
        self.shown.set_description_str(f"precision auto: {what}")

    def _search(self):
        q = self.quantizer
        target = q.metric_target if q.metric is not None else q.target_sqnr_db
        everything = frozenset(self.roots)
        tried = {}
        none = frozenset()

        def evaluate(int16, rounding, weights=none):
            """(scores per output, qgraph); weights: int16 weights (those of int16 groups count)."""
            int16 = frozenset(int16)
            weights = self.applicable(weights, int16)
            key = (int16, weights, rounding)
            if key not in tried:
                qgraph = self.convert(int16, rounding, weights)
                tried[key] = (self.score(qgraph), qgraph)
            return tried[key]

        roundings = ["nearest"] + (["gptq"] if self.gptq_determined else [])
        summary = {"target": target, "metric": "sqnr_db" if q.metric is None else "metric",
                   "groups": len(self.roots), "promoted": {}, "required": sorted(self.required),
                   "weights": len(self.weight_groups), "promoted_weights": {}}
        for rounding in roundings:
            scores, qgraph = evaluate(none, rounding)
            summary.setdefault("int8", min(scores))
            if min(scores) >= target:
                return self.finish(qgraph, none, none, rounding, scores, summary, "int8 meets the target")
        lowerable = self.lowerable()
        everything = frozenset(self.required) | frozenset(lowerable)
        reach = {r: evaluate(everything, r)[0] for r in roundings}
        # GPTQ costs nothing at run time: take it whenever it reaches further.
        rounding = max(roundings, key=lambda r: min(reach[r]))
        summary["all_16x8"] = min(reach[rounding])
        summary["all_16x8_outputs"] = list(reach[rounding])
        int8_scores = evaluate(none, rounding)[0]
        gain = max(r - s for r, s in zip(reach[rounding], int8_scores))  # on the output it helps most
        if q.metric is None and gain < q.min_gain_db:
            qgraph = evaluate(none, rounding)[1]
            return self.finish(qgraph, none, none, rounding, int8_scores, summary,
                               f"16x8 everywhere gains only {gain:.1f} dB "
                               f"(< min_gain_db {q.min_gain_db}): activation precision does not limit this model")
        best = reach[rounding]
        all_weights = self.lowerable_weights(everything)
        if all_weights:
            with_weights = evaluate(everything, rounding, all_weights)[0]
            if all(w > r for w, r in zip(with_weights, best)):
                best = with_weights
                summary["all_16x16"] = min(with_weights)
                summary["all_16x16_outputs"] = list(with_weights)
            else:
                all_weights = none
        if q.metric is None:
            # All-16x8's accuracy on each output; the best reach's, whole, on a fed-back state.
            aim = tuple(b if k in q.state_feedback else min(b, r) - q.tolerance_db
                        for k, (b, r) in enumerate(zip(best, reach[rounding])))
        else:
            aim = (target if best[0] >= target else best[0],)
        summary["aim"] = list(aim)

        def meets(int16, weights) -> bool:
            return all(s >= a for s, a in zip(evaluate(int16, rounding, weights)[0], aim))

        def greedy(candidates, loss, fits) -> set:
            """The candidates, promoted in order of loss until fits(chosen), then each demoted
            again (least loss first) when it still fits without it."""
            chosen = set()
            for candidate in [None] + sorted(candidates, key=lambda c: -loss[c]):
                if candidate is not None:
                    chosen.add(candidate)
                if fits(chosen):
                    break
            for candidate in sorted(chosen, key=lambda c: loss[c]):
                if fits(chosen - {candidate}):
                    chosen.discard(candidate)
            return chosen

        # 1. The int16 weights all-int16 activations need to meet the aim (none when 16x8 does).
        loss = {}
        self.stage("each int16 weight alone in int8", len(all_weights))
        for weight in all_weights:
            alone = evaluate(everything, rounding, all_weights - {weight})[0]
            loss[weight] = max(b - s for b, s in zip(best, alone))
        weights = frozenset(greedy(all_weights, loss, lambda chosen: meets(everything, frozenset(chosen))))
        # 2. The groups, with those weights: each one's loss alone in int8 from all int16.
        reach_with = evaluate(everything, rounding, weights)[0]
        self.stage("each group alone in int8", len(lowerable))
        for root in lowerable:
            alone = evaluate(everything - {root}, rounding, weights)[0]
            loss[root] = max(r - s for r, s in zip(reach_with, alone))
        self.stage("the fewest int16 groups that meet the aim")
        chosen = greedy(lowerable, loss, lambda chosen: meets(frozenset(self.required) | frozenset(chosen), weights))
        int16 = frozenset(self.required) | frozenset(chosen)
        weights = self.applicable(weights, int16)
        scores, qgraph = evaluate(int16, rounding, weights)
        summary["promoted"] = {r: round(loss[r], 2) if r in loss else None for r in self.roots if r in int16}
        summary["promoted_weights"] = {w: round(loss[w], 2) for w in self.weight_groups if w in weights}
        summary["kept"] = {r: round(loss[r], 2) for r in lowerable if r not in int16}
        if q.metric is None:
            reason = f"int8 misses the target; every output within {q.tolerance_db} dB of all 16x8"
            if q.state_feedback:
                reason += (f"; the fed-back state (output {', '.join(map(str, sorted(q.state_feedback)))}) "
                           f"as accurate as all " + ("16x16" if all_weights else "16x8"))
        else:
            reason = "meets the target" if scores[0] >= target else f"target out of reach: aimed at {aim[0]:.2f}"
        if len(lowerable) < len(self.candidates):
            reason += f"; kept int8 (no int16 kernel): {', '.join(r for r in self.candidates if r not in lowerable)}"
        return self.finish(qgraph, int16, weights, rounding, scores, summary, reason)

    def float_ops(self, qgraph) -> list:
        """The float compute ops left when qgraph is lowered."""
        return self.lowering.float_ops(qgraph, self.quantizer.cost_target)

    def adding_no_float_op(self, candidates, graph_with) -> list:
        """The candidates whose promotion adds no float op to the lowered graph: all of them when
        graph_with(all of them) has no float op more than graph_with(none), else each tried alone."""
        candidates = list(candidates)
        if not candidates:
            return []
        baseline = len(self.float_ops(graph_with(frozenset())))
        if len(self.float_ops(graph_with(frozenset(candidates)))) <= baseline:
            return candidates
        return [c for c in candidates if len(self.float_ops(graph_with(frozenset({c})))) <= baseline]

    def lowerable(self) -> list:
        """The candidate groups whose int16 adds no float op (no int16 kernel, e.g. softmax)."""
        return self.adding_no_float_op(
            self.candidates, lambda groups: self.convert(frozenset(self.required) | groups, "nearest"))

    def lowerable_weights(self, everything) -> frozenset:
        """The weights of int16 groups whose int16 adds no float op (a 16x16 kernel lowers their op)."""
        weights = self.applicable(self.weight_groups, everything)
        return frozenset(self.adding_no_float_op(weights, lambda chosen: self.convert(everything, "nearest", chosen)))

    def finish(self, qgraph, int16, weights, rounding, scores, summary, reason):
        summary.update(score=min(scores), outputs=list(scores), weight_rounding=rounding, reason=reason, evaluations=self.evaluations,
                       int16=sorted(int16), int16_weights=sorted(weights))
        target = self.quantizer.cost_target
        arena, constants, floats, instructions = {}, {}, {}, {}
        for label, groups in (("int8", frozenset()), ("auto", int16), ("16x8", frozenset(self.roots))):
            graph = qgraph if label == "auto" else self.convert(groups, rounding)
            costs = self.lowering.costs(graph, target, list(self.evaluation[0]) if self.quantizer.count_instructions
                                        else None)
            floats[label], arena[label], constants[label] = costs.float_ops, costs.arena, costs.constants
            if self.quantizer.count_instructions:
                instructions[label] = costs.instructions
        summary.update(arena=arena, constants=constants, cost_target=target, float_ops=floats["auto"])
        if self.quantizer.count_instructions:
            summary["instructions"] = instructions
        if floats["auto"] and len(floats["auto"]) > len(floats["int8"]):
            warnings.warn(f"precision='auto': the chosen graph lowers with float ops {floats['auto']}")
        first = qgraph.nodes[0]
        first.set_meta(META_KEY, json.dumps(summary))
        return qgraph


def quantize_auto(graph, calibration, quantizer, progress: bool, lowering):
    """The search above. lowering (cortexm.auto_precision.LOWERING) lowers the candidates, the
    quantizer sits below the lowering and imports none of it:
    - lowering.float_ops(qgraph, target): the float compute ops left when qgraph is lowered, sorted;
    - lowering.costs(qgraph, target, inputs): a Costs of qgraph lowered for target (its float ops,
      arena and constant bytes, None when it has no program; executed instructions on the
      target's core for inputs, None without inputs)."""
    if calibration is None or not hasattr(calibration, "__iter__"):
        raise ValueError(f"calibration must be an iterable of input tuples, got {type(calibration).__name__}")
    samples = list(calibration)
    warn_if_few_samples(len(samples), "auto")
    check_state_feedback(graph, quantizer.state_feedback)
    evaluation = quantizer.evaluation if quantizer.evaluation is not None else evaluation_samples(graph, samples)
    return _Search(graph, samples, quantizer, list(evaluation), progress, lowering).run()
