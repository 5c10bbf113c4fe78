"""from_tflite against TFLite Micro for the int8 SVDF (int16 state and time weights): randomized
single-operator files (batches, ranks, memory sizes, qparams at their limits), several invocations
in a row: TFLite Micro keeps the state in its variable tensor, cortexm's program takes it as an input
after the file's and gives the new state as an output after the file's, which the next run takes
back. Byte for byte on the host, and on QEMU M55."""

from __future__ import annotations

import numpy as np
import pytest

import cortexm
from cortexm.tflite import program_io
from cortexm.tflite import schema as S
from test_tflite_import import log_uniform, zero_point
from test_tflite_mlperf_tiny import needs_qemu
from tflite_compare import float_ops, needs_tflm, random_input, tflm_interpreter
from tflite_writer import ModelBuilder

MODELS = 24
STEPS = 6  # invocations in a row


def svdf_model(rng, state_zero_point=None, activation=None):
    batches, input_size = int(rng.integers(1, 4)), int(rng.integers(1, 13))
    rank, units, memory = int(rng.integers(1, 4)), int(rng.integers(1, 7)), int(rng.integers(1, 11))
    filters = units * rank
    s_in = log_uniform(rng, 1e-3, 1.0)
    s_wf = log_uniform(rng, 1e-3, 1e-1)
    s_state = np.float32(s_in * s_wf * 127 * 128 * np.sqrt(input_size) / 32767 / rng.uniform(0.05, 1.5))
    s_wt = log_uniform(rng, 1e-5, 1e-2)
    s_out = np.float32(s_state * s_wt * 16384 * 8192 * np.sqrt(rank * memory) / 127 / rng.uniform(0.02, 0.6))
    zp_state = (int(rng.choice([0, 0, -300, 250])) if state_zero_point is None else state_zero_point)
    wf = rng.integers(-128, 128, (filters, input_size)).astype(np.int8)
    wt = rng.integers(-16384, 16385, (filters, memory)).astype(np.int16)
    wt.reshape(-1)[rng.integers(0, wt.size)] = rng.choice([-32768, 32767])
    b = rng.integers(-(1 << 20), 1 << 20, units).astype(np.int32)
    m = ModelBuilder()
    x = m.tensor((batches, input_size), "INT8", s_in, zero_point(rng))
    t_wf = m.tensor((filters, input_size), "INT8", s_wf, 0, wf)
    t_wt = m.tensor((filters, memory), "INT16", s_wt, 0, wt)
    t_b = m.tensor((units,), "INT32", np.float32(s_state * s_wt), 0, b)
    state = m.tensor((batches, filters * memory), "INT16", s_state, zp_state, variable=True)
    zp_out = zero_point(rng) if rng.random() < 0.25 else int(rng.integers(-40, 41))  # extremes saturate half
    out = m.tensor((batches, units), "INT8", s_out, zp_out)
    act = int(rng.choice([0, 1])) if activation is None else activation  # TFLite Micro ignores it
    m.operator("SVDF", [x, t_wf, t_wt, t_b, state], [out], S.OPTIONS_SVDF,
               {S.SVDF_RANK: ("i", rank), S.SVDF_ACTIVATION: ("b", act)})
    return m.build([x], [out])


def run_both(model, seed, steps=STEPS, runner=None):
    """Each step's output and state from TFLite Micro's interpreter (one interpreter, invoked steps
    times) and from the cortexm program fed its own new state; returns the lowered graph."""
    graph = cortexm.from_tflite(model)
    lowered = cortexm.lower(graph, "cortex-m55+int8")
    io = program_io(model)
    assert io == "int16"
    program = cortexm.to_program(lowered, io=io)
    interpreter = tflm_interpreter(model)
    details = interpreter.get_input_details(0)
    state = np.zeros(tuple(lowered.inputs[1].shape), np.int16)  # TFLite Micro zeroes its variable tensors
    rng = np.random.default_rng(seed)
    for step in range(steps):
        x = random_input(rng, tuple(details["shape"]), details["dtype"])
        interpreter.set_input(x, 0)
        interpreter.invoke()
        want = interpreter.get_output(0)
        got, state = runner(program, x, state) if runner else program.run(x, state)
        got, state = np.asarray(got).reshape(want.shape), np.asarray(state)
        assert got.dtype == want.dtype and state.dtype == np.int16
        if not np.array_equal(got, want):
            diff = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
            raise AssertionError(f"step {step}: {diff.size} of {want.size} elements differ, first at {diff[0]}: "
                                 f"cortexm {got.reshape(-1)[diff[0]]} TFLM {want.reshape(-1)[diff[0]]}")
    return lowered


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_svdf_matches_tflm_over_invocations(seed):
    lowered = run_both(svdf_model(np.random.default_rng(3400 + seed)), seed)
    assert float_ops(lowered) == []
    ops = [n.op for n in lowered.nodes]
    assert "cortex_m.quantized_svdf_state.default" in ops and "cortex_m.quantized_svdf_output.default" in ops


