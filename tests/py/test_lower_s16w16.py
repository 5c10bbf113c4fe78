"""16x16 layers end to end: CortexMQuantizer(int16_weights=...) quantizes the named conv / linear
weights int16 (int64 biases), lowering turns them into cortex_m.quantized_conv2d_s16w16 /
quantized_linear_s16w16, and the program runs bit-exact with the lowered graph on the host and on
QEMU's Cortex-M55 (MVE) and Cortex-M4 (DSP). The quantizer's checks of the names, and an int16
weight on an int8 input left unlowered with the reason."""

import os
import shutil

import numpy as np
import pytest

import cortexm
from cortexm.aot import DATA_MOVEMENT

torch = pytest.importorskip("torch")
nn = torch.nn

CONV_S16W16 = "cortex_m.quantized_conv2d_s16w16.default"
LINEAR_S16W16 = "cortex_m.quantized_linear_s16w16.default"
WEIGHT_OPS_16X8 = ("cortex_m.quantized_conv2d_s16.default", "cortex_m.quantized_linear_s16.default")
HAVE_QEMU = shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")
NEEDS_QEMU = pytest.mark.skipif(not HAVE_QEMU, reason="needs qemu-system-arm and arm-none-eabi-g++ "
                                "(scripts/setup.sh installs them)")


class ConvReluLinear(nn.Module):
    """conv1d (odd channels, kernel 5, padding) + relu + linear, and an addmm head."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 7, 5, padding=2)
        self.fc = nn.Linear(7 * 11, 9)
        self.head = nn.Parameter(torch.randn(5, 9) * 0.3)
        self.head_bias = nn.Parameter(torch.randn(5) * 0.1)

    def forward(self, x):
        y = self.fc(torch.relu(self.conv(x)).flatten(1))
        return torch.addmm(self.head_bias, y, self.head.t())


def weight_names(graph):
    """The weight constants of the graph's convolutions, linears and addmms."""
    names = []
    for n in graph.nodes:
        if n.op in ("aten.convolution.default", "aten.linear.default"):
            names.append(n.inputs[1].name)
        elif n.op == "aten.addmm.default":
            mat2 = n.inputs[2]
            names.append(mat2.name if mat2.kind == "constant" else mat2.producer.inputs[0].name)
    return names


def samples(n, seed, shape=(1, 3, 11)):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(*shape, generator=g).numpy(),) for _ in range(n)]


@pytest.fixture(scope="module")
def small():
    torch.manual_seed(0)
    model = ConvReluLinear().eval()
    graph = cortexm.export(model, (torch.from_numpy(samples(1, 1)[0][0]),))
    names = weight_names(graph)
    assert names == ["conv.weight", "fc.weight", "head"]
    quantizer = cortexm.CortexMQuantizer(activation_dtype="int16", fuse_magnitude=True, int16_weights=names)
    qgraph = cortexm.quantize(graph, samples(16, 2), quantizer, progress=False)
    return model, graph, qgraph, cortexm.lower(qgraph, "cortex-m55+int8")


def assert_integer_kernels_only(lowered):
    for node in lowered.nodes:
        if not node.op.startswith("cortex_m."):
            assert node.op in DATA_MOVEMENT, f"{node.name}: {node.op} is a float compute op"
    ops = lowered.op_counts()
    assert not any(ops.get(op) for op in WEIGHT_OPS_16X8), ops


def test_small_model_quantizes_int16_weights_and_int64_biases(small):
    _, _, qgraph, _ = small
    weights = {n.inputs[0].name: n.inputs[0] for n in qgraph.nodes
               if n.op == "quantized_decomposed.dequantize_per_channel.default"}
    for name in ("conv.weight_int16", "fc.weight_int16", "head_int16"):
        w = weights[name]
        assert w.dtype == "int16" and w.qparams["quant_min"] == -32767 and w.qparams["quant_max"] == 32767
        assert set(np.abs(np.asarray(w.data)).max(axis=tuple(range(1, w.data.ndim)))) == {32767}
    for name in ("conv.bias_int64", "fc.bias_int64", "head_bias_int64"):
        assert weights[name].dtype == "int64"
    report = str(cortexm.quantization_report(qgraph))  # reads the int16 weights and int64 biases
    assert "convolution" in report


