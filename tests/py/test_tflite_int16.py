"""from_tflite against TFLite Micro for 16x8 (int16, zero point 0) ADD and MUL: randomized
single-operator files with broadcasting and fused activations, byte for byte (the int16 boundary
goes through the float program, tflite_compare.compare), no float op left."""

from __future__ import annotations

import numpy as np
import pytest

from cortexm.tflite import schema as S
from test_tflite_import import ACTS, CASES, check, log_uniform
from tflite_compare import needs_tflm
from tflite_writer import ModelBuilder

MODELS = 16


def int16_binary_model(rng, builtin):
    shape = [1, int(rng.integers(1, 6)), int(rng.integers(1, 6)), int(rng.integers(1, 9))]
    other = list(shape)
    if rng.random() < 0.4:
        for d in rng.choice(4, size=int(rng.integers(1, 3)), replace=False):
            other[d] = 1
    act = str(rng.choice(["NONE", "RELU", "RELU6"]))
    sa, sb = log_uniform(rng, 1e-5, 1e-2), log_uniform(rng, 1e-5, 1e-2)
    if builtin == "MUL":
        so = np.float32(sa * sb * 32768 * rng.uniform(0.05, 2))
    else:
        so = np.float32(max(sa, sb) * rng.uniform(0.3, 3))
    m = ModelBuilder()
    a = m.tensor(shape, "INT16", sa, 0)
    b = m.tensor(other, "INT16", sb, 0)
    out = m.tensor(shape, "INT16", so, 0)
    m.operator(builtin, [a, b], [out], {"ADD": S.OPTIONS_ADD, "MUL": S.OPTIONS_MUL}[builtin], {0: ("b", ACTS[act])})
    return m.build([a, b], [out])


@needs_tflm
@pytest.mark.parametrize("builtin", ["ADD", "MUL"])
@pytest.mark.parametrize("seed", range(MODELS))
def test_int16_add_mul_match_tflm(builtin, seed):
    model = int16_binary_model(np.random.default_rng(2800 + seed + (100 if builtin == "MUL" else 0)), builtin)
    assert check(model, seed) == CASES


def test_int16_boundary_program_takes_and_gives_int16():
    """program_io is "int16" for an int16 file: the program takes and gives the file's integers
    (to_program(io="int16")), where io="int8" names the int16 input."""
    import cortexm
    from cortexm.tflite import program_io

    model = int16_binary_model(np.random.default_rng(2900), "ADD")
    assert program_io(model) == "int16"
    lowered = cortexm.lower(cortexm.from_tflite(model), "cortex-m55+int8")
    program = cortexm.to_program(lowered, io="int16")
    assert [s["dtype"] for s in (*program.inputs, *program.outputs)] == ["int16"] * 3
    with pytest.raises(ValueError, match="io='int8': input 0 .* not to int8 with one scale"):
        cortexm.to_program(lowered, io="int8")


def test_io_int16_names_an_input_left_float():
    import cortexm
    from cortexm._core import Graph

    g = Graph()
    x = g.add_input("x", [2, 3], "float32")
    g.outputs = [g.call("aten.relu.default", [x], {})]
    with pytest.raises(ValueError, match="io='int16': input 0 'x' \\(float32\\) is read by 'relu.*' \\(aten.relu.default\\)"):
        cortexm.to_program(g, io="int16")
