"""int16 elementwise activations lowered (CortexMQuantizer(activation_dtype="int16")): sigmoid,
tanh, silu, gelu, hardswish, sqrt, abs, hardsigmoid -> cortex_m.quantized_activation_s16 (TFLite's
513-entry table, built by LUTPopulate from the op's float function); relu / hardtanh / clamp left
unfused -> cortex_m.requantize_s16 with the clamp as its range; an int16 -> int16 dequantize ->
quantize pair -> requantize_s16; an int16 mean over size-1 dims -> a view (or requantize_s16).
The lowered output stays within a few int16 LSB of the fake-quantized graph; silero_vad's
sigmoid / tanh / relu / mean all lower."""

import shutil

import numpy as np
import pytest

import cortexm

torch = pytest.importorskip("torch")
nn = torch.nn

INT16 = cortexm.CortexMQuantizer(activation_dtype="int16")


class Unary(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def samples(n, seed, shape=(2, 37), amplitude=3.0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(*shape, generator=g) * amplitude,) for _ in range(n)]


def lower(module, shape=(2, 37), amplitude=3.0):
    graph = cortexm.export(module.eval(), samples(1, 1, shape, amplitude)[0])
    qgraph = cortexm.quantize(graph, samples(6, 2, shape, amplitude), INT16, progress=False)
    return qgraph, cortexm.lower(qgraph, "cortex-m55+int8")


def worst_lsb(qgraph, lowered, shape=(2, 37), amplitude=3.0):
    """Largest |lowered - fake-quantized| over fresh inputs, in LSB of each output's int16 scale."""
    scales = {}
    for n in lowered.nodes:
        if n.op == "cortex_m.dequantize_per_tensor.default":
            scales[n.outputs[0].name] = n.inputs[0].qparams["scales"][0]
    worst = 0.0
    for (x,) in samples(6, 3, shape, amplitude):
        want, got = qgraph.run(x.numpy()), lowered.run(x.numpy())
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for out, a, b in zip(lowered.outputs, want, got):
            lsb = np.rint(np.abs(np.asarray(a, np.float64) - np.asarray(b)) / scales[out.name])
            worst = max(worst, float(np.max(lsb)))
    return worst


FLOAT_COMPUTE = ("aten.sigmoid.default", "aten.tanh.default", "aten.silu.default",
                 "aten.gelu.default", "aten.hardswish.default", "aten.sqrt.default",
                 "aten.abs.default", "aten.relu.default", "aten.hardtanh.default",
                 "aten.clamp.default", "aten.hardsigmoid.default", "aten.mean.dim")

# name: (function, cortex_m op it lowers to, max error in output LSB as measured; inputs of
# std 3, calibrated to about +-9.9, so a table segment spans 0.04)
ACTIVATIONS = {
    "sigmoid": (torch.sigmoid, "quantized_activation_s16", 2),
    "tanh": (torch.tanh, "quantized_activation_s16", 7),
    "silu": (nn.functional.silu, "quantized_activation_s16", 2),
    "gelu": (nn.functional.gelu, "quantized_activation_s16", 2),
    "hardswish": (nn.functional.hardswish, "quantized_activation_s16", 2),
    "abs": (torch.abs, "quantized_activation_s16", 1),
    # three tables: abs, + 1, sqrt
    "sqrt_of_abs_plus_1": (lambda x: torch.sqrt(torch.abs(x) + 1.0), "quantized_activation_s16", 4),
    "relu": (torch.relu, "requantize_s16", 0),
    "hardtanh": (lambda x: nn.functional.hardtanh(x, -1.5, 2.0), "requantize_s16", 0),
    "clamp": (lambda x: torch.clamp(x, min=-0.5), "requantize_s16", 0),
}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_int16_activation_lowers_within_a_few_lsb(name):
    fn, op, bound = ACTIVATIONS[name]
    qgraph, lowered = lower(Unary(fn))
    counts = lowered.op_counts()
    assert counts.get(f"cortex_m.{op}.default", 0) >= 1, counts
    assert not [o for o in FLOAT_COMPUTE if o in counts], counts
    for n in lowered.nodes:
        if n.op == "cortex_m.quantized_activation_s16.default":
            assert n.inputs[0].dtype == "int16" and n.outputs[0].dtype == "int16"
            assert tuple(n.inputs[1].shape) == (513,) and n.inputs[1].dtype == "int16"
    assert worst_lsb(qgraph, lowered) <= bound


def test_relu_with_equal_scales_is_bit_exact():
    # relu on a value that also feeds another output: its qparams are the input's.
    class TwoOutputs(nn.Module):
        def forward(self, x):
            return torch.relu(x), x

    qgraph, lowered = lower(TwoOutputs())
    rq = [n for n in lowered.nodes if n.op == "cortex_m.requantize_s16.default"]
    assert rq and all(n.attrs["activation_min"] == 0 for n in rq)
    assert worst_lsb(qgraph, lowered) == 0.0


class CatMean(nn.Module):
    """tanh and sigmoid at different output scales into one cat (an int16 dequantize -> quantize
    in front of it), then a mean over a size-1 dim."""

    def forward(self, x):
        return torch.cat([torch.tanh(x), torch.sigmoid(x)], dim=1).mean(dim=-1)