def test_small_model_lowers_to_16x16_ops_and_runs_like_float(small):
    model, _, qgraph, lowered = small
    assert_integer_kernels_only(lowered)
    ops = lowered.op_counts()
    assert ops.get(CONV_S16W16) == 1 and ops.get(LINEAR_S16W16) == 2, ops
    for node in lowered.nodes:
        if node.op in (CONV_S16W16, LINEAR_S16W16):
            assert node.inputs[1].dtype == "int16" and node.inputs[2].dtype == "int64"
    for (x,) in samples(16, 2)[:4]:  # calibration samples: no output beyond the observed ranges
        want = model(torch.from_numpy(x)).detach().numpy()
        got, fake = np.asarray(lowered.run(x)[0]), np.asarray(qgraph.run(x)[0])
        assert np.max(np.abs(got - want)) < 2e-3 * np.max(np.abs(want))
        assert np.max(np.abs(got - fake)) < 1e-3 * np.max(np.abs(want))


def test_small_model_program_is_bit_exact_with_the_lowered_graph(small):
    *_, lowered = small
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0
    for (x,) in samples(3, 4):
        got, want = program.run(x), lowered.run(x)
        assert all(a.dtype == b.dtype and a.tobytes() == b.tobytes() for a, b in zip(got, want))


def assert_qemu_matches_host(qgraph, inputs, cpu):
    """qgraph lowered and written for cpu runs under QEMU bit-identical with the host runtime."""
    from cortexm import qemu

    program = cortexm.to_program(cortexm.lower(qgraph, f"{cpu}+int8"), target=f"{cpu}+int8")
    result = qemu.run(program, inputs, cpu)
    host = program.run(*inputs)
    assert len(result.outputs) == len(host)
    for got, want in zip(result.outputs, host):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


@NEEDS_QEMU
@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4"])
def test_small_model_on_qemu_is_bit_identical_with_the_host(small, cpu):
    assert_qemu_matches_host(small[2], list(samples(1, 5)[0]), cpu)


@pytest.fixture(scope="module")
def silero():
    import zoo

    model, example, calibration, graph = zoo.exported("silero_vad")
    names = weight_names(graph)
    assert len(names) == 8 and "decoder.rnn.weight_ih" in names and "encoder.0.reparam_conv.weight" in names
    quantizer = cortexm.CortexMQuantizer(activation_dtype="int16", fuse_magnitude=True, int16_weights=names)
    qgraph = cortexm.quantize(graph, calibration(32, seed=0), quantizer, progress=False)
    return model, example, calibration, qgraph, cortexm.lower(qgraph, "cortex-m55+int8")


def test_silero_with_every_weight_int16_lowers_to_16x16_ops(silero):
    model, _, calibration, _, lowered = silero
    assert_integer_kernels_only(lowered)
    ops = lowered.op_counts()
    assert ops.get(CONV_S16W16) == 6 and ops.get(LINEAR_S16W16) == 2, ops
    errors = []
    for sample in calibration(8, seed=1):
        with torch.no_grad():
            want = model(*sample)[0].item()
        errors.append(abs(float(np.asarray(lowered.run(*[t.numpy() for t in sample])[0]).reshape(-1)[0]) - want))
    assert max(errors) < 0.02


def test_silero_program_is_bit_exact_with_the_lowered_graph(silero):
    _, example, calibration, _, lowered = silero
    program = cortexm.to_program(lowered, bundle_inputs=tuple(t.numpy() for t in example))
    assert program.float_ops == 0 and program.verify() == 1
    for sample in calibration(3, seed=9):
        arrays = [t.numpy() for t in sample]
        got, want = program.run(*arrays), lowered.run(*arrays)
        assert all(a.dtype == b.dtype and a.tobytes() == b.tobytes() for a, b in zip(got, want))


@NEEDS_QEMU
@pytest.mark.skipif(os.environ.get("CORTEXM_QEMU_ALL") != "1", reason="on demand: set CORTEXM_QEMU_ALL=1")
def test_silero_on_qemu_m55_is_bit_identical_with_the_host(silero):
    _, _, calibration, qgraph, _ = silero
    assert_qemu_matches_host(qgraph, [t.numpy() for t in next(iter(calibration(1, seed=11)))], "cortex-m55")


# --- the quantizer's checks ----------------------------------------------------------------------


