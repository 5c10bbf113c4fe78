"""quantization_report's summary by op kind, and lookup-table ops shown as int8 / 16x8 tables."""

import pytest

import cortexm

torch = pytest.importorskip("torch")


class Tables(torch.nn.Module):
    """A conv, then elementwise ops the lowering turns into lookup tables."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return torch.sigmoid(self.conv(x) / 3.0) - 0.5


def calibration(n=3):
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(1, 3, 8, 8, generator=g),) for _ in range(n)]


@pytest.mark.parametrize("precision, kind", [("int8", "int8"), ("16x8", "16x8")])
def test_lookup_tables_are_not_float(precision, kind):
    graph = cortexm.export(Tables().eval(), calibration(1)[0])
    qgraph = cortexm.quantize(graph, calibration(), progress=False, precision=precision)
    report = cortexm.quantization_report(qgraph)
    kinds = {r.op: r.kind for r in report}
    assert kinds == {"aten.convolution.default": kind, "aten.div.Scalar": f"{kind} table",
                     "aten.sigmoid.default": f"{kind} table", "aten.sub.Scalar": f"{kind} table"}
    lines = str(report).splitlines()
    assert lines[0] == f"4 compute nodes: {4 * (kind == 'int8')} int8, {4 * (kind == '16x8')} 16x8, 0 float " \
                       f"(4 quantized, 0 float)"
    div = next(line for line in lines[:6] if line.split()[0] == "div.Scalar")
    assert div.split()[1:] == (["1", "0", "0"] if kind == "int8" else ["0", "1", "0"]) + ["lookup", "table"]
    assert any(" | div.Scalar" not in line and f"| {kind} table " in line and line.startswith("div ") for line in lines)

    # The lowered graph's report: the tables are quantized_activation ops on integers, not float;
    # its int8 clones are int8 too.
    lowered = cortexm.lower(qgraph)
    lowered_report = cortexm.quantization_report(lowered)
    assert not lowered_report.float
    tables = [r for r in lowered_report if r.kind == f"{kind} table"]
    assert len(tables) == 3 and {r.pattern for r in tables} == {"div", "sigmoid", "sub"}
    assert all(r.inputs[0]["dtype"] == ("int8" if kind == "int8" else "int16") for r in tables)


def test_lstm_report_starts_with_a_one_screen_summary():
    from test_lower_rnn import Recurrent, samples

    graph = cortexm.export(Recurrent("lstm", 1).eval(), samples((1, 50, 20), 1, 1)[0])
    report = cortexm.quantization_report(cortexm.quantize(graph, samples((1, 50, 20), 2, 2), progress=False))
    text = str(report)
    summary = report.summary().splitlines()
    assert text.startswith(report.summary() + "\n\n")
    assert len(summary) <= 24 and len(text.splitlines()) > 700
    columns = summary[1].split()[1:]  # int8, 16x8, float and, when a node has it, constant
    assert columns == ["int8", "16x8", "float", "constant"]  # the zero initial state: constants, folded
    counts = {line.split()[0]: [int(c) for c in line.split()[1:1 + len(columns)]] for line in summary[2:]}
    assert counts["sigmoid"] == [150, 0, 0, 0] and "lookup table" in next(l for l in summary if l.split()[0] == "sigmoid")
    assert counts["linear"] == [52, 0, 0, 0] and counts["cat"] == [1, 0, 0, 0]
    assert sum(sum(c) for c in counts.values()) == len(report)
    assert not report.float
    assert summary[0].startswith(f"{len(report)} compute nodes: {len(report) - 2} int8, 0 16x8, "
                                 f"{len(report.float)} float, 2 constant")
    # The 50-input cat is one entry with its count, not 50.
    cat = next(line for line in text.splitlines() if line.startswith("cat "))
    assert " x50" in cat and len(cat) < 300


def test_names_from_a_graph_file_are_escaped_in_every_report():
    """A graph (a .cmg from anywhere) names its values and nodes freely: the reports show control
    characters as escapes instead of sending them to the terminal."""
    import numpy as np

    from cortexm.aot import lowering_summary
    from cortexm.memory_plan import plan_memory

    g = cortexm.Graph()
    x = g.add_input("x\x1b[2J\n", [2, 8])
    g.outputs = [g.call("aten.linear.default", [x, g.add_constant("w", np.ones((4, 8), np.float32))],
                        name="fc\x1b]0;title\x07")]
    samples = [np.ones((2, 8), np.float32)]
    qgraph = cortexm.quantize(g, samples, progress=False)
    lowered = cortexm.lower(qgraph)
    comparison = cortexm.compare(g, lowered, samples)
    for text in (str(cortexm.quantization_report(qgraph)), lowering_summary(lowered), plan_memory(lowered).table(),
                 comparison.table(), repr(comparison)):
        assert "\x1b" not in text and "\x07" not in text
        assert all(line.isprintable() for line in text.splitlines()), text
    assert "x\\x1b[2J\\n" in comparison.table() and "fc\\x1b]0;title\\x07" in str(cortexm.quantization_report(qgraph))
