"""16x8 linears lowered: with CortexMQuantizer(activation_dtype="int16"), aten.linear / addmm on a
symmetric int16 input and output -> cortex_m.quantized_linear_s16 (int8 weights, int64 bias), a
relu / hardtanh / clamp after it in its activation range; the lowered output within 1 LSB of the
fake-quantized graph and bit-exact with a numpy reference written from the quantized graph's
qparams; the int8 path unchanged."""

import shutil

import numpy as np
import pytest

import cortexm
from numpy_reference.common import quantize_multiplier
from numpy_reference.linear import linear_s16
from numpy_reference.quantize import dequantize_per_tensor, quantize_per_tensor

torch = pytest.importorskip("torch")
nn = torch.nn

Q = "quantized_decomposed.quantize_per_tensor.default"
DQ = "quantized_decomposed.dequantize_per_tensor.default"
DQ_CHANNEL = "quantized_decomposed.dequantize_per_channel.default"
LINEAR_S16 = "cortex_m.quantized_linear_s16.default"


class Linear(nn.Module):
    def __init__(self, k=12, n=5, bias=True, tail=None):
        super().__init__()
        self.fc = nn.Linear(k, n, bias=bias)
        self.tail = tail

    def forward(self, x):
        y = self.fc(x)
        return self.tail(y) if self.tail is not None else y


class Addmm(nn.Module):
    """addmm with mat2 a [K, N] constant, or the transpose of an [N, K] one."""

    def __init__(self, k=9, n=6, transposed=True):
        super().__init__()
        self.transposed = transposed
        self.weight = nn.Parameter(torch.randn(n, k) * 0.3 if transposed else torch.randn(k, n) * 0.3)
        self.bias = nn.Parameter(torch.randn(n) * 0.1)

    def forward(self, x):
        return torch.addmm(self.bias, x, self.weight.t() if self.transposed else self.weight)


def samples(n, seed, shape):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(*shape, generator=g),) for _ in range(n)]


def lower(module, shape, per_channel=True):
    torch.manual_seed(0)
    graph = cortexm.export(module.eval(), samples(1, 1, shape)[0])
    quantizer = cortexm.CortexMQuantizer(activation_dtype="int16", per_channel=per_channel)
    qgraph = cortexm.quantize(graph, samples(8, 2, shape), quantizer, progress=False)
    return qgraph, cortexm.lower(qgraph, "cortex-m55+int8")


def qparams_of(node):
    a = node.attrs
    return float(a["scale"]), int(a["zero_point"]), int(a["quant_min"]), int(a["quant_max"])


def constant_channels(value):
    """(int data, per-channel scales) of a dequantized constant."""
    p = value.producer
    assert p.op in (DQ, DQ_CHANNEL) and p.inputs[0].kind == "constant"
    data = np.asarray(p.inputs[0].data)
    if p.op == DQ:
        return data, np.full(data.shape[0] if data.ndim else 1, float(p.attrs["scale"]))
    assert all(int(z) == 0 for z in p.attrs["zero_points"])
    return data, np.asarray(p.attrs["scales"], np.float64)


def numpy_reference(qgraph, x):
    """The int16 output of Q -> DQ -> linear / addmm [-> clamp] -> Q, computed from the quantized
    graph: the input quantized in float32, int64 sums of the int8 weights, the int32 bias at
    s_in * s_w[c], TFLite multipliers of s_in * s_w[c] / s_out, arm_nn_requantize_s64, the clamp's
    bounds quantized. Returns (int16 output, output scale)."""
    nodes = qgraph.nodes
    core = next(n for n in nodes if n.op in ("aten.linear.default", "aten.addmm.default"))
    if core.op == "aten.addmm.default":
        x_value, mat2, bias_value = core.inputs[1], core.inputs[2], core.inputs[0]
        p = mat2.producer
        if p.op == "aten.permute_copy.default":
            w, s_w = constant_channels(p.inputs[0])
        else:
            w, s_w = constant_channels(mat2)
            w = np.ascontiguousarray(w.T)
    else:
        x_value, bias_value = core.inputs[0], core.inputs[2] if len(core.inputs) > 2 else None
        w, s_w = constant_channels(core.inputs[1])
    in_scale, in_zp, in_min, in_max = qparams_of(x_value.producer)
    assert in_zp == 0 and x_value.producer.inputs[0].dtype == "int16"
    quantize_in = x_value.producer.inputs[0].producer
    xq = quantize_per_tensor(x, *qparams_of(quantize_in), np.int16)

    out_value = core.outputs[0]
    readers = [n for n in nodes if out_value in n.inputs]
    tail = readers[0] if readers[0].op != Q else None
    quantize_out = readers[0] if tail is None else next(n for n in nodes if tail.outputs[0] in n.inputs)
    out_scale, out_zp, out_min, out_max = qparams_of(quantize_out)
    assert out_zp == 0
    act_min, act_max = out_min, out_max
    if tail is not None:
        lo = {"aten.relu.default": 0.0, "aten.hardtanh.default": tail.attrs.get("min_val", -1.0),
              "aten.clamp.default": tail.attrs.get("min")}[tail.op]
        hi = {"aten.relu.default": None, "aten.hardtanh.default": tail.attrs.get("max_val", 1.0),
              "aten.clamp.default": tail.attrs.get("max")}[tail.op]
        q = lambda v: int(quantize_per_tensor(np.float32(v), out_scale, 0, out_min, out_max, np.int64))
        act_min = max(act_min, q(lo)) if lo is not None else act_min
        act_max = min(act_max, q(hi)) if hi is not None else act_max

    bias_scales = in_scale * s_w
    bias = None
    if bias_value is not None:
        b, s_b = constant_channels(bias_value)
        b = np.asarray(b, np.int64).reshape(-1)
        bias = np.where(s_b == bias_scales, b, np.rint(b * s_b / bias_scales)).astype(np.int64)
    pairs = [quantize_multiplier(float(s) / out_scale) for s in bias_scales]
    mults, shifts = [m for m, _ in pairs], [s for _, s in pairs]
    return linear_s16(xq, w.astype(np.int8), bias, mults, shifts, act_min, act_max), out_scale


