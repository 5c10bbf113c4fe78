"""Convert: an annotated, calibrated graph -> a new graph in convert_pt2e form.

- each quantized activation v: quantize_per_tensor -> dequantize_per_tensor right after its
  producer (graph inputs: at the start); every reader of v reads the dequantize instead;
- requantized edges (cat inputs): a second quantize -> dequantize with the reader's qparams;
- weights: int8 constants (value qparams set) behind dequantize_per_channel / _per_tensor,
  rounded to nearest or by GPTQ (gptq.py); those in quantizer.int16_weights int16 constants
  ([-32767, 32767]) rounded to nearest (16x16 layers, checked by _int16_weight_uses);
- biases: int32 constants, scale = input scale x weight scale, zero point 0, behind dequantize;
  int64 for an int16 weight (its scales are 2^8 finer: int32 could overflow);
- constant operands (`1 - x`): constants of the activations' dtype with qparams from their own
  min / max (0 included), behind dequantize; attention masks: int8 constants whose masked
  entries saturate the sum (_quantize_attention_masks).
Every original node gets meta 'quantization' ('quantized' | 'float'), and 'pattern' or
'float_reason'.
"""

from __future__ import annotations

import numpy as np

from ..progress import bar
from . import gptq
from .annotator import Annotation
from .patterns import int16_weight_patterns
from .observers import (INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, WEIGHT16_QMAX, WEIGHT16_QMIN, WEIGHT_QMAX,
                        WEIGHT_QMIN, QParams, qparams_from_min_max, quantize_array, quantize_bias, quantize_bias_int64,
                        quantize_weight)

QUANTIZE = "quantized_decomposed.quantize_per_tensor.default"
DEQUANTIZE = "quantized_decomposed.dequantize_per_tensor.default"
DEQUANTIZE_PER_CHANNEL = "quantized_decomposed.dequantize_per_channel.default"


def convert(graph, annotation: Annotation, quantizer, statistics: dict | None = None,
            rounding_cache: dict | None = None, progress: bool = False):
    """statistics: (weight-reading node name, input index) -> gptq.InputStatistics of the weights
    to round by GPTQ; the others round to nearest (and every int16 weight: quantizer.int16_weights,
    checked here). rounding_cache: a dict kept across converts of the same graph and statistics, so
    each weight is rounded once (precision='auto'); its keys tell int8 from int16 roundings.
    progress: a bar over the GPTQ roundings on a terminal."""
    int16_uses = _int16_weight_uses(annotation, quantizer.int16_weights)
    g = graph.copy()
    nodes = {n.name: n for n in g.nodes}
    _mark(nodes, annotation)
    _insert_activation_qdq(g, nodes, annotation)
    _insert_requantize(g, nodes, annotation)
    weight_scales = _quantize_weights(g, nodes, annotation, quantizer.per_channel, statistics or {},
                                      {} if rounding_cache is None else rounding_cache, int16_uses, progress)
    _quantize_biases(g, nodes, annotation, weight_scales, quantizer.per_channel, int16_uses)
    _quantize_constant_operands(g, nodes, annotation)
    _quantize_attention_masks(g, nodes, annotation)
    g.dead_code_elimination()  # drops the float weights and biases the int ones replaced
    g.verify()
    return g


def _mark(nodes: dict, annotation: Annotation) -> None:
    for match in annotation.matches:
        for n in match.nodes:
            node = nodes[n.name]
            node.set_meta("quantization", "quantized")
            node.set_meta("pattern", match.pattern)
    for name, reason in annotation.float_reasons.items():
        nodes[name].set_meta("quantization", "float")
        nodes[name].set_meta("float_reason", reason)


def _redirect(g, value, to, users) -> None:
    """`users` (and the graph outputs) read `to` instead of value."""
    for user in users:
        for i, v in enumerate(user.inputs):
            if v is not None and v == value:
                user.replace_input(i, to)
    outputs = g.outputs
    if any(o == value for o in outputs):
        g.outputs = [to if o == value else o for o in outputs]


def _qdq(g, value, qparams, before, source: str = "", name: str = ""):
    attrs, name = qparams.attrs(), name or value.name
    q = g.call(QUANTIZE, [value], attrs, name=f"{name}_q", source=source, before=before)
    return g.call(DEQUANTIZE, [q], attrs, name=f"{name}_dq", source=source, before=before)


def _insert_activation_qdq(g, nodes: dict, annotation: Annotation) -> None:
    order = [n.name for n in annotation.view.nodes]
    after = {name: (nodes[order[i + 1]] if i + 1 < len(order) else None) for i, name in enumerate(order)}
    first = nodes[order[0]] if order else None
    produced = [v.name for v in g.inputs] + [o.name for n in annotation.view.nodes for o in n.outputs]
    for name in produced:
        group = annotation.groups.get(name)
        if group is None:
            continue
        value = g.value(name)
        producer = value.producer
        before = after[producer.name] if producer is not None else first
        source = producer.source if producer is not None else ""
        users = value.users
        _redirect(g, value, _qdq(g, value, group.qparams(), before, source), users)