def test_int16_requantize_before_cat_and_mean_over_size_one_dims():
    qgraph, lowered = lower(CatMean(), shape=(1, 6, 1))
    counts = lowered.op_counts()
    # tanh and sigmoid outputs at the fixed 1/32768, the cat at its calibrated scale: both requantize
    assert counts.get("cortex_m.requantize_s16.default") == 2, counts
    assert counts.get("cortex_m.quantized_activation_s16.default") == 2, counts
    assert "aten.mean.dim" not in counts and "aten.cat.default" in counts, counts
    quantize_ops = ("quantized_decomposed.quantize_per_tensor.default",
                    "cortex_m.quantize_per_tensor.default")
    assert sum(counts.get(o, 0) for o in quantize_ops) == 1, counts  # the graph input's only
    for rq in (n for n in lowered.nodes if n.op == "cortex_m.requantize_s16.default"):
        assert rq.inputs[0].dtype == "int16" and rq.outputs[0].dtype == "int16"
    assert worst_lsb(qgraph, lowered, shape=(1, 6, 1)) <= 7  # tanh over +-11


def test_int16_mean_over_more_than_one_element_is_quantized_mean_s16():
    class Mean(nn.Module):
        def forward(self, x):
            return torch.tanh(x).mean(dim=-1)

    _, lowered = lower(Mean(), shape=(1, 6, 3))
    counts = lowered.op_counts()
    assert "aten.mean.dim" not in counts and counts.get("cortex_m.quantized_mean_s16.default") == 1, counts


def test_silero_vad_int16_activations_lower():
    import zoo

    _, example, calibration, graph = zoo.exported("silero_vad")
    quantizer = cortexm.CortexMQuantizer(activation_dtype="int16", fuse_magnitude=True)
    qgraph = cortexm.quantize(graph, calibration(2), quantizer, progress=False)
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    counts = lowered.op_counts()
    assert counts.get("cortex_m.quantized_activation_s16.default") == 6, counts  # 4 sigmoid, 2 tanh
    # the relu on h (the new state reads h too) and the cat input; the encoder relus fold into their convs
    assert counts.get("cortex_m.requantize_s16.default") == 2, counts
    assert not [o for o in FLOAT_COMPUTE if o in counts], counts
    scales = {n.outputs[0].name: n.inputs[0].qparams["scales"][0] for n in lowered.nodes
              if n.op == "cortex_m.dequantize_per_tensor.default"}
    g = torch.Generator().manual_seed(3)
    worst = [0.0] * len(lowered.outputs)
    for k in range(4):
        x = (torch.randn(*example[0].shape, generator=g) * (0.3 if k % 2 else 0.01)).numpy()
        state = (torch.randn(*example[1].shape, generator=g) * 0.5).numpy()
        for i, (out, a, b) in enumerate(zip(lowered.outputs, qgraph.run(x, state),
                                            lowered.run(x, state))):
            lsb = np.rint(np.abs(np.asarray(a, np.float64) - np.asarray(b)) / scales[out.name])
            worst[i] = max(worst[i], float(np.max(lsb)))
    # measured: the probability within 1 LSB of 1/32768, the new state within 11 LSB of 1.0e-4
    # (the int16 convs' 1-LSB differences, amplified by the LSTM's linears); bounds with margin
    # for the add / mul lowering still to come.
    assert worst[0] <= 2 and worst[1] <= 16, worst


def as_tuple(v):
    return v if isinstance(v, tuple) else (v,)


@pytest.mark.parametrize("name", ["sigmoid", "gelu", "relu"])
def test_program_runs_bit_exact_with_the_lowered_graph(name):
    _, lowered = lower(Unary(ACTIVATIONS[name][0]))
    program = cortexm.to_program(lowered, bundle_inputs=(samples(1, 4)[0][0].numpy(),))
    assert program.float_ops == 0
    for (x,) in samples(4, 5):
        got, want = as_tuple(program.run(x.numpy())), as_tuple(lowered.run(x.numpy()))
        assert all(a.dtype == b.dtype and a.tobytes() == b.tobytes() for a, b in zip(got, want))
    assert program.verify() == 1


def test_cat_mean_program_runs_bit_exact_with_the_lowered_graph():
    _, lowered = lower(CatMean(), shape=(1, 6, 1))
    program = cortexm.to_program(lowered, bundle_inputs=(samples(1, 4, (1, 6, 1))[0][0].numpy(),))
    assert program.float_ops == 0
    for (x,) in samples(4, 5, (1, 6, 1)):
        got, want = as_tuple(program.run(x.numpy())), as_tuple(lowered.run(x.numpy()))
        assert all(a.dtype == b.dtype and a.tobytes() == b.tobytes() for a, b in zip(got, want))


@pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")
def test_int16_activations_on_qemu_are_bit_identical_with_the_host():
    from cortexm import qemu

    _, lowered = lower(Unary(lambda x: torch.sigmoid(torch.tanh(x))))
    program = cortexm.to_program(lowered, target="cortex-m55+int8")
    x = samples(1, 6)[0][0].numpy()
    result = qemu.run(program, [x], "cortex-m55")
    host = as_tuple(program.run(x))
    assert len(result.outputs) == len(host)
    for got, want in zip(result.outputs, host):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("name, fn", [
    ("sigmoid", lambda v: 1 / (1 + np.exp(-v))),
    ("tanh", np.tanh),
    ("silu", lambda v: v / (1 + np.exp(-v))),
])
def test_lowered_table_is_lut_populate_of_the_function(name, fn):
    """The pass's table (f run in float32 on the sample points) against numpy's LUTPopulate in
    float64: equal but for entries where float32 moves a rounding (at most 1)."""
    from numpy_reference.activation_s16 import lut_populate_s16

    _, lowered = lower(Unary(ACTIVATIONS[name][0]))
    node = next(n for n in lowered.nodes if n.op == "cortex_m.quantized_activation_s16.default")
    table = np.asarray(node.inputs[1].data).astype(np.int64)
    want = lut_populate_s16(fn, node.inputs[0].qparams["scales"][0],
                            node.outputs[0].qparams["scales"][0]).astype(np.int64)
    assert np.max(np.abs(table - want)) <= 1
    assert np.mean(table == want) > 0.99  # measured: all 513 equal for these three
