"""cortexm.lower end to end on small graphs and zoo models."""

import numpy as np
import pytest

import cortexm

torch = pytest.importorskip("torch")

FLOAT_COMPUTE_ALLOWED = set()


def lowered_model(name, samples=8):
    model, example, calibration = cortexm.models.get(name)
    graph = cortexm.export(model, example)
    qgraph = cortexm.quantize(graph, calibration(samples), progress=False)
    return graph, qgraph, cortexm.lower(qgraph, "cortex-m55+int8"), example


def aten_compute_ops(graph):
    data_movement = {"aten.view_copy.default", "aten.permute_copy.default", "aten.squeeze_copy.dims",
                     "aten.unsqueeze_copy.default", "aten.cat.default", "aten.slice_copy.Tensor",
                     "aten.select_copy.int", "aten.split_with_sizes_copy.default",
                     "aten.constant_pad_nd.default", "aten.reflection_pad1d.default",
                     "aten.upsample_nearest2d.default"}
    return {op: n for op, n in graph.op_counts().items() if op.startswith("aten.") and op not in data_movement}


def test_lower_requires_a_quantized_graph():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3])
    g.outputs = [g.call("aten.relu.default", [x])]
    with pytest.raises(ValueError, match="quantized graph"):
        cortexm.lower(g)
    with pytest.raises(ValueError, match="int8"):
        cortexm.lower(cortexm.quantize(g, [(np.ones((2, 3), np.float32),)], progress=False),
                      target="cortex-m55")


def test_ds_cnn_lowers_to_cortex_m_and_stays_close():
    graph, qgraph, lowered, example = lowered_model("ds_cnn")
    assert set(aten_compute_ops(lowered)) <= FLOAT_COMPUTE_ALLOWED
    counts = lowered.op_counts()
    # The 1-channel input conv is a regular conv (TFLite's CONV_2D), as silero's STFT.
    assert counts["cortex_m.quantized_conv2d.default"] == 5
    assert counts["cortex_m.quantized_depthwise_conv2d.default"] == 4
    assert counts["cortex_m.quantized_linear.default"] == 1
    assert counts["cortex_m.quantized_softmax.default"] == 1
    assert "aten.relu.default" not in counts  # every relu fused
    x = example[0].numpy()
    fake, low = qgraph.run(x), lowered.run(x)
    assert np.max(np.abs(fake - low)) <= 4 / 256  # softmax output: a few LSB of 1/256


def test_wav2letter_conv1d_chain():
    _, _, lowered, _ = lowered_model("wav2letter", samples=2)
    counts = lowered.op_counts()
    convs = counts.get("cortex_m.quantized_conv2d.default", 0) + counts.get(
        "cortex_m.quantized_depthwise_conv2d.default", 0)
    assert convs == 12
    assert counts["aten.view_copy.default"] == 2
    # Into channels-last before the first conv, and back to contiguous after log_softmax, which
    # runs on the last conv's channels-last bytes (class dim innermost) through a size-1 view.
    assert counts["dim_order_ops._clone_dim_order.default"] == 2
    assert counts["cortex_m.quantized_log_softmax.default"] == 1
    assert set(aten_compute_ops(lowered)) == set()
    for node in lowered.nodes:
        if node.op.startswith("cortex_m.quantized_") and "conv" in node.op:
            users = node.outputs[0].users
            # The last conv feeds log_softmax through a view of its channels-last bytes.
            assert all(u.op.startswith("cortex_m.quantized_") or
                       (u.op == "aten.view_copy.default" and
                        [r.op for r in u.outputs[0].users] == ["cortex_m.quantized_log_softmax.default"])
                       for u in users), node.name


def test_intermediates_written(tmp_path):
    model, example, calibration = cortexm.models.get("deep_autoencoder")
    qgraph = cortexm.quantize(cortexm.export(model, example), calibration(4), progress=False)
    lowered = cortexm.lower(qgraph, "cortex-m4+int8", intermediates=tmp_path)
    assert len(list(tmp_path.glob("*.cmg"))) == len(cortexm.CortexMPassManager.pass_list)
    assert "cortex_m.quantized_linear.default" in lowered.op_counts()
    assert not any(n.op.startswith("cortex_m.") for n in qgraph.nodes)  # input untouched