def _insert_requantize(g, nodes: dict, annotation: Annotation) -> None:
    done = {}
    for (node_name, index), group in annotation.edge_groups.items():
        node = nodes[node_name]
        original = annotation.view.match_of[node_name].nodes[0].inputs[index]
        source = annotation.groups.get(original.name)  # None: a constant, quantized to the edge's qparams
        if source is not None and source.qparams() == group.qparams():
            continue
        current = node.inputs[index]
        key = (current.name, id(group))
        if key not in done:
            done[key] = _qdq(g, current, group.qparams(), node, node.source, name=f"{node_name}_in{index}")
        node.replace_input(index, done[key])


def _int16_weight_uses(annotation: Annotation, names) -> set:
    """The weight uses (reading node name, input index) of the constants in names (int16_weights),
    each the weight of a match of a pattern registered with int16_weights (the conv / linear kernels
    with a 16x16 form) reading an int16 activation; ValueError naming the weight, the op and why for
    any other name."""
    int16_patterns = int16_weight_patterns()
    uses, found = set(), set()
    for match in annotation.matches:
        kind, op = match.pattern.split("+")[0], match.nodes[0]
        for use in match.weights:
            w = use.node.inputs[use.index]
            if w.name not in names:
                continue
            if kind not in int16_patterns:
                raise ValueError(f"int16_weights names '{w.name}', the weight of '{op.name}' ({op.op}, pattern "
                                 f"{kind}), which has no 16x16 form (only {', '.join(int16_patterns)})")
            x_node, x_index = match.activations[0]
            x = x_node.inputs[x_index]
            group = annotation.edge_groups.get((x_node.name, x_index)) or annotation.groups[x.name]
            if group.qparams().dtype != "int16":
                raise ValueError(f"int16_weights names '{w.name}', the weight of '{op.name}' ({op.op}), whose "
                                 f"input '{x.name}' is {group.qparams().dtype}: a 16x16 layer needs an int16 "
                                 f"activation (activation_dtype='int16' or int16_activations)")
            uses.add((use.node.name, use.index))
            found.add(w.name)
    graph = annotation.view.graph
    readers = {}
    for n in graph.nodes:
        for v in n.inputs:
            if v is not None:
                readers.setdefault(v.name, n)
    for name in sorted(set(names) - found):
        reader = readers.get(name)
        if reader is None:
            raise ValueError(f"int16_weights names '{name}', which is not a constant read by any op of the graph")
        why = annotation.float_reasons.get(reader.name)
        raise ValueError(f"int16_weights names '{name}', read by '{reader.name}' ({reader.op}), which is not the "
                         f"weight constant of a quantized conv / linear / addmm"
                         + (f" (the op stays float: {why})" if why else ""))
    return uses


def _quantize_weights(g, nodes: dict, annotation: Annotation, per_channel: bool, statistics: dict,
                      rounded: dict, int16_uses: set, progress: bool = False) -> dict:
    """Weights -> int8 constants behind a dequantize, rounded to nearest or, for the uses in
    statistics, by GPTQ; the uses in int16_uses int16 constants rounded to nearest (rounded:
    (weight, axis, statistics, dtype) -> (int data, scales), filled here). Returns
    {(node, index): float32 scales}."""
    cache, scales_of = {}, {}
    gptq_uses = sum(1 for s in statistics.values() if s.determined)
    shown = bar(desc="GPTQ rounding", unit="weight", total=gptq_uses, enabled=progress and gptq_uses > 0)
    for match in annotation.matches:
        for use in match.weights:
            node = nodes[use.node.name]
            w = node.inputs[use.index]
            axis = use.axis if per_channel else None
            dtype = "int16" if (use.node.name, use.index) in int16_uses else "int8"
            stats = statistics.get((use.node.name, use.index)) if dtype == "int8" else None
            qmin, qmax = (WEIGHT16_QMIN, WEIGHT16_QMAX) if dtype == "int16" else (WEIGHT_QMIN, WEIGHT_QMAX)
            key = (w.name, axis, id(stats), dtype)
            if key not in cache:
                if key not in rounded:
                    data, scales = quantize_weight(w.data, axis, dtype)
                    if stats is not None and stats.determined:
                        data = gptq.round_weight(w.data, axis, use.axis, scales, stats)
                        shown.update()
                    rounded[key] = (data, scales)
                data, scales = rounded[key]
                qparams = {"scales": scales.tolist(), "zero_points": [0] * scales.size,
                           "axis": -1 if axis is None else axis, "quant_min": qmin, "quant_max": qmax}
                cache[key] = (g.add_constant(f"{w.name}_{dtype}", data, qparams=qparams), scales)
            const, scales = cache[key]
            dq = _dequantize_const(g, const, scales, axis, qmin, qmax, dtype, node)
            node.replace_input(use.index, dq)
            scales_of[(node.name, use.index)] = scales
    shown.close()
    return scales_of


