"""Conv1d at op level through cortexm.export -> quantize -> lower: the lowered op kinds and
layout (view_copy to (N, C, 1, W), channels-last clone, the cortex_m conv with H = 1 weights, clone
back, view_copy to (N, C_out, W_out)), and the lowered int8 output bit-identical to the integer
reference of the quantized graph (numpy_reference.quantized_graph) on random inputs."""

import numpy as np
import pytest

import cortexm
from numpy_reference.quantize import quantize_per_tensor
from numpy_reference.quantized_graph import QuantizedGraphReference

torch = pytest.importorskip("torch")
nn = torch.nn

QCONV = "cortex_m.quantized_conv2d.default"
QDEPTHWISE = "cortex_m.quantized_depthwise_conv2d.default"
VIEW = "aten.view_copy.default"
CLONE = "dim_order_ops._clone_dim_order.default"


def inputs(shape, n, seed):
    g = torch.Generator().manual_seed(seed)
    # Off-center and unevenly scaled, so the zero points are not 0.
    return [(torch.randn(shape, generator=g) * 1.7 + 0.4,) for _ in range(n)]


def lower(module, shape, seed=0):
    torch.manual_seed(seed)
    module = module.eval()
    example = inputs(shape, 1, seed + 100)[0]
    qgraph = cortexm.quantize(cortexm.export(module, example), inputs(shape, 6, seed + 200),
                              progress=False)
    return qgraph, cortexm.lower(qgraph, "cortex-m55+int8")


def the_conv(lowered):
    convs = [n for n in lowered.nodes if n.op in (QCONV, QDEPTHWISE)]
    assert len(convs) == 1, lowered.op_counts()
    return convs[0]


def check(module, shape, op, seed=0):
    """Lowers module, checks the single conv's op and layout chain and the bit-exact output;
    returns the conv node and the lowered graph."""
    qgraph, lowered = lower(module, shape, seed)
    counts = lowered.op_counts()
    assert "aten.convolution.default" not in counts
    conv = the_conv(lowered)
    assert conv.op == op
    assert counts[VIEW] == 2 and counts[CLONE] == 2
    clone_in = conv.inputs[0].producer
    view_in = clone_in.inputs[0].producer
    assert clone_in.op == CLONE and clone_in.attrs["dim_order"] == [0, 2, 3, 1]
    assert view_in.op == VIEW and view_in.attrs["size"] == [shape[0], shape[1], 1, shape[2]]
    clone_out = conv.outputs[0].users[0]
    view_out = clone_out.outputs[0].users[0]
    assert clone_out.op == CLONE and clone_out.attrs["dim_order"] == [0, 1, 2, 3]
    assert view_out.op == VIEW and len(view_out.attrs["size"]) == 3
    weight = lowered.value(conv.inputs[1].name)
    assert weight.shape[1] == 1  # H = 1
    reference = QuantizedGraphReference(qgraph)
    assert reference.integer_ops == [op]
    for (x,) in inputs(shape, 3, seed + 300):
        got, want = lowered.run(x.numpy()), reference.run(x.numpy())[0]
        assert got.shape == want.shape == tuple(module(x).shape)
        np.testing.assert_array_equal(got, want)
    return conv, lowered


def test_regular():
    conv, _ = check(nn.Conv1d(4, 6, 3), (2, 4, 17), QCONV)
    assert conv.attrs["stride"] == [1, 1] and conv.attrs["padding"] == [0, 0]


def test_depthwise_with_multiplier():
    conv, lowered = check(nn.Conv1d(6, 12, 5, padding=2, groups=6), (1, 6, 23), QDEPTHWISE)
    assert conv.attrs["depth_multiplier"] == 2
    assert lowered.value(conv.inputs[1].name).shape == (1, 1, 5, 12)


def test_kernel_one_pointwise():
    conv, lowered = check(nn.Conv1d(8, 5, 1), (3, 8, 11), QCONV)
    assert lowered.value(conv.inputs[1].name).shape == (5, 1, 1, 8)


def test_larger_kernels_with_padding():
    conv, _ = check(nn.Conv1d(3, 4, 9, padding=4), (1, 3, 30), QCONV)
    assert conv.attrs["padding"] == [0, 4]
    conv, _ = check(nn.Conv1d(3, 4, 7, padding=6, dilation=2), (1, 3, 25), QCONV, seed=1)
    assert conv.attrs["dilation"] == [1, 2]


