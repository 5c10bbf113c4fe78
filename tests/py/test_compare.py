"""cortexm.compare: per-layer error of the int8 model against the float one."""

import math

import numpy as np
import pytest

import cortexm
import zoo

pytest.importorskip("torch")


def samples(name, n, seed=1):
    _, _, calibration, _ = zoo.exported(name)
    return [tuple(x.numpy() for x in s) for s in calibration(n, seed=seed)]


@pytest.fixture(scope="module")
def ds_cnn():
    return zoo.exported("ds_cnn")[3], zoo.lowered("ds_cnn"), samples("ds_cnn", 2)


def test_every_lowered_op_is_matched_and_rows_are_worst_first(ds_cnn):
    graph, lowered, inputs = ds_cnn
    result = cortexm.compare(graph, lowered, inputs)
    compute = [n for n in lowered.nodes if n.op.startswith("cortex_m.quantized_")]
    assert {n.name for n in compute} <= {r.node for r in result}
    assert result["x"].op == "input" and result["x"].step == -1
    layer = [r.layer_sqnr_db for r in result]
    assert layer == sorted(layer)
    assert all(math.isfinite(r.sqnr_db) and r.max_abs_error > 0 for r in result if r.op != "view_copy")
    assert result.samples == 2 and "worst layer SQNR first" in str(result)
    by_model = cortexm.compare(graph, lowered, inputs, sort_by="model")
    assert [r.sqnr_db for r in by_model] == sorted(r.sqnr_db for r in result)
    in_order = cortexm.compare(graph, lowered, inputs, sort_by="order")
    assert [r.step for r in in_order] == sorted(r.step for r in result)


def test_sqnr_and_max_error_are_those_of_the_tensors(ds_cnn):
    """The input row against the input quantized by hand; the output row against the program's output."""
    graph, lowered, inputs = ds_cnn
    x = inputs[0][0]
    result = cortexm.compare(graph, lowered, x)
    q = lowered.nodes[0]
    assert q.op == "cortex_m.quantize_per_tensor.default"
    scale, zp = q.attrs["scale"], q.attrs["zero_point"]
    xq = cortexm.ops.quantize_per_tensor(x, scale, zp, -128, 127, "int8")
    error = x.astype(np.float64) - (xq.astype(np.float64) - zp) * scale
    row = result["x"]
    assert row.max_abs_error == pytest.approx(np.abs(error).max())
    assert row.sqnr_db == pytest.approx(10 * np.log10(np.sum(x.astype(np.float64) ** 2) / np.sum(error ** 2)))
    assert row.max_error_lsb == pytest.approx(row.max_abs_error / scale)

    program = cortexm.to_program(lowered)
    [out] = cortexm.compare(graph, program, x).rows
    assert out.op == "output" and out.layer_sqnr_db is None
    softmax = result[graph.outputs[0].name]
    assert out.sqnr_db == pytest.approx(softmax.sqnr_db) and out.max_abs_error == pytest.approx(softmax.max_abs_error)
    int8_io = cortexm.to_program(lowered, io="int8")
    [out8] = cortexm.compare(graph, int8_io, x).rows
    assert out8.sqnr_db == pytest.approx(out.sqnr_db)