@needs_tflm
def test_svdf_state_zero_point_and_long_runs_match_tflm():
    for k, zp in enumerate((-32768, -1000, 1000, 32767)):
        run_both(svdf_model(np.random.default_rng(3500 + k), state_zero_point=zp), k, steps=3 * STEPS)


def test_svdf_program_takes_and_gives_the_state_after_the_files_tensors():
    model = svdf_model(np.random.default_rng(3600))
    program = cortexm.to_program(cortexm.lower(cortexm.from_tflite(model), "cortex-m55+int8"), io=program_io(model))
    assert [s["dtype"] for s in program.inputs] == ["int8", "int16"]
    assert [s["dtype"] for s in program.outputs] == ["int8", "int16"]


def test_svdf_without_bias_and_with_int8_state_are_refused_naming_why():
    m = ModelBuilder()
    x = m.tensor((1, 4), "INT8", 0.1, 0)
    wf = m.tensor((2, 4), "INT8", 0.01, 0, np.ones((2, 4), np.int8))
    wt = m.tensor((2, 3), "INT16", 0.001, 0, np.ones((2, 3), np.int16))
    state = m.tensor((1, 6), "INT8", 0.01, 0, variable=True)
    out = m.tensor((1, 2), "INT8", 0.1, 0)
    m.operator("SVDF", [x, wf, wt, -1, state], [out], S.OPTIONS_SVDF, {S.SVDF_RANK: ("i", 1)})
    with pytest.raises(NotImplementedError, match="no bias"):
        cortexm.from_tflite(m.build([x], [out]))


@needs_tflm
@needs_qemu
def test_svdf_matches_tflm_on_qemu_m55():
    def on_qemu(program, x, state):
        return cortexm.run_on_qemu(program, [x, state], "cortex-m55")

    run_both(svdf_model(np.random.default_rng(3700), state_zero_point=0), 0, steps=3, runner=on_qemu)


def test_supported_operators_lists_the_new_ones():
    assert {"SVDF", "TRANSPOSE_CONV"} <= set(cortexm.tflite.supported_operators())


def _edit_params(d, kernel, field, value):
    op = next(o for o in d["ops"] if o["kernel"] == kernel)
    op["params"][field] = value


@pytest.mark.parametrize("kernel,field,value,message", [
    ("QuantizedSvdfOutput", "rank", 0, r"QuantizedSvdfOutput\): rank = 0: must be >= 1 and divide the filters"),
    ("QuantizedSvdfOutput", "shift", 31, r"QuantizedSvdfOutput\): shift = 31: must be in \[-31, 30\]"),
    ("QuantizedSvdfState", "memory", 0, r"QuantizedSvdfState\): state.shape\[1\] = \d+: must be filters \* memory"),
    ("QuantizedSvdfState", "input_offset", 300, r"QuantizedSvdfState\): input_offset = 300: must be in"),
])
def test_hand_edited_svdf_params_are_refused_at_load(tmp_path, kernel, field, value, message):
    from test_program import FLATC, from_json, load_bytes, to_json
    if FLATC is None:
        pytest.skip("flatc not installed")
    model = svdf_model(np.random.default_rng(3800), state_zero_point=0)
    program = cortexm.to_program(cortexm.lower(cortexm.from_tflite(model), "cortex-m55+int8"), io=program_io(model))
    doc = to_json(program.data, tmp_path)
    load_bytes(from_json(doc, tmp_path))  # the unedited round trip loads
    _edit_params(doc, kernel, field, value)
    with pytest.raises(ValueError, match=message):
        load_bytes(from_json(doc, tmp_path))


def test_svdf_rank_not_dividing_the_filters_is_malformed():
    m = ModelBuilder()
    x = m.tensor((1, 4), "INT8", 0.1, 0)
    wf = m.tensor((3, 4), "INT8", 0.01, 0, np.ones((3, 4), np.int8))
    wt = m.tensor((3, 2), "INT16", 0.001, 0, np.ones((3, 2), np.int16))
    b = m.tensor((1,), "INT32", np.float32(np.float32(0.01) * np.float32(0.001)), 0, np.zeros(1, np.int32))
    state = m.tensor((1, 6), "INT16", 0.01, 0, variable=True)
    out = m.tensor((1, 1), "INT8", 0.1, 0)
    m.operator("SVDF", [x, wf, wt, b, state], [out], S.OPTIONS_SVDF, {S.SVDF_RANK: ("i", 2)})
    with pytest.raises(ValueError, match="operator 0 SVDF .*rank 2 does not divide the 3 filters"):
        cortexm.from_tflite(m.build([x], [out]))
