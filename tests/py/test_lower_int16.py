"""The int16 front end (CortexMQuantizer(int16_activations=..., fuse_magnitude=True)) lowered: the
STFT-style conv1d on an int16 input -> cortex_m.quantized_conv2d_s16, sqrt(re^2 + im^2) ->
cortex_m.quantized_magnitude_s16, a conv on the int16 magnitude with an int8 output ->
quantized_conv2d_s16 + requantize_s16; no float compute op left, and the lowered output within
1 int8 LSB of the fake-quantized graph."""

import shutil

import numpy as np
import pytest

import cortexm

torch = pytest.importorskip("torch")
nn = torch.nn

FRONT_END = ("x", "convolution", "sqrt")
FLOAT_COMPUTE = ("aten.convolution.default", "aten.mul.Tensor", "aten.add.Tensor",
                 "aten.sqrt.default")


class FrontEnd(nn.Module):
    """Silero's front end in small: learned-basis STFT, magnitude, conv + relu."""

    def __init__(self, bins=9, window=16, hop=8):
        super().__init__()
        self.bins = bins
        self.stft = nn.Conv1d(1, 2 * bins, window, stride=hop, bias=False)
        self.enc = nn.Conv1d(bins, 6, 3, padding=1)
        self.tail = nn.Conv1d(6, 4, 1)

    def forward(self, x):
        y = self.stft(x.unsqueeze(1))
        re, im = y[:, :self.bins], y[:, self.bins:]
        h = torch.relu(self.enc(torch.sqrt(re * re + im * im)))
        return self.tail(h)


def samples(n, seed, amplitude):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(2, 80, generator=g) * amplitude,) for _ in range(n)]


def lower(module, amplitude=0.1):
    torch.manual_seed(0)
    module = module.eval()
    graph = cortexm.export(module, samples(1, 1, amplitude)[0])
    quantizer = cortexm.CortexMQuantizer(int16_activations=FRONT_END, fuse_magnitude=True)
    qgraph = cortexm.quantize(graph, samples(6, 2, amplitude), quantizer, progress=False)
    return qgraph, cortexm.lower(qgraph, "cortex-m55+int8")


@pytest.mark.parametrize("amplitude", [0.1, 0.003])
def test_front_end_lowers_to_int16_kernels_within_one_lsb(amplitude):
    qgraph, lowered = lower(FrontEnd(), amplitude)
    counts = lowered.op_counts()
    assert counts.get("cortex_m.quantized_conv2d_s16.default") == 2, counts
    assert counts.get("cortex_m.quantized_magnitude_s16.default") == 1, counts
    assert counts.get("cortex_m.requantize_s16.default") == 1, counts
    assert not [op for op in FLOAT_COMPUTE if op in counts], counts

    stft = next(n for n in lowered.nodes if n.op == "cortex_m.quantized_conv2d_s16.default")
    assert stft.inputs[0].dtype == "int16" and stft.outputs[0].dtype == "int16"
    magnitude = next(n for n in lowered.nodes if n.op == "cortex_m.quantized_magnitude_s16.default")
    assert magnitude.outputs[0].dtype == "int16"
    assert magnitude.inputs[0].qparams["scales"] == magnitude.inputs[1].qparams["scales"]

    # The graph output is float (dequantized); compare in LSB of its int8 quantization.
    dq = next(n for n in lowered.nodes if n.op == "cortex_m.dequantize_per_tensor.default")
    scale = dq.inputs[0].qparams["scales"][0]
    off, total, worst = 0, 0, 0.0
    for (x,) in samples(8, 3, amplitude):
        fake = np.asarray(qgraph.run(x.numpy())[0])
        got = np.asarray(lowered.run(x.numpy())[0])
        lsb = np.abs(fake - got) / scale
        worst = max(worst, float(lsb.max()))
        off += int(np.count_nonzero(lsb > 0.5))
        total += lsb.size
    assert worst <= 1.0 + 1e-3
    assert off <= 0.05 * total, (off, total)


