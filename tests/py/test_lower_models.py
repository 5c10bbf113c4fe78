"""Issue 5's done-when criteria on the zoo models: what cortexm.lower makes of wav2letter, silero_vad,
mobilenet_v2 and mobilenet_v3_small. Each model is exported, quantized and lowered once per module."""

import functools

import pytest

import cortexm

torch = pytest.importorskip("torch")

CONV = "aten.convolution.default"
QCONV = "cortex_m.quantized_conv2d.default"
QDEPTHWISE = "cortex_m.quantized_depthwise_conv2d.default"
RELU = "aten.relu.default"
VIEW = "aten.view_copy.default"
CLONE = "dim_order_ops._clone_dim_order.default"
DATA_MOVEMENT = {VIEW, "aten.permute_copy.default", "aten.squeeze_copy.dims",
                 "aten.unsqueeze_copy.default", "aten.cat.default", "aten.slice_copy.Tensor",
                 "aten.select_copy.int", "aten.split_with_sizes_copy.default",
                 "aten.constant_pad_nd.default", "aten.reflection_pad1d.default",
                 "aten.upsample_nearest2d.default"}


@functools.lru_cache(maxsize=None)
def lowered(name, samples=2):
    """(quantized graph, lowered graph) of a zoo model, made once per test module."""
    model, example, calibration = cortexm.models.get(name)
    qgraph = cortexm.quantize(cortexm.export(model, example), calibration(samples), progress=False)
    return qgraph, cortexm.lower(qgraph, "cortex-m55+int8")


def is_conv(node):
    return node.op in (QCONV, QDEPTHWISE)


def aten_compute_ops(graph):
    return {op for op in graph.op_counts() if op.startswith("aten.") and op not in DATA_MOVEMENT}


def producer_through(value, skip):
    """The first producer of value that does not run an op in skip."""
    node = value.producer
    while node is not None and node.op in skip:
        node = node.inputs[0].producer
    return node


# --- wav2letter ----------------------------------------------------------------------------------

def test_wav2letter_every_conv1d_relu_pair_is_one_cortex_m_conv():
    qgraph, low = lowered("wav2letter", samples=1)
    q_counts, counts = qgraph.op_counts(), low.op_counts()
    assert q_counts[CONV] == 12 and q_counts[RELU] == 12
    # The 1-channel waveform front end is a regular conv too (in_channels == groups == 1).
    assert counts.get(QCONV, 0) == 12
    assert QDEPTHWISE not in counts
    assert CONV not in counts and RELU not in counts
    convs = [n for n in low.nodes if is_conv(n)]
    for node in convs:
        assert node.meta.get("fused_activation") == RELU, node.name
        assert node.meta.get("pattern") == "conv1d+relu", node.name
    assert any(low.value(n.inputs[1].name).shape == (250, 1, 250, 1) for n in convs)


def test_wav2letter_no_node_between_consecutive_convolutions():
    _, low = lowered("wav2letter", samples=1)
    convs = [n for n in low.nodes if is_conv(n)]
    chained = 0
    for node in convs:
        users = node.outputs[0].users
        assert len(users) == 1, node.name
        if is_conv(users[0]):
            chained += 1
    assert chained == len(convs) - 1  # one chain, first conv to last
    assert producer_through(convs[0].inputs[0], ()).op == CLONE


def test_wav2letter_layout_changes_only_at_the_boundaries():
    _, low = lowered("wav2letter", samples=1)
    counts = low.op_counts()
    assert counts[VIEW] == 2 and counts[CLONE] == 2
    convs = [n for n in low.nodes if is_conv(n)]
    # Input side: graph input -> quantize -> view (N, C, 1, W) -> clone -> first conv.
    clone_in = convs[0].inputs[0].producer
    view_in = clone_in.inputs[0].producer
    assert (clone_in.op, view_in.op) == (CLONE, VIEW)
    assert view_in.inputs[0].producer.op == "cortex_m.quantize_per_tensor.default"
    assert view_in.inputs[0].producer.inputs[0] == low.inputs[0]
    # Output side: last conv (channels-last) -> view (N, C, W), the same bytes in order [0, 2, 1]
    # with the class dim innermost -> log_softmax -> clone to contiguous -> dequantize (output).
    view_out = convs[-1].outputs[0].users[0]
    assert view_out.op == VIEW and len(view_out.outputs[0].users) == 1
    assert tuple(convs[-1].outputs[0].dim_order) == (0, 2, 3, 1)
    assert len(view_out.outputs[0].shape) == 3 and tuple(view_out.outputs[0].dim_order) == (0, 2, 1)
    log_softmax = view_out.outputs[0].users[0]
    assert log_softmax.op == "cortex_m.quantized_log_softmax.default"
    clone_out = log_softmax.outputs[0].users[0]
    assert clone_out.op == CLONE and tuple(clone_out.outputs[0].dim_order) == (0, 1, 2)
    assert clone_out.outputs[0].users[0].op == "cortex_m.dequantize_per_tensor.default"
    assert low.outputs[0].producer == clone_out.outputs[0].users[0]


