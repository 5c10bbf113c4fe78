"""quantization_report(qgraph): every compute node, quantized or float, with its qparams and, for a
float one, the reason. print(report) shows a summary by op kind (how many nodes of each op run
int8, 16x8 or float), then a row per node; report.rows holds the data."""

from __future__ import annotations

import collections
import json
from dataclasses import dataclass

from .. import _core
from ..escape import printable
from ..qdq import QDQ_OPS

_QUANTIZE_OPS = frozenset(op for op in QDQ_OPS if ".quantize_" in op)
_DEQUANTIZE_OPS = QDQ_OPS - _QUANTIZE_OPS


@dataclass
class ReportRow:
    node: str
    op: str
    quantization: str  # 'quantized' | 'float'
    pattern: str  # '' for a node that is not quantized
    inputs: list  # per present input: qparams dict of the dequantize it reads; None: float or fused
    outputs: list  # per output: qparams dict of the quantize reading it; None: float or fused into a tail
    reason: str  # why the node stays float ('' when quantized)
    # How it runs: 'int8', '16x8' (int16 activations, int8 weights), '16x16' (int16 weights too),
    # 'int8 table' / '16x8 table' (an elementwise op lowering turns into a lookup table), 'float'
    # (float compute: a float fallback op of the program), 'float copy' (data movement of float
    # values: no arithmetic) or 'constant' (data movement of constants: folded at lowering).
    kind: str = ""

    @property
    def precision(self) -> str:
        """'int8', '16x8', '16x16', 'float', 'float copy' or 'constant' (kind without ' table')."""
        return self.kind[:-len(" table")] if self.kind.endswith(" table") else self.kind


# 16x16, float copy and constant are shown only when a node is.
KINDS = ("int8", "16x8", "16x16", "float", "float copy", "constant")
_DATA_MOVEMENT = frozenset(_core.ops_with("is_data_movement"))
# Lowered ops that are lookup tables: the registered ops reading a `table` input.
_TABLE_OPS = frozenset(op for op in _core.registered_ops()
                       if any(i.name == "table" for i in _core.op_info(op).inputs))


def _op_label(op: str) -> str:
    """'aten.div.Scalar' -> 'div.Scalar', 'cortex_m.quantized_conv2d.default' -> 'quantized_conv2d'."""
    parts = op.split(".")
    if len(parts) >= 3:
        return parts[1] if parts[2] == "default" else f"{parts[1]}.{parts[2]}"
    return op


def _kind(node, status: str, inputs: list, outputs: list, constant_values: set) -> str:
    if status != "quantized":
        if node.op not in _DATA_MOVEMENT:
            return "float"
        present = [v for v in node.inputs if v is not None]
        return "constant" if all(v.name in constant_values for v in present) else "float copy"
    dtypes = [q["dtype"] for q in outputs + inputs if q is not None and "scale" in q]
    dtypes += [v.dtype for v in list(node.outputs) + [v for v in node.inputs if v is not None]
               if v.dtype in ("int8", "int16") and v.qparams is not None and len(v.qparams["scales"]) == 1]
    precision = "16x8" if "int16" in dtypes else "int8"
    if "s16w16" in node.op or any(q is not None and "scales" in q and q["dtype"] == "int16" for q in inputs):
        precision = "16x16"  # a lowered 16x16 op, or an int16 per-channel weight
    table = node.op in _TABLE_OPS or _core.is_table_activation(node.op)
    return f"{precision} table" if table else precision


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


def _value_qparams(value):
    """The qparams of an integer value read as it is (a lowered graph's), as _qparams gives them; None
    for a float value."""
    q = value.qparams
    if value.dtype not in ("int8", "int16", "int32", "int64") or q is None:
        return None
    if len(q["scales"]) == 1 and q["axis"] < 0:
        return {"dtype": value.dtype, "scale": q["scales"][0], "zero_point": q["zero_points"][0]}
    return {"dtype": value.dtype, "scales": list(q["scales"]), "zero_points": list(q["zero_points"]), "axis": q["axis"]}