class Mixed(nn.Module):
    """A conv on the int16 input, a transposed conv and a linear after it."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 4, 3)
        self.up = nn.ConvTranspose1d(4, 3, 2, stride=2)
        self.fc = nn.Linear(3, 5)

    def forward(self, x):
        return self.fc(self.up(torch.relu(self.conv(x))).transpose(1, 2))


@pytest.fixture(scope="module")
def mixed_graph():
    torch.manual_seed(1)
    x = torch.randn(1, 2, 9)
    return cortexm.export(Mixed().eval(), (x,)), [(torch.randn(1, 2, 9).numpy(),) for _ in range(4)]


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(activation_dtype="int16", int16_weights=["nope"]), ValueError,
     r"int16_weights names 'nope', which is not a constant read by any op of the graph"),
    (dict(activation_dtype="int16", int16_weights=["conv.bias"]), ValueError,
     r"int16_weights names 'conv.bias', read by 'convolution' \(aten.convolution.default\), which is not the "
     r"weight constant of a quantized conv / linear / addmm"),
    (dict(activation_dtype="int16", int16_weights=["up.weight"]), ValueError,
     r"int16_weights names 'up.weight', the weight of 'convolution_1' \(aten.convolution.default, pattern "
     r"transpose_conv1d\), which has no 16x16 form"),
    (dict(int16_weights=["conv.weight"]), ValueError,
     r"int16_weights names 'conv.weight', the weight of 'convolution' \(aten.convolution.default\), whose input "
     r"'x' is int8: a 16x16 layer needs an int16 activation"),
    (dict(int16_activations=["x"], int16_weights=["conv.weight", "fc.weight"]), ValueError,
     r"int16_weights names 'fc.weight', the weight of 'linear' \(aten.linear.default\), whose input '.*' is int8"),
    (dict(int16_weights="conv.weight"), TypeError, "int16_weights must be a collection of weight names"),
    (dict(int16_weights=[3]), TypeError, "int16_weights holds 3, not a weight name"),
])
def test_quantizer_refuses_names_without_a_16x16_layer(mixed_graph, kwargs, error, match):
    graph, calibration = mixed_graph
    with pytest.raises(error, match=match):
        cortexm.quantize(graph, calibration, cortexm.CortexMQuantizer(**kwargs), progress=False)


def test_int16_activations_on_the_conv_input_make_a_16x16_conv_in_an_int8_graph(mixed_graph):
    graph, calibration = mixed_graph
    quantizer = cortexm.CortexMQuantizer(int16_activations=["x"], int16_weights=["conv.weight"])
    assert "int16_weights=['conv.weight']" in repr(quantizer)
    lowered = cortexm.lower(cortexm.quantize(graph, calibration, quantizer, progress=False), "cortex-m55+int8")
    assert lowered.op_counts().get(CONV_S16W16) == 1


def test_convert_honours_int16_weights_with_a_shared_rounding_cache(mixed_graph):
    """One rounding cache across converts (precision='auto' does this): int8 and int16 roundings of
    the same weight are kept apart."""
    from cortexm.quantizer import annotate, calibrate, convert

    graph, calibration = mixed_graph
    cache = {}
    consts = {}
    for names in ((), ("conv.weight",), ()):
        quantizer = cortexm.CortexMQuantizer(activation_dtype="int16", int16_weights=names)
        annotation = annotate(graph, quantizer)
        calibrate(graph, annotation, calibration, False, {})
        qgraph = convert(graph, annotation, quantizer, None, cache)
        dq = next(n for n in qgraph.nodes if n.op == "quantized_decomposed.dequantize_per_channel.default"
                  and n.inputs[0].name.startswith("conv.weight"))
        consts.setdefault(dq.inputs[0].dtype, []).append(np.asarray(dq.inputs[0].data))
    assert sorted(consts) == ["int16", "int8"]
    assert len(consts["int8"]) == 2 and np.array_equal(*consts["int8"])
    assert np.abs(consts["int16"][0]).max() == 32767
    assert {key[-1] for key in cache} == {"int8", "int16"}


def hand_written_linear(x_dtype="int16", weight_scale=1e-4, bias=None):
    """A Q / DQ graph the quantizer would not write: x (x_dtype) -> linear with int16 weights
    (per channel at weight_scale) and an optional int64 bias at s_x * weight_scale -> int16 out."""
    qx = ({"scale": 0.02, "zero_point": 3, "quant_min": -128, "quant_max": 127, "dtype": "int8"}
          if x_dtype == "int8" else {"scale": 1e-3, "zero_point": 0, "quant_min": -32767, "quant_max": 32767,
                                     "dtype": "int16"})
    qy = {"scale": 1e-3, "zero_point": 0, "quant_min": -32767, "quant_max": 32767, "dtype": "int16"}
    g = cortexm.Graph()
    x = g.add_input("x", [2, 6])
    xq = g.call("quantized_decomposed.quantize_per_tensor.default", [x], qx)
    xd = g.call("quantized_decomposed.dequantize_per_tensor.default", [xq], qx)

    def per_channel(name, data, scale, qmin, qmax, dtype):
        q = {"scales": [scale] * 4, "zero_points": [0] * 4, "axis": 0, "quant_min": qmin, "quant_max": qmax}
        c = g.add_constant(name, data, qparams=q)
        return g.call("quantized_decomposed.dequantize_per_channel.default", [c], dict(q, dtype=dtype))

    wd = per_channel("w", np.arange(24, dtype=np.int16).reshape(4, 6) * 1000, weight_scale, -32767, 32767, "int16")
    bd = None
    if bias is not None:
        bd = per_channel("b", np.asarray(bias, np.int64), qx["scale"] * weight_scale, -2**63, 2**63 - 1, "int64")
    y = g.call("aten.linear.default", [xd, wd, bd], name="fc")
    yq = g.call("quantized_decomposed.quantize_per_tensor.default", [y], qy)
    g.outputs = [g.call("quantized_decomposed.dequantize_per_tensor.default", [yq], qy)]
    lowered = cortexm.lower(g, "cortex-m55+int8")
    return g, lowered, next(n for n in lowered.nodes if n.name == "fc" or n.op == LINEAR_S16W16)


def test_a_hand_written_16x16_linear_lowers_and_matches_its_graph():
    graph, lowered, fc = hand_written_linear(bias=[5 << 40, -(3 << 40), 7, 0])  # beyond int32
    assert fc.op == LINEAR_S16W16 and fc.inputs[2].dtype == "int64"
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(2, 6)
    got, want = np.asarray(lowered.run(x)[0]), np.asarray(graph.run(x)[0])
    assert np.max(np.abs(got - want)) <= 1e-3 + 1e-6  # within one output LSB of DQ -> linear -> Q


@pytest.mark.parametrize("kwargs,reason", [
    # s_x s_w / s_y = 1e-3 * 1e-13 / 1e-3 = 1e-13 < 2^-32: quantize_multiplier's shift would be < -31
    (dict(weight_scale=1e-13), "float: requantize scale 1e-13 is below 2^-32 (the requantize's smallest shift"),
    (dict(bias=[1 << 47, 0, 0, 0]), "does not fit +-2^46"),
])
def test_what_the_16x16_requantize_cannot_do_stays_float_with_the_reason(kwargs, reason):
    _, _, fc = hand_written_linear(**kwargs)
    assert fc.op == "aten.linear.default"
    assert reason in fc.meta["lowering"], fc.meta["lowering"]


def test_an_int16_weight_on_an_int8_input_is_not_lowered_with_the_reason():
    """A hand-written Q / DQ graph (the quantizer refuses it): int8 x, int16 weight -> linear."""
    g = cortexm.Graph()
    x = g.add_input("x", [2, 6])
    q8 = {"scale": 0.02, "zero_point": 3, "quant_min": -128, "quant_max": 127, "dtype": "int8"}
    xq = g.call("quantized_decomposed.quantize_per_tensor.default", [x], q8)
    xd = g.call("quantized_decomposed.dequantize_per_tensor.default", [xq], q8)
    w_q = {"scales": [1e-4] * 4, "zero_points": [0] * 4, "axis": 0, "quant_min": -32767, "quant_max": 32767,
           "dtype": "int16"}
    w = g.add_constant("w", np.arange(24, dtype=np.int16).reshape(4, 6) * 1000,
                       qparams={k: v for k, v in w_q.items() if k != "dtype"})
    wd = g.call("quantized_decomposed.dequantize_per_channel.default", [w], w_q)
    y = g.call("aten.linear.default", [xd, wd, None], name="fc")
    yq = g.call("quantized_decomposed.quantize_per_tensor.default", [y], q8)
    g.outputs = [g.call("quantized_decomposed.dequantize_per_tensor.default", [yq], q8)]
    lowered = cortexm.lower(g, "cortex-m55+int8")
    fc = next(n for n in lowered.nodes if n.name == "fc")
    assert fc.op == "aten.linear.default"
    assert fc.meta["lowering"] == ("float: int16 weight 'w' (16x16) needs a symmetric int16 input; "
                                   "input 'quantize_per_tensor' is int8")
