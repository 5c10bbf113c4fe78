"""docs/ops.md is what cortexm.ops_matrix generates, and every cell of it is what the pipeline does:
each row's sample module goes through export, to_program (float), quantize and lower (int8, 16x8)
and to_program; a claim that fails and a "no" that works are both failures."""

from pathlib import Path

import numpy as np
import pytest

import cortexm

torch = pytest.importorskip("torch")

from cortexm import ops_matrix  # noqa: E402
from cortexm._export.converter import op_name  # noqa: E402
from cortexm.ops import _matrix  # noqa: E402
from cortexm.quantizer.reciprocal_division import divisions_as_reciprocals  # noqa: E402

DOC = Path(__file__).resolve().parents[2] / "docs" / "ops.md"
COMMAND = "PYTHONPATH=python python -m cortexm.ops_matrix --output docs/ops.md"


def test_docs_ops_md_is_generated():
    assert DOC.read_text() == ops_matrix.matrix(), f"docs/ops.md is stale: regenerate it with `{COMMAND}`"


def test_rows_are_one_per_sample_and_labels_unique():
    labels = [s.label for s in ops_matrix.SAMPLES]
    assert len(labels) == len(set(labels))
    assert len({s.row for s in ops_matrix.SAMPLES}) == len(ops_matrix.SAMPLES), "two samples share a row key"


def test_lowering_facts_say_what_the_converters_do_not():
    """LOWERING is the converters' ops with the families' facts: a missing kernel is of an op with a
    converter, an op lowered by another pass has none of its own, a refusal is of a lowered op."""
    converters = _matrix.converter_ops()
    assert {"aten.convolution.default", "aten.linear.default", "aten.sigmoid.default"} <= converters
    for precision in ops_matrix.PRECISIONS:
        assert _matrix.NO_KERNEL[precision] <= converters
        assert not _matrix.BY_PASS[precision] & converters
        assert _matrix.BY_PASS[precision] <= set(cortexm.registered_ops())
        assert set(ops_matrix.NOT_LOWERED[precision]) <= ops_matrix.LOWERING[precision]


def deploys(graph, samples, precision: str) -> bool:
    """quantize + lower + to_program with no float op."""
    try:
        qgraph = cortexm.quantize(graph, samples, progress=False, precision=precision)
        program = cortexm.to_program(cortexm.lower(qgraph))
    except (NotImplementedError, ValueError):
        return False
    return program.float_ops == 0


def quantizes(graph, samples, ops) -> bool:
    """Every node of the sample's ops (or of what the quantizer rewrites them into) is quantized."""
    ops = set(ops) | {n.op for n in divisions_as_reciprocals(graph).nodes}
    try:
        qgraph = cortexm.quantize(graph, samples, progress=False, precision="int8")
    except (NotImplementedError, ValueError):
        return False
    rows = [r for r in cortexm.quantization_report(qgraph).rows if r.op in ops]
    return bool(rows) and all(r.quantization == "quantized" for r in rows)


@pytest.mark.parametrize("sample", ops_matrix.SAMPLES, ids=lambda s: s.label)
def test_every_cell_is_what_the_pipeline_does(sample):
    inputs = ops_matrix.sample_inputs(sample)
    captured = {op_name(n.target) for n in ops_matrix.captured(sample).graph.nodes if n.op == "call_function"}
    assert sample.aten in captured, f"the sample of {sample.label} captures as {sorted(captured)}"
    row = ops_matrix.claims(sample)
    try:
        graph = ops_matrix.exported(sample).copy()
    except cortexm.UnsupportedError as e:
        assert sample.aten in {op for op, _, _ in e.problems}
        assert not row.exports, f"{sample.label}: the matrix says it exports: {e}"
        return
    assert row.exports, f"{sample.label} exports; the matrix says it does not"
    assert row.graph_ops == list(dict.fromkeys(n.op for n in graph.nodes))

    arrays = [x.numpy() for x in inputs]
    try:
        program = cortexm.to_program(graph)
    except NotImplementedError:
        runs = False
    else:
        runs = True
        expected, got = graph.run(*arrays), program.run(*arrays)
        expected, got = (x if isinstance(x, tuple) else (x,) for x in (expected, got))
        for e, g in zip(expected, got):
            np.testing.assert_array_equal(g, e)  # the portable kernels: bit-exact with the interpreter
    assert runs == row.float_fallback, f"{sample.label}: runs as float fallback: {runs}, the matrix: {row.float_fallback}"

    calibration = [ops_matrix.sample_inputs(sample, seed) for seed in range(3)]
    assert quantizes(graph, calibration, row.graph_ops) == row.quantizes, f"{sample.label}: quantizes"
    for precision in ops_matrix.PRECISIONS:
        assert deploys(graph, calibration, precision) == row.lowers[precision], f"{sample.label}: lowers to {precision}"
