"""quantization_report(qgraph): every compute node, quantized or float, with its qparams and, for a
float one, the reason. print(report) shows a table; report.rows holds the data."""

from __future__ import annotations

import json
from dataclasses import dataclass

QDQ_OPS = frozenset({
    "quantized_decomposed.quantize_per_tensor.default", "quantized_decomposed.dequantize_per_tensor.default",
    "quantized_decomposed.quantize_per_channel.default", "quantized_decomposed.dequantize_per_channel.default",
    "cortex_m.quantize_per_tensor.default", "cortex_m.dequantize_per_tensor.default",
})
_QUANTIZE_OPS = frozenset(op for op in QDQ_OPS if ".quantize_" in op)
_DEQUANTIZE_OPS = QDQ_OPS - _QUANTIZE_OPS


@dataclass
class ReportRow:
    node: str
    op: str
    quantization: str  # 'quantized' | 'float'
    pattern: str  # '' for a float node
    inputs: list  # per present input: qparams dict of the dequantize it reads; None: float or fused
    outputs: list  # per output: qparams dict of the quantize reading it; None: float or fused into a tail
    reason: str  # why the node stays float ('' when quantized)


def _qparams(node) -> dict:
    a = node.attrs
    if "scales" in a:
        return {"dtype": a["dtype"], "scales": list(a["scales"]), "zero_points": list(a["zero_points"]),
                "axis": a["axis"]}
    return {"dtype": a["dtype"], "scale": a["scale"], "zero_point": a["zero_point"]}


def _format(q, missing: str = "float") -> str:
    if q is None:
        return missing
    if "scales" in q:
        return f"{q['dtype']} per-channel[{len(q['scales'])}]"
    return f"{q['dtype']} s={q['scale']:.4g} zp={q['zero_point']}"


@dataclass
class PrecisionChoice:
    """What precision='auto' chose (auto.py), from the quantized graph's meta."""

    summary: dict

    @property
    def promoted(self) -> list:
        """The int16 groups (their root values), in execution order."""
        return list(self.summary["promoted"])

    def __str__(self) -> str:
        s = self.summary
        unit = " dB" if s["metric"] == "sqnr_db" else ""
        what = "output SQNR" if s["metric"] == "sqnr_db" else "metric"
        lines = [f"precision auto: {len(s['int16'])} of {s['groups']} activation groups int16, weights "
                 f"{s['weight_rounding']}; {what} {s['score']:.2f}{unit} (target {s['target']:.2f}{unit}; "
                 f"all int8 {s['int8']:.2f}" + (f", all 16x8 {s['all_16x8']:.2f}" if "all_16x8" in s else "")
                 + f"): {s['reason']}"]
        if len(s.get("outputs", ())) > 1:
            per_output = lambda v: " / ".join(f"{x:.2f}" for x in v)
            lines.append(f"  per output: {per_output(s['outputs'])}{unit}" + (
                f" (all 16x8 {per_output(s['all_16x8_outputs'])})" if "all_16x8_outputs" in s else ""))
        for root, loss in s["promoted"].items():
            why = "no int8 kernel" if loss is None else f"alone in int8 loses {loss:.2f}{unit}"
            lines.append(f"  int16 {root}: {why}")
        arena = s["arena"]
        lines.append("  arena bytes (" + s["cost_target"] + "): " + ", ".join(
            f"{k} {'n/a' if v is None else v}" for k, v in arena.items()) + f"; {s['evaluations']} graphs scored")
        return "\n".join(lines)


class QuantizationReport:
    def __init__(self, rows: list, precision: PrecisionChoice | None = None):
        self.rows = rows
        self.precision = precision  # precision='auto''s choice, None otherwise

    def __iter__(self):
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, node_name: str) -> ReportRow:
        for row in self.rows:
            if row.node == node_name:
                return row
        raise KeyError(node_name)

    @property
    def quantized(self) -> list:
        return [r for r in self.rows if r.quantization == "quantized"]

    @property
    def float(self) -> list:
        return [r for r in self.rows if r.quantization != "quantized"]

    def __str__(self) -> str:
        header = ("node", "op", "quantization", "pattern", "inputs", "outputs", "float reason")
        table = [header]
        for r in self.rows:
            missing = "fused" if r.quantization == "quantized" else "float"
            table.append((r.node, r.op, r.quantization, r.pattern, ", ".join(_format(q, missing) for q in r.inputs),
                          ", ".join(_format(q, missing) for q in r.outputs), r.reason))
        widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
        lines = []
        for k, row in enumerate(table):
            cells = [cell.ljust(w) for cell, w in zip(row, widths)] + [row[-1]]
            lines.append(" | ".join(cells).rstrip())
            if k == 0:
                lines.append("-+-".join("-" * w for w in widths) + "-+-" + "-" * len(header[-1]))
        lines.append(f"{len(self.rows)} compute nodes: {len(self.quantized)} quantized, {len(self.float)} float")
        if self.precision is not None:
            lines.append(str(self.precision))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<QuantizationReport {len(self.quantized)} quantized, {len(self.float)} float>"


def quantization_report(qgraph) -> QuantizationReport:
    """Rows for every node that is not a quantize / dequantize, in execution order. A node without
    quantization meta (a graph quantized elsewhere) counts as quantized when each of its float
    inputs comes from a dequantize or from a quantized node whose output is not quantized (a fused
    activation tail)."""
    rows = []
    fused = set()  # values of quantized nodes that feed a tail without quantize / dequantize
    for node in qgraph.nodes:
        if node.op in QDQ_OPS:
            continue
        present = [v for v in node.inputs if v is not None]
        inputs = [_qparams(v.producer) if v.producer is not None and v.producer.op in _DEQUANTIZE_OPS else None
                  for v in present]
        outputs = []
        for out in node.outputs:
            quantizes = [u for u in out.users if u.op in _QUANTIZE_OPS]
            outputs.append(_qparams(quantizes[0]) if quantizes else None)
        meta = node.meta
        status = meta.get("quantization")
        if status is None:
            float_inputs = [(v, q) for v, q in zip(present, inputs) if v.dtype == "float32"]
            ok = float_inputs and all(q is not None or v.name in fused for v, q in float_inputs)
            status = "quantized" if ok else "float"
        if status == "quantized":
            fused.update(o.name for o, q in zip(node.outputs, outputs) if q is None)
        rows.append(ReportRow(node.name, node.op, status, meta.get("pattern", ""), inputs, outputs,
                              meta.get("float_reason", "")))
    nodes = qgraph.nodes
    summary = nodes[0].meta.get("auto_precision") if nodes else None
    return QuantizationReport(rows, PrecisionChoice(json.loads(summary)) if summary else None)