def first(result):
    return np.asarray(result[0] if isinstance(result, tuple) else result)


def check_against_references(qgraph, lowered, shape):
    off = total = 0
    for (x,) in samples(6, 3, shape):
        x = x.numpy()
        fake, got = first(qgraph.run(x)), first(lowered.run(x))
        want, scale = numpy_reference(qgraph, x)
        assert np.array_equal(got, dequantize_per_tensor(want, scale, 0))
        # The fake-quantized output in LSB of the int16 output (its values are multiples of them).
        fake_lsb = np.rint(fake.astype(np.float64) / scale)
        assert np.max(np.abs(fake_lsb - want)) <= 1
        off += int(np.count_nonzero(fake_lsb != want))
        total += want.size
        assert np.count_nonzero(want) > want.size // 4  # not vacuous
    assert off <= 0.2 * total, (off, total)


MODULES = {
    "linear_bias_batch4": (lambda: Linear(), (4, 12)),
    "linear_no_bias": (lambda: Linear(bias=False), (3, 12)),
    "linear_3d_input": (lambda: Linear(k=33, n=7), (2, 3, 33)),
    "linear_relu": (lambda: Linear(tail=nn.ReLU()), (5, 12)),
    "linear_hardtanh": (lambda: Linear(tail=nn.Hardtanh(-0.4, 0.3)), (5, 12)),
    "addmm_transposed_weight": (lambda: Addmm(), (4, 9)),
    "addmm_constant_mat2": (lambda: Addmm(transposed=False), (2, 9)),
}


@pytest.mark.parametrize("name", list(MODULES))
def test_int16_linears_lower_to_linear_s16_bit_exact(name):
    make, shape = MODULES[name]
    qgraph, lowered = lower(make(), shape)
    counts = lowered.op_counts()
    assert counts.get(LINEAR_S16) == 1, counts
    assert not [op for op in counts if op.startswith("aten.")], counts
    node = next(n for n in lowered.nodes if n.op == LINEAR_S16)
    assert node.inputs[0].dtype == "int16" and node.outputs[0].dtype == "int16"
    assert node.inputs[2].dtype == "int64"
    assert all(s <= 7 for s in node.attrs["requantize_shifts"])
    if name in ("linear_relu", "linear_hardtanh"):
        assert node.attrs["activation_min"] > -32768 or node.attrs["activation_max"] < 32767
    check_against_references(qgraph, lowered, shape)


@pytest.mark.parametrize("name", ["linear_bias_batch4", "linear_relu", "addmm_transposed_weight"])
def test_per_tensor_weights_give_one_multiplier(name):
    make, shape = MODULES[name]
    qgraph, lowered = lower(make(), shape, per_channel=False)
    node = next(n for n in lowered.nodes if n.op == LINEAR_S16)
    assert len(node.attrs["requantize_multipliers"]) == len(node.attrs["requantize_shifts"]) == 1
    check_against_references(qgraph, lowered, shape)


