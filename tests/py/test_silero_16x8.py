"""silero_vad in 16x8 (CortexMQuantizer(activation_dtype="int16", fuse_magnitude=True,
weight_rounding="gptq"): int16 activations, int8 GPTQ-rounded weights) lowered onto cortex_m
integer kernels only, as a program bit-exact with the lowered graph on the host and on QEMU, and
its speech probability against float (issue 6: within 0.02 on calibration-distribution inputs).

The bounds are the measured values (scripts/silero_vad_error.py --calibration 256, docs/lowering.md)
with a little room; the int8 default quantizer misses them by far (0.94 max), and the int8 weights
set the floor (16x8 with round-to-nearest weights: 0.025 max over the same 64 steps). Over 512
steps the tail is wider (p99 0.047, 1.4% of steps above 0.02, max 0.15): see docs/lowering.md.
"""

import shutil

import numpy as np
import pytest

import cortexm
from cortexm.aot import DATA_MOVEMENT

torch = pytest.importorskip("torch")

QUANTIZER = dict(activation_dtype="int16", fuse_magnitude=True, weight_rounding="gptq")
# GPTQ needs at least as many input vectors per op as its weight has columns (silero's encoder
# convs take 384 with 2 positions per step): 256 steps determine every layer.
CALIBRATION, EVAL = 256, 64
MEAN_BOUND = 0.0025  # measured 0.0018 (round to nearest: 0.0030)
STREAM_MAX_BOUND, STREAM_MEAN_BOUND = 0.04, 0.0015  # measured 0.019, 0.0007 (nearest: 0.081, 0.0026)


@pytest.fixture(scope="module")
def silero():
    import zoo

    model, example, calibration, graph = zoo.exported("silero_vad")
    qgraph = cortexm.quantize(graph, calibration(CALIBRATION, seed=0), cortexm.CortexMQuantizer(**QUANTIZER),
                              progress=False)
    return model, example, calibration, qgraph, cortexm.lower(qgraph, "cortex-m55+int8")


def test_every_compute_op_is_an_integer_kernel(silero):
    *_, lowered = silero
    for node in lowered.nodes:
        if node.op.startswith("cortex_m."):
            continue
        assert node.op in DATA_MOVEMENT, f"{node.name}: {node.op} is a float compute op"
        dtypes = {str(v.dtype) for v in list(node.inputs[:1]) + list(node.outputs)}
        assert dtypes <= {"int8", "int16"}, f"{node.name}: {node.op} moves {dtypes}"
    ops = lowered.op_counts()
    for op in ("quantized_conv2d_s16", "quantized_linear_s16", "quantized_add_s16", "quantized_mul_s16",
               "quantized_activation_s16", "quantized_magnitude_s16"):
        assert ops.get(f"cortex_m.{op}.default", 0) > 0, ops
    # quantize / dequantize at the graph's inputs and outputs only
    assert ops["cortex_m.quantize_per_tensor.default"] == 2 and ops["cortex_m.dequantize_per_tensor.default"] == 2


def test_probability_within_0_02_of_float_on_calibration_distribution_steps(silero):
    model, _, calibration, qgraph, lowered = silero
    errors, fake = [], []
    for sample in calibration(EVAL, seed=1):  # steps calibration did not see
        with torch.no_grad():
            want = model(*sample)[0].item()
        arrays = [t.numpy() for t in sample]
        errors.append(abs(float(np.asarray(lowered.run(*arrays)[0]).reshape(-1)[0]) - want))
        fake.append(abs(float(np.asarray(qgraph.run(*arrays)[0]).reshape(-1)[0]) - want))
    errors, fake = np.array(errors), np.array(fake)
    print(f"|p - p_float| over {EVAL} steps: lowered max {errors.max():.4f} mean {errors.mean():.4f}; "
          f"fake-quantized max {fake.max():.4f} mean {fake.mean():.4f}")
    assert errors.max() <= 0.02
    assert errors.mean() <= MEAN_BOUND
    assert abs(errors.mean() - fake.mean()) <= 0.0005  # the kernels add nothing to speak of


def test_real_speech_streams_like_float(silero):
    """espeak-ng speech in noise streamed chunk by chunk, each graph carrying its own state: the
    int16 state does not drift (int8 state: 0.98 max, 68 decisions flipped)."""
    from cortexm.models import silero_vad

    model, *_, lowered = silero
    try:
        audio, _, _ = silero_vad.speech_in_noise(silero_vad.espeak_speech())
    except RuntimeError as e:
        pytest.skip(str(e))
    want, _, _ = silero_vad.stream(model, torch.from_numpy(audio))
    want = want[0].numpy()
    got = silero_vad.stream_graph(lowered, audio)
    e = np.abs(got - want)
    print(f"real speech stream, {len(e)} chunks: max {e.max():.4f} mean {e.mean():.4f}")
    assert e.max() <= STREAM_MAX_BOUND and e.mean() <= STREAM_MEAN_BOUND
    assert np.array_equal(got > 0.5, want > 0.5)


def test_program_is_bit_exact_with_the_lowered_graph(silero):
    _, example, calibration, _, lowered = silero
    program = cortexm.to_program(lowered, bundle_inputs=tuple(t.numpy() for t in example))
    assert program.float_ops == 0 and program.verify() == 1
    for sample in calibration(4, seed=9):
        arrays = [t.numpy() for t in sample]
        got, want = program.run(*arrays), lowered.run(*arrays)
        assert all(a.dtype == b.dtype and a.tobytes() == b.tobytes() for a, b in zip(got, want))


@pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")
@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4"])
def test_program_on_qemu_is_bit_identical_with_the_host(silero, cpu):
    from cortexm import qemu

    _, _, calibration, _, lowered = silero
    program = cortexm.to_program(cortexm.lower(silero[3], f"{cpu}+int8"), target=f"{cpu}+int8")
    arrays = [t.numpy() for t in next(iter(calibration(1, seed=11)))]
    result = qemu.run(program, arrays, cpu)
    host = program.run(*arrays)
    assert len(result.outputs) == len(host)
    for got, want in zip(result.outputs, host):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