def _quantize_biases(g, nodes: dict, annotation: Annotation, weight_scales: dict, per_channel: bool,
                     int16_uses: set) -> None:
    """Biases -> int32 constants behind a dequantize; int64 for an int16 weight's."""
    for match in annotation.matches:
        for use in match.biases:
            node = nodes[use.node.name]
            b = node.inputs[use.index]
            x_node, x_index = use.input_edge
            group = annotation.edge_groups.get((x_node.name, x_index)) or annotation.groups[x_node.inputs[x_index].name]
            weight_edge = (use.weight_edge[0].name, use.weight_edge[1])
            w_scales = weight_scales[weight_edge]
            if weight_edge in int16_uses:
                data, scales = quantize_bias_int64(b.data, group.qparams().scale, w_scales,
                                                   f"bias '{b.name}' of '{node.name}'")
                dtype, qmin, qmax = "int64", INT64_MIN, INT64_MAX
            else:
                data, scales = quantize_bias(b.data, group.qparams().scale, w_scales)
                dtype, qmin, qmax = "int32", INT32_MIN, INT32_MAX
            axis = 0 if per_channel else None
            qparams = {"scales": scales.tolist(), "zero_points": [0] * scales.size,
                       "axis": -1 if axis is None else axis, "quant_min": qmin, "quant_max": qmax}
            const = g.add_constant(f"{b.name}_{dtype}", data, qparams=qparams)
            dq = _dequantize_const(g, const, scales, axis, qmin, qmax, dtype, node)
            node.replace_input(use.index, dq)


def _quantize_constant_operands(g, nodes: dict, annotation: Annotation) -> None:
    for match in annotation.matches:
        for node_ref, index in match.constants:
            node = nodes[node_ref.name]
            c = node.inputs[index]
            data = np.asarray(c.data, dtype=np.float32)
            # The constant takes the dtype of the activation it is combined with.
            (other_node, other_index), = [e for e in match.activations if e[0].name == node_ref.name]
            dtype = annotation.groups[other_node.inputs[other_index].name].qparams().dtype
            q = qparams_from_min_max(float(data.min()) if data.size else 0.0,
                                     float(data.max()) if data.size else 0.0, dtype)
            ints = quantize_array(data, q.scale, q.zero_point, q.quant_min, q.quant_max).astype(dtype)
            const = g.add_constant(f"{node.name}_{c.name}_{dtype}", ints, qparams=q.as_value_qparams())
            dq = g.call(DEQUANTIZE, [const], q.attrs(), name=f"{const.name}_dq", source=node.source, before=node)
            node.replace_input(index, dq)


def _quantize_attention_masks(g, nodes: dict, annotation: Annotation) -> None:
    """An attention mask (0 / MASKED) -> int8: 0 at zero point 127 (exact: adds nothing), MASKED
    at -128 with a scale making it at least the distance from the scores' maximum to the sum's
    minimum, so a masked entry saturates the sum to its int8 minimum."""
    for match in annotation.matches:
        for node_ref, index in match.masks:
            node = nodes[node_ref.name]
            c = node.inputs[index]
            scores = annotation.groups[node_ref.inputs[1 - index].name].qparams()
            out = annotation.groups[node_ref.outputs[0].name].qparams()
            hi = (scores.quant_max - scores.zero_point) * scores.scale
            lo = (out.quant_min - out.zero_point) * out.scale
            scale = float(np.float32(1.01 * (hi - lo + out.scale) / 255.0))
            q = QParams(scale, 127, -128, 127, "int8")
            ints = np.where(np.asarray(c.data) == 0, 127, -128).astype(np.int8)
            const = g.add_constant(f"{node.name}_{c.name}_int8", ints, qparams=q.as_value_qparams())
            dq = g.call(DEQUANTIZE, [const], q.attrs(), name=f"{const.name}_dq", source=node.source, before=node)
            node.replace_input(index, dq)


def _dequantize_const(g, const, scales: np.ndarray, axis, qmin: int, qmax: int, dtype: str, before):
    if axis is None:
        attrs = {"scale": float(scales[0]), "zero_point": 0, "quant_min": qmin, "quant_max": qmax, "dtype": dtype}
        op = DEQUANTIZE
    else:
        attrs = {"scales": [float(s) for s in scales], "zero_points": [0] * len(scales), "axis": axis,
                 "quant_min": qmin, "quant_max": qmax, "dtype": dtype}
        op = DEQUANTIZE_PER_CHANNEL
    return g.call(op, [const], attrs, name=f"{const.name}_dq", source=before.source, before=before)