def _format_list(qparams: list, missing: str) -> str:
    """The qparams, a run of equal ones as one entry with its count (a cat of 50 inputs: one entry)."""
    cells = [_format(q, missing) for q in qparams]
    runs = []
    for cell in cells:
        if runs and runs[-1][0] == cell:
            runs[-1][1] += 1
        else:
            runs.append([cell, 1])
    return ", ".join(cell if n == 1 else f"{cell} x{n}" for cell, n in runs)


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
        weights = (f"{len(s.get('int16_weights', ()))} of {s['weights']} conv / linear weights int16, "
                   if s.get("weights") else "")
        lines = [f"precision auto: {len(s['int16'])} of {s['groups']} activation groups int16, {weights}int8 weights "
                 f"{s['weight_rounding']}; {what} {s['score']:.2f}{unit} (target {s['target']:.2f}{unit}; "
                 f"all int8 {s['int8']:.2f}" + (f", all 16x8 {s['all_16x8']:.2f}" if "all_16x8" in s else "")
                 + (f", all 16x16 {s['all_16x16']:.2f}" if "all_16x16" in s else "") + f"): {s['reason']}"]
        if len(s.get("outputs", ())) > 1:
            per_output = lambda v: " / ".join(f"{x:.2f}" for x in v)
            lines.append(f"  per output: {per_output(s['outputs'])}{unit}" + (
                f" (all 16x8 {per_output(s['all_16x8_outputs'])})" if "all_16x8_outputs" in s else ""))
        if "all_16x16_outputs" in s and len(s.get("outputs", ())) > 1:
            lines[-1] += f" (all 16x16 {per_output(s['all_16x16_outputs'])})"
        if "aim" in s and s["promoted"]:
            lines.append("  aim per output: " + " / ".join(f"{a:.2f}" for a in s["aim"]) + unit)
        for root, loss in s["promoted"].items():
            why = "no int8 kernel" if loss is None else f"alone in int8 loses {loss:.2f}{unit}"
            lines.append(f"  int16 {printable(root)}: {why}")
        for root, loss in s.get("kept", {}).items():
            lines.append(f"  int8 {printable(root)}: alone in int8 loses {loss:.2f}{unit}; the aim holds without it")
        for weight, loss in s.get("promoted_weights", {}).items():
            lines.append(f"  int16 weight {printable(weight)}: alone in int8 loses {loss:.2f}{unit}")
        costs = lambda d: ", ".join(f"{k} {'n/a' if v is None else v}" for k, v in d.items())
        lines.append(f"  arena bytes ({s['cost_target']}): {costs(s['arena'])}"
                     + (f"; constant bytes: {costs(s['constants'])}" if "constants" in s else "")
                     + f"; {s['evaluations']} graphs scored")
        if "instructions" in s:
            lines.append(f"  instructions ({s['cost_target'].split('+')[0]}, QEMU, one sample): {costs(s['instructions'])}")
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
        """The float compute rows: the program's float fallback ops (Program.float_ops), not the
        data movement of float values or of constants."""
        return [r for r in self.rows if r.kind == "float"]

    def by_op(self) -> dict:
        """{op: Counter of kinds ('int8', '16x8', 'int8 table', ..., 'float')}, most nodes first."""
        counts = collections.defaultdict(collections.Counter)
        for r in self.rows:
            counts[r.op][r.kind] += 1
        return dict(sorted(counts.items(), key=lambda item: (-sum(item[1].values()), item[0])))

    def summary(self) -> str:
        """One line per op kind: how many of its nodes run int8, 16x8 and float (tables noted)."""
        total = collections.Counter(r.precision for r in self.rows)
        kinds_shown = [k for k in KINDS if k in ("int8", "16x8", "float") or total[k]]
        lines = [f"{len(self.rows)} compute nodes: " + ", ".join(f"{total[k]} {k}" for k in kinds_shown)
                 + f" ({len(self.quantized)} quantized, {len(self.float)} float)"]
        table = [("op", *kinds_shown, "")]
        for op, kinds in self.by_op().items():
            counts = collections.Counter()
            for kind, n in kinds.items():
                counts[kind[:-len(" table")] if kind.endswith(" table") else kind] += n
            tables = sum(n for kind, n in kinds.items() if kind.endswith(" table"))
            reasons = sorted({r.reason for r in self.rows if r.op == op and r.reason and r.kind != "constant"})
            note = ("lookup table" if tables == sum(kinds.values()) else f"{tables} lookup tables") if tables else ""
            if reasons:
                note = "; ".join(filter(None, [note, "float: " + reasons[0] + (
                    f" (+{len(reasons) - 1} other reasons)" if len(reasons) > 1 else "")]))
            if counts["constant"]:
                note = "; ".join(filter(None, [note, "constant: folded at lowering"]))
            table.append((printable(_op_label(op)), *(str(counts[k]) for k in kinds_shown), printable(note)))
        widths = [max(len(row[i]) for row in table) for i in range(len(kinds_shown) + 1)]
        for row in table:
            cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:-1], widths[1:])]
            lines.append(("  " + "  ".join(cells) + "  " + row[-1]).rstrip())
        return "\n".join(lines)

    def __str__(self) -> str:
        header = ("node", "op", "quantization", "pattern", "inputs", "outputs", "float reason")
        table = [header]
        for r in self.rows:
            missing = "fused" if r.quantization == "quantized" else "float"
            table.append((printable(r.node), printable(r.op), r.kind, printable(r.pattern), _format_list(r.inputs, missing),
                          _format_list(r.outputs, missing), printable(r.reason)))
        widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
        lines = [self.summary(), ""]
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
    # Constants and what data movement makes of them alone (folded at lowering).
    constant_values = {v.name for n in qgraph.nodes for v in n.inputs if v is not None and v.kind == "constant"}
    for node in qgraph.nodes:
        if (node.op in _DATA_MOVEMENT or node.op in QDQ_OPS) and all(
                v.name in constant_values for v in node.inputs if v is not None):
            constant_values.update(o.name for o in node.outputs)
        if node.op in QDQ_OPS:
            continue
        present = [v for v in node.inputs if v is not None]
        inputs = [_qparams(v.producer) if v.producer is not None and v.producer.op in _DEQUANTIZE_OPS
                  else _value_qparams(v) for v in present]
        outputs = []
        for out in node.outputs:
            quantizes = [u for u in out.users if u.op in _QUANTIZE_OPS]
            outputs.append(_qparams(quantizes[0]) if quantizes else _value_qparams(out))
        meta = node.meta
        status = meta.get("quantization")
        if status is None:  # an op on integer activations (a lowered graph) is quantized
            on_integers = any(v.kind != "constant" and _value_qparams(v) is not None for v in present)
            float_inputs = [(v, q) for v, q in zip(present, inputs) if v.dtype == "float32"]
            ok = on_integers or (float_inputs and all(q is not None or v.name in fused for v, q in float_inputs))
            status = "quantized" if ok else "float"
        if status == "quantized":
            fused.update(o.name for o, q in zip(node.outputs, outputs) if q is None)
        kind = _kind(node, status, inputs, outputs, constant_values)
        reason = "data movement of constants: folded at lowering" if kind == "constant" else meta.get("float_reason", "")
        rows.append(ReportRow(node.name, node.op, status, meta.get("pattern", ""), inputs, outputs, reason, kind))
    nodes = qgraph.nodes
    summary = nodes[0].meta.get("auto_precision") if nodes else None
    return QuantizationReport(rows, PrecisionChoice(json.loads(summary)) if summary else None)