def test_stride_greater_than_one():
    conv, _ = check(nn.Conv1d(4, 6, 4, stride=3, padding=1), (2, 4, 29), QCONV)
    assert conv.attrs["stride"] == [1, 3]
    conv, _ = check(nn.Conv1d(5, 10, 3, stride=2, groups=5), (1, 5, 20), QDEPTHWISE, seed=2)
    assert conv.attrs["stride"] == [1, 2]


def test_without_bias_gets_a_zero_bias():
    # The conv2d's bias is the zero bias folded (FoldInputOffsetIntoBias): input_offset * row sums.
    conv, lowered = check(nn.Conv1d(4, 6, 3, bias=False), (2, 4, 13), QCONV)
    assert conv.attrs["bias_includes_input_offset"]
    rows = lowered.value(conv.inputs[1].name).data.astype(np.int64).reshape(6, -1)
    np.testing.assert_array_equal(lowered.value(conv.inputs[2].name).data,
                                  conv.attrs["input_offset"] * rows.sum(axis=1))
    conv, lowered = check(nn.Conv1d(4, 4, 3, bias=False, groups=4), (1, 4, 13), QDEPTHWISE, seed=3)
    assert not np.any(lowered.value(conv.inputs[2].name).data)


def test_with_bias_keeps_it():
    conv, lowered = check(nn.Conv1d(4, 6, 3, bias=True), (2, 4, 13), QCONV, seed=4)
    assert np.any(lowered.value(conv.inputs[2].name).data)


def test_stft_shaped_single_channel_is_a_regular_conv():
    # Silero's STFT in small: Conv1d(1, 2 * 9, 16, stride 8, no bias) on a waveform. One input
    # channel lowers as a regular conv (as TFLite's CONV_2D), not a depth multiplier of 18.
    conv, lowered = check(nn.Conv1d(1, 18, 16, stride=8, bias=False), (1, 1, 80), QCONV)
    assert "depth_multiplier" not in conv.attrs
    assert lowered.value(conv.inputs[1].name).shape == (18, 1, 16, 1)


@pytest.mark.parametrize("activation, bounds", [(nn.ReLU(), (0.0, np.inf)), (nn.ReLU6(), (0.0, 6.0)),
                                                (nn.Hardtanh(-0.5, 1.5), (-0.5, 1.5))])
def test_conv1d_activation_fuses(activation, bounds):
    conv, lowered = check(nn.Sequential(nn.Conv1d(4, 6, 3, padding=1), activation), (2, 4, 15),
                          QCONV)
    counts = lowered.op_counts()
    assert "aten.relu.default" not in counts and "aten.hardtanh.default" not in counts
    assert conv.meta["fused_activation"] in ("aten.relu.default", "aten.hardtanh.default")
    # The activation range is the activation's bounds quantized at the output's qparams.
    q = conv.outputs[0].qparams
    lo, hi = quantize_per_tensor(np.array(bounds, np.float32), q["scales"][0], q["zero_points"][0],
                                 q["quant_min"], q["quant_max"], np.int64)
    assert (conv.attrs["activation_min"], conv.attrs["activation_max"]) == (lo, hi)


def test_single_channel_with_relu_fuses_into_the_conv():
    conv, lowered = check(nn.Sequential(nn.Conv1d(1, 8, 5, stride=2), nn.ReLU()), (2, 1, 40),
                          QCONV)
    assert conv.meta["fused_activation"] == "aten.relu.default"
    assert "aten.relu.default" not in lowered.op_counts()