def test_wav2letter_no_aten_compute_op_is_left_and_log_softmax_is_int8():
    _, low = lowered("wav2letter", samples=1)
    assert aten_compute_ops(low) == set()
    assert "aten._log_softmax.default" not in low.op_counts()
    assert low.op_counts()["cortex_m.quantized_log_softmax.default"] == 1
    log_softmax = next(n for n in low.nodes if n.op == "cortex_m.quantized_log_softmax.default")
    # Over the class dim (4096 classes), the input the last conv's int8 output.
    assert log_softmax.attrs["dim"] == 1
    assert log_softmax.inputs[0].shape == (10, 4096, 3) and log_softmax.inputs[0].dtype == "int8"


# --- silero_vad ----------------------------------------------------------------------------------

def test_silero_all_six_conv1d_lower_and_the_stft_is_a_regular_conv():
    qgraph, low = lowered("silero_vad")
    assert qgraph.op_counts()[CONV] == 6
    counts = low.op_counts()
    assert CONV not in counts
    assert counts[QCONV] == 6 and QDEPTHWISE not in counts
    # The STFT: Conv1d(1, 258, 256, stride 128) on the reflect-padded waveform; one input channel,
    # so a regular conv with an OHWI weight.
    stft = next(n for n in low.nodes if n.op == QCONV and low.value(n.inputs[1].name).shape == (258, 1, 256, 1))
    assert stft.attrs["stride"] == [1, 128]
    assert producer_through(stft.inputs[0], {CLONE, VIEW, "aten.unsqueeze_copy.default"}).op == \
        "aten.reflection_pad1d.default"


def test_silero_encoder_relus_fuse_and_the_post_lstm_relu_is_a_table():
    qgraph, low = lowered("silero_vad")
    # In the quantized graph, a ReLU reads a convolution (encoder) or the LSTM's output (decoder).
    relus = [n for n in qgraph.nodes if n.op == RELU]
    after_conv = [n for n in relus if n.inputs[0].producer.op == CONV]
    assert len(relus) == 5 and len(after_conv) == 4
    # Lowered: the 4 encoder convs carry their ReLU; no conv carries a fifth.
    fused = [n for n in low.nodes if is_conv(n) and n.meta.get("fused_activation") == RELU]
    assert len(fused) == 4
    assert all(n.op == QCONV for n in fused)
    # The post-LSTM ReLU cannot fold into its producer (the LSTM's h = o * tanh(c), a
    # quantized_mul whose output the new state reads too): ConvertUnfusedClamps makes it a table.
    assert RELU not in low.op_counts()
    tables = [n for n in low.nodes if n.op == "cortex_m.quantized_activation.default"]
    (table,) = [n for n in tables if producer_through(n.inputs[0], {"aten.unsqueeze_copy.default"}).op
                == "cortex_m.quantized_mul.default"]
    source = producer_through(table.inputs[0], {"aten.unsqueeze_copy.default"})
    assert len(source.outputs[0].users) == 2
    consumer = table.outputs[0].users[0]
    while not is_conv(consumer):
        consumer = consumer.outputs[0].users[0]
    assert consumer.op == QCONV and "fused_activation" not in consumer.meta


def test_silero_is_int8_from_input_quantize_to_output_dequantize():
    _, low = lowered("silero_vad")
    assert aten_compute_ops(low) == set()
    counts = low.op_counts()
    # Only the boundaries convert: x and state in, prob and new_state out.
    assert counts["cortex_m.quantize_per_tensor.default"] == 2
    assert counts["cortex_m.dequantize_per_tensor.default"] == 2
    for node in low.nodes:
        if node.op == "cortex_m.quantize_per_tensor.default":
            assert node.inputs[0] in low.inputs, node.name
        elif node.op == "cortex_m.dequantize_per_tensor.default":
            assert node.outputs[0] in low.outputs, node.name
        else:
            assert all(v.dtype != "float32" for v in node.outputs), node.name