def test_a_sqrt_that_is_not_a_magnitude_stays_a_table():
    class Sqrt(nn.Module):
        def forward(self, x):
            return torch.sqrt(torch.relu(x) * 2.0 + 0.5)

    graph = cortexm.export(Sqrt().eval(), samples(1, 1, 1.0)[0])
    qgraph = cortexm.quantize(graph, samples(4, 2, 1.0), progress=False)
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    counts = lowered.op_counts()
    assert "aten.sqrt.default" not in counts
    assert "cortex_m.quantized_magnitude_s16.default" not in counts



def test_silero_front_end_lowers_with_no_float_compute_op():
    import zoo

    _, _, calibration, graph = zoo.exported("silero_vad")
    quantizer = cortexm.CortexMQuantizer(int16_activations=FRONT_END, fuse_magnitude=True)
    qgraph = cortexm.quantize(graph, calibration(2), quantizer, progress=False)
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    counts = lowered.op_counts()
    assert counts.get("cortex_m.quantized_conv2d_s16.default") == 2, counts  # STFT, encoder 0
    assert counts.get("cortex_m.quantized_magnitude_s16.default") == 1, counts
    assert counts.get("cortex_m.requantize_s16.default") == 1, counts
    data_movement = ("aten.cat.default", "aten.reflection_pad1d.default")
    floats = [op for op in counts if op.startswith("aten.") and "copy" not in op
              and op not in data_movement]
    assert not floats, counts
    stft = next(n for n in lowered.nodes if n.op == "cortex_m.quantized_conv2d_s16.default")
    assert tuple(stft.inputs[1].shape) == (258, 1, 256, 1)
    assert all(s <= 7 for s in stft.attrs["requantize_shifts"])


@pytest.mark.parametrize("amplitude", [0.1, 0.003])
def test_program_runs_the_int16_kernels_bit_exact_with_the_lowered_graph(amplitude):
    _, lowered = lower(FrontEnd(), amplitude)
    x = samples(1, 4, amplitude)[0][0].numpy()
    program = cortexm.to_program(lowered, bundle_inputs=(x,))
    assert program.float_ops == 0
    assert "+ 0 B scratch the graph does not declare" in program.layout
    assert program.memory_plan().arena_size == program.arena_size
    for (sample,) in samples(4, 5, amplitude):
        got, want = program.run(sample.numpy()), lowered.run(sample.numpy())
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        assert all(a.dtype == b.dtype and a.tobytes() == b.tobytes() for a, b in zip(got, want))
    assert program.verify() == 1


def test_silero_int16_front_end_program_matches_the_lowered_graph():
    import zoo

    _, example, calibration, graph = zoo.exported("silero_vad")
    quantizer = cortexm.CortexMQuantizer(int16_activations=FRONT_END, fuse_magnitude=True)
    lowered = cortexm.lower(cortexm.quantize(graph, calibration(2), quantizer, progress=False),
                            "cortex-m55+int8")
    inputs = [t.numpy() for t in example]
    program = cortexm.to_program(lowered, bundle_inputs=tuple(inputs))
    assert program.float_ops == 0
    for sample in calibration(3, seed=7):
        got, want = program.run(*[t.numpy() for t in sample]), lowered.run(*[t.numpy() for t in sample])
        assert all(a.dtype == b.dtype and a.tobytes() == b.tobytes() for a, b in zip(got, want))


@pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")
@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4"])
def test_int16_front_end_on_qemu_is_bit_identical_with_the_host(cpu):
    from cortexm import qemu

    qgraph, _ = lower(FrontEnd(), 0.003)
    program = cortexm.to_program(cortexm.lower(qgraph, f"{cpu}+int8"))
    x = samples(1, 6, 0.003)[0][0].numpy()
    result = qemu.run(program, [x], cpu)
    host = program.run(x)
    host = list(host) if isinstance(host, tuple) else [host]
    assert len(result.outputs) == len(host)
    for got, want in zip(result.outputs, host):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