def hand_quantized_conv1d(module, shape, seed):
    """The convert_pt2e form of a float Conv1d built by hand (the lowering's input as another
    quantizer writes it): per-tensor activations from the observed ranges, symmetric per-channel int8 weights,
    int32 bias at s_in * s_w[c]."""
    torch.manual_seed(seed)
    module = module.eval()
    calib = torch.cat([x for (x,) in inputs(shape, 6, seed + 200)])
    with torch.no_grad():
        y = module(calib)

    def affine(t):
        lo, hi = min(float(t.min()), 0.0), max(float(t.max()), 0.0)
        scale = (hi - lo) / 255.0
        return scale, int(np.clip(round(-128 - lo / scale), -128, 127))

    (s_in, zp_in), (s_out, zp_out) = affine(calib), affine(y)
    w = module.weight.detach().numpy().astype(np.float32)
    s_w = np.abs(w).reshape(w.shape[0], -1).max(axis=1) / 127.0
    w_q = np.clip(np.rint(w / s_w[:, None, None]), -127, 127).astype(np.int8)
    b = module.bias.detach().numpy().astype(np.float64)
    b_q = np.rint(b / (s_in * s_w)).astype(np.int32)

    def q_attrs(scale, zp):
        return {"scale": scale, "zero_point": zp, "quant_min": -128, "quant_max": 127,
                "dtype": "int8"}

    def channel_attrs(scales, qmin, qmax, dtype):
        return {"scales": [float(v) for v in scales], "zero_points": [0] * len(scales), "axis": 0,
                "quant_min": qmin, "quant_max": qmax, "dtype": dtype}

    g = cortexm.Graph()
    x = g.add_input("x", list(shape))
    xq = g.call("quantized_decomposed.quantize_per_tensor.default", [x], q_attrs(s_in, zp_in))
    xdq = g.call("quantized_decomposed.dequantize_per_tensor.default", [xq], q_attrs(s_in, zp_in))
    wdq = g.call("quantized_decomposed.dequantize_per_channel.default",
                 [g.add_constant("w", w_q)], channel_attrs(s_w, -127, 127, "int8"))
    bdq = g.call("quantized_decomposed.dequantize_per_channel.default",
                 [g.add_constant("b", b_q)],
                 channel_attrs(s_in * s_w, -(2**31), 2**31 - 1, "int32"))
    conv = g.call("aten.convolution.default", [xdq, wdq, bdq],
                  {"stride": list(module.stride), "padding": list(module.padding),
                   "dilation": list(module.dilation), "groups": module.groups})
    yq = g.call("quantized_decomposed.quantize_per_tensor.default", [conv], q_attrs(s_out, zp_out))
    g.outputs = [g.call("quantized_decomposed.dequantize_per_tensor.default", [yq],
                        q_attrs(s_out, zp_out))]
    return g


@pytest.mark.parametrize("module, shape", [(nn.Conv1d(6, 9, 3, groups=3, padding=1), (2, 6, 14)),
                                           (nn.Conv1d(4, 6, 3, groups=2, stride=2), (1, 4, 13))])
def test_grouped_not_depthwise_is_a_grouped_conv2d(module, shape):
    qgraph = hand_quantized_conv1d(module, shape, seed=5)
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    conv = the_conv(lowered)
    assert conv.op == QCONV
    assert "aten.convolution.default" not in lowered.op_counts()
    # OHWI with C_in / groups input channels per filter: the kernel's grouped convolution.
    c_out, per_group, k = module.weight.shape
    assert lowered.value(conv.inputs[1].name).shape == (c_out, 1, k, per_group)
    reference = QuantizedGraphReference(qgraph)
    assert reference.integer_ops == [QCONV]
    for (x,) in inputs(shape, 3, 77):
        np.testing.assert_array_equal(lowered.run(x.numpy()), reference.run(x.numpy())[0])


def test_grouped_conv1d_between_convs_is_quantized_and_lowered():
    module = nn.Sequential(nn.Conv1d(6, 6, 1), nn.Conv1d(6, 9, 3, groups=3), nn.Conv1d(9, 4, 1))
    qgraph, lowered = lower(module, (1, 6, 10))
    counts = lowered.op_counts()
    assert "aten.convolution.default" not in counts and counts[QCONV] == 3
    grouped = [n for n in lowered.nodes if n.op == QCONV][1]
    assert lowered.value(grouped.inputs[1].name).shape == (9, 1, 3, 2)
    reference = QuantizedGraphReference(qgraph)
    assert reference.integer_ops == [QCONV] * 3
    for (x,) in inputs((1, 6, 10), 3, 9):
        np.testing.assert_array_equal(lowered.run(x.numpy()), reference.run(x.numpy())[0])