def test_a_perturbed_weight_makes_its_layer_the_worst(ds_cnn):
    graph, lowered, inputs = ds_cnn
    before = cortexm.compare(graph, lowered, inputs)
    broken = lowered.copy()
    victim = [n for n in broken.nodes if n.op == "cortex_m.quantized_conv2d.default"][2]
    weights = victim.inputs[1]
    w = np.array(weights.data)
    w[: w.shape[0] // 4] = -w[: w.shape[0] // 4]  # a quarter of the output channels flipped
    weights.data = w
    after = cortexm.compare(graph, broken, inputs)
    worst = after.rows[0]
    assert worst.node == victim.name
    assert worst.layer_sqnr_db < before[victim.name].layer_sqnr_db - 10
    # The layers before the victim are untouched; the accumulated error of those after it grows
    # (their own error changes with their inputs, the victim's outputs).
    earlier = [r for r in after if r.step < worst.step]
    assert earlier and all((r.layer_sqnr_db, r.sqnr_db) == (before[r.value].layer_sqnr_db, before[r.value].sqnr_db)
                           for r in earlier)
    later = [r for r in after if r.step > worst.step and r.op != "view_copy"]
    assert later and all(r.sqnr_db < before[r.value].sqnr_db for r in later)
    # ... while their own error stays far below the error they inherit, and far below the victim's.
    assert all(r.layer_sqnr_db > max(r.sqnr_db, worst.layer_sqnr_db) + 10 for r in later)


def test_module_table_markdown_and_plot(ds_cnn, tmp_path):
    graph, lowered, inputs = ds_cnn
    model = zoo.exported("ds_cnn")[0]
    from_module = cortexm.compare(model, lowered, inputs[0])
    from_graph = cortexm.compare(graph, lowered, inputs[0])
    assert [(r.value, r.sqnr_db) for r in from_module] == [(r.value, r.sqnr_db) for r in from_graph]
    text = from_graph.table(limit=3)
    assert len(text.splitlines()) == 2 + 3 + 1 and "3 of " in text.splitlines()[-1]
    markdown = from_graph.to_markdown()
    assert markdown.startswith("| node | op | float value |") and f"| {from_graph.rows[0].node} |" in markdown
    path = tmp_path / "compare.png"
    from_graph.plot(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from_graph.plot(tmp_path / "compare.svg")
    assert b"<svg" in (tmp_path / "compare.svg").read_bytes()[:1000]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compare.png", "compare.svg"]  # no temporaries left


def test_bad_arguments_name_themselves(ds_cnn):
    graph, lowered, inputs = ds_cnn
    with pytest.raises(ValueError, match="sort_by = 'worst'"):
        cortexm.compare(graph, lowered, inputs, sort_by="worst")
    with pytest.raises(ValueError, match="int8_model = str"):
        cortexm.compare(graph, "model.cmpte", inputs)
    with pytest.raises(ValueError, match="float_model = int"):
        cortexm.compare(3, lowered, inputs)
    with pytest.raises(ValueError, match="inputs = dict"):
        cortexm.compare(graph, lowered, {"x": inputs[0][0]})
    with pytest.raises(ValueError, match="inputs sample 0 has 2 array"):
        cortexm.compare(graph, lowered, [(inputs[0][0], inputs[0][0])])
    with pytest.raises(ValueError, match=r"inputs = \[\]"):
        cortexm.compare(graph, lowered, [])
    unrelated = cortexm.Graph()
    y = unrelated.call("aten.relu.default", [unrelated.add_input("image", list(graph.inputs[0].shape))])
    unrelated.outputs = [y]
    with pytest.raises(ValueError, match="no quantized tensor of int8_model matches"):
        cortexm.compare(unrelated, lowered, inputs)


def test_mobilenet_v2_96_names_its_worst_layers():
    graph, lowered = zoo.exported("mobilenet_v2_96")[3], zoo.lowered("mobilenet_v2_96")
    result = cortexm.compare(graph, lowered, samples("mobilenet_v2_96", 2))
    compute = {n.name for n in lowered.nodes if n.op.startswith("cortex_m.quantized_")}
    assert compute <= {r.node for r in result}
    worst = result.worst(3)
    assert all(r.source.startswith("features.") or r.source.startswith("classifier") for r in worst)
    assert worst[0].layer_sqnr_db < 40 and result.rows[-1].layer_sqnr_db > worst[0].layer_sqnr_db


def test_aot_cli_compare(tmp_path, capsys):
    from cortexm import aot

    out = tmp_path / "ds_cnn.cmpte"
    assert aot.main(["-m", "ds_cnn", "-q", "--calibration-samples", "2", "--compare", "4",
                     "--compare-plot", str(tmp_path / "cmp.png"), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "layer SQNR dB" in text and "4 of " in text and (tmp_path / "cmp.png").exists()
    with pytest.raises(SystemExit):
        aot.main(["-m", "ds_cnn", "--compare", "-o", str(out)])
    assert "--compare needs --quantize" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        aot.main(["-m", "ds_cnn", "-q", "--compare", "0", "-o", str(out)])
    assert "--compare 0 must be >= 1" in capsys.readouterr().err
