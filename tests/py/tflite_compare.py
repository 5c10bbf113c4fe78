"""Runs a .tflite through TFLite Micro's interpreter (the tflite-micro wheel) and through cortexm
(from_tflite -> lower -> to_program, io="int8" for a model with integer inputs and outputs) on the
same inputs, for byte-for-byte comparisons."""

from __future__ import annotations

import numpy as np
import pytest

import cortexm
from cortexm.tflite import program_io
from cortexm.tflite.model import parse

try:
    from tflite_micro.python.tflite_micro import runtime as tflm_runtime
    TFLM_REASON = ""
except Exception as e:  # the wheel is missing or does not load on this machine
    tflm_runtime = None
    TFLM_REASON = f"the tflite-micro wheel does not import ({type(e).__name__}: {e}); pip install tflite-micro"

NUMPY = {"INT8": np.int8, "INT16": np.int16, "FLOAT32": np.float32}
needs_tflm = pytest.mark.skipif(tflm_runtime is None, reason=TFLM_REASON or "tflite-micro imports")


def tflm_interpreter(model: bytes):
    """TFLite Micro's interpreter with an arena for the tests' activations (the wheel's default
    is 10 times the file's size, too small for a small file with large tensors)."""
    return tflm_runtime.Interpreter.from_bytes(model, arena_size=max(10 * len(model), 4 << 20))


def tflm_runner(model: bytes, n_outputs: int = 1):
    interpreter = tflm_interpreter(model)

    def run(inputs):
        for k, x in enumerate(inputs):
            interpreter.set_input(x, k)
        interpreter.invoke()
        return [interpreter.get_output(k).copy() for k in range(n_outputs)]

    return run


def cortexm_program(model: bytes, target: str = "cortex-m55+int8"):
    graph = cortexm.from_tflite(model)
    lowered = cortexm.lower(graph, target)
    return lowered, cortexm.to_program(lowered, io=program_io(model))


def assert_qemu_matches_tflm(model: bytes, cpu: str, runs: int) -> None:
    """The model's program for `cpu` on QEMU gives TFLM's interpreter's output byte for byte on
    `runs` random inputs (one input, one output)."""
    _, program = cortexm_program(model, f"{cpu}+int8")
    details = tflm_interpreter(model).get_input_details(0)
    tflm = tflm_runner(model)
    rng = np.random.default_rng(0)
    for _ in range(runs):
        x = random_input(rng, tuple(details["shape"]), details["dtype"])
        want = tflm([x])[0]
        np.testing.assert_array_equal(np.asarray(cortexm.run_on_qemu(program, [x], cpu)).reshape(want.shape), want)


def float_ops(lowered) -> list:
    """aten compute ops left float in a lowered graph (data movement excluded)."""
    return [n.op for n in lowered.nodes if n.op.startswith("aten.") and not cortexm._core.op_info(n.op).is_data_movement]


def random_input(rng, shape, dtype):
    if np.dtype(dtype) == np.float32:
        return rng.standard_normal(shape).astype(np.float32)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape, dtype=np.int64).astype(dtype)


def compare(model: bytes, cases: int, seed: int = 0, n_outputs: int = 1):
    """(cases compared, the lowered graph): cortexm's host program against TFLite Micro, byte for byte.
    The program takes the file's integers (program_io "int8" / "int16"); in a float program
    (program_io "float") an int16 boundary goes in as q * scale and comes back rounded."""
    lowered, program = cortexm_program(model)
    integer_io = program_io(model) != "float"
    tflm = tflm_runner(model, n_outputs)
    parsed = parse(model, "model")
    ins = [parsed.tensors[i] for i in parsed.inputs]
    outs = [parsed.tensors[i] for i in parsed.outputs]
    rng = np.random.default_rng(seed)
    for case in range(cases):
        inputs = [random_input(rng, t.shape, NUMPY[t.type]) for t in ins]
        want = tflm(inputs)
        given = [x.astype(np.float32) * np.float32(t.quant.scales[0]) if t.type == "INT16" and not integer_io else x
                 for x, t in zip(inputs, ins)]
        got = program.run(*given)
        got = list(got) if isinstance(got, (tuple, list)) else [got]
        for k, (g, w) in enumerate(zip(got, want)):
            g = np.asarray(g).reshape(w.shape)
            if outs[k].type == "INT16" and not integer_io:
                g = np.rint(g / np.float32(outs[k].quant.scales[0])).astype(np.int16)
            assert g.dtype == w.dtype, (case, k, g.dtype, w.dtype)
            if not np.array_equal(g, w):
                diff = np.flatnonzero(g.reshape(-1) != w.reshape(-1))
                raise AssertionError(f"case {case} output {k}: {diff.size} of {w.size} elements differ, first at "
                                     f"{diff[0]}: cortexm {g.reshape(-1)[diff[0]]} TFLM {w.reshape(-1)[diff[0]]}")
    return cases, lowered