class LinearViewRelu(nn.Module):
    """A relu the quantizer cannot pattern with the linear (a view between): ActivationFusion
    folds the int16 relu into quantized_linear_s16's range."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 6)

    def forward(self, x):
        return torch.relu(self.fc(x).reshape(2, 3, 6))


def test_activation_fusion_folds_an_int16_relu_into_linear_s16():
    qgraph, lowered = lower(LinearViewRelu(), (6, 8))
    counts = lowered.op_counts()
    assert counts.get(LINEAR_S16) == 1, counts
    assert "aten.relu.default" not in counts and "cortex_m.quantized_activation.default" not in counts, counts
    node = next(n for n in lowered.nodes if n.op == LINEAR_S16)
    assert node.attrs["activation_min"] == 0
    assert "aten.relu.default" in node.meta.get("fused_activation", "")
    scale = next(n for n in lowered.nodes
                 if n.op == "cortex_m.dequantize_per_tensor.default").inputs[0].qparams["scales"][0]
    for (x,) in samples(4, 5, (6, 8)):
        fake, got = first(qgraph.run(x.numpy())), first(lowered.run(x.numpy()))
        assert got.min() == 0 and got.max() > 0
        assert np.max(np.abs(np.rint(fake.astype(np.float64) / scale) -
                             np.rint(got.astype(np.float64) / scale))) <= 1


def test_int8_linears_still_lower_to_quantized_linear():
    torch.manual_seed(0)
    graph = cortexm.export(Linear(tail=nn.ReLU()).eval(), samples(1, 1, (4, 12))[0])
    qgraph = cortexm.quantize(graph, samples(4, 2, (4, 12)), progress=False)
    counts = cortexm.lower(qgraph, "cortex-m55+int8").op_counts()
    assert counts.get("cortex_m.quantized_linear.default") == 1, counts
    assert LINEAR_S16 not in counts, counts


def test_silero_lstm_linears_become_linear_s16():
    import zoo

    _, _, calibration, graph = zoo.exported("silero_vad")
    quantizer = cortexm.CortexMQuantizer(activation_dtype="int16", fuse_magnitude=True)
    qgraph = cortexm.quantize(graph, calibration(2), quantizer, progress=False)
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    counts = lowered.op_counts()
    assert counts.get(LINEAR_S16) == 2, counts
    assert "aten.linear.default" not in counts and "aten.addmm.default" not in counts, counts
    for node in lowered.nodes:
        if node.op == LINEAR_S16:
            assert tuple(node.inputs[1].shape) == (512, 128), node.inputs[1].shape
            assert node.inputs[0].dtype == node.outputs[0].dtype == "int16"


class TwoLayer(nn.Module):
    """linear + relu, then a linear without bias: two int16 linears."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 16)
        self.fc2 = nn.Linear(16, 5, bias=False)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def test_program_runs_linear_s16_bit_exact_with_the_lowered_graph():
    _, lowered = lower(TwoLayer(), (3, 20))
    assert lowered.op_counts().get(LINEAR_S16) == 2
    x = samples(1, 4, (3, 20))[0][0].numpy()
    program = cortexm.to_program(lowered, bundle_inputs=(x,))
    assert program.float_ops == 0
    assert program.memory_plan().arena_size == program.arena_size
    for (sample,) in samples(4, 5, (3, 20)):
        got, want = first(program.run(sample.numpy())), first(lowered.run(sample.numpy()))
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    assert program.verify() == 1


@pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")
@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4"])
def test_linear_s16_program_on_qemu_is_bit_identical_with_the_host(cpu):
    from cortexm import qemu

    qgraph, lowered = lower(TwoLayer(), (3, 20))
    program = cortexm.to_program(cortexm.lower(qgraph, f"{cpu}+int8"))
    x = samples(1, 6, (3, 20))[0][0].numpy()
    result = qemu.run(program, [x], cpu)
    host = first(program.run(x))
    assert len(result.outputs) == 1
    assert result.outputs[0].dtype == host.dtype and result.outputs[0].tobytes() == host.tobytes()


class ConvRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 5, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


def test_activation_fusion_folds_an_int16_relu_into_conv2d_s16():
    qgraph, lowered = lower(ConvRelu(), (2, 3, 10))
    counts = lowered.op_counts()
    assert "aten.relu.default" not in counts, counts
    node = next(n for n in lowered.nodes if n.op == "cortex_m.quantized_conv2d_s16.default")
    assert node.attrs["activation_min"] == 0 and node.attrs["activation_max"] == 32767
    assert "aten.relu.default" in node.meta.get("fused_activation", "")
    scale = next(n for n in lowered.nodes
                 if n.op == "cortex_m.dequantize_per_tensor.default").inputs[0].qparams["scales"][0]
    for (x,) in samples(4, 5, (2, 3, 10)):
        fake, got = first(qgraph.run(x.numpy())), first(lowered.run(x.numpy()))
        assert got.min() == 0 and got.max() > 0
        assert np.max(np.abs(np.rint(fake.astype(np.float64) / scale) -
                             np.rint(got.astype(np.float64) / scale))) <= 1


@pytest.mark.parametrize("int16_value,reason", [
    ("input", "output 'linear' is not an int16 per-tensor quantized value"),
    ("linear", "output 'linear' (int16[2, 5] q("),
])
def test_mixed_int8_int16_linears_stay_float_with_the_reason(int16_value, reason):
    torch.manual_seed(0)
    graph = cortexm.export(nn.Sequential(nn.Linear(12, 5)).eval(), samples(1, 1, (2, 12))[0])
    quantizer = cortexm.CortexMQuantizer(int16_activations=(int16_value,))
    qgraph = cortexm.quantize(graph, samples(4, 2, (2, 12)), quantizer, progress=False)
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    node = next(n for n in lowered.nodes if n.op == "aten.linear.default")
    assert node.meta["lowering"].startswith("float: " + reason), node.meta["lowering"]
    assert LINEAR_S16 not in lowered.op_counts()
    assert "cortex_m.quantized_linear.default" not in lowered.op_counts()
