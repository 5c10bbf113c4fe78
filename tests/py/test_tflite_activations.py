"""from_tflite against TFLite Micro for the int8 standalone activations RELU, RELU6, LEAKY_RELU and
HARD_SWISH: each model maps every int8 value (one [1, 256] input), at random input and output
scales and zero points; byte for byte, no float op left. (TFLite Micro has no RELU_N1_TO_1.)"""

from __future__ import annotations

import numpy as np
import pytest

import cortexm
from cortexm.tflite import schema as S
from test_tflite_import import log_uniform, zero_point
from tflite_compare import cortexm_program, float_ops, needs_tflm, tflm_runner
from tflite_writer import ModelBuilder

EVERY_INT8 = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
MODELS = 24  # random scale pairs per operator


def activation_model(rng, builtin: str) -> bytes:
    m = ModelBuilder()
    s_in, zp_in = log_uniform(rng, 1e-3, 0.5), zero_point(rng)
    x = m.tensor([1, 256], "INT8", s_in, zp_in)
    # RELU6 copies the integers (TFLite Micro does not rescale it): the converter gives equal qparams.
    same = builtin == "RELU6" or rng.random() < 0.2
    out = m.tensor([1, 256], "INT8", s_in if same else s_in * log_uniform(rng, 0.25, 4.0),
                   zp_in if same else zero_point(rng))
    if builtin == "LEAKY_RELU":
        alpha = float(rng.choice([0.0, 0.01, 0.1, 0.2, 0.3, float(rng.uniform(0, 1))]))
        m.operator(builtin, [x], [out], S.OPTIONS_LEAKY_RELU, {S.LEAKY_RELU_ALPHA: ("f", alpha)})
    elif builtin == "HARD_SWISH":
        m.operator(builtin, [x], [out], S.OPTIONS_HARD_SWISH, {})
    else:
        m.operator(builtin, [x], [out])
    return m.build([x], [out])


def check_every_input(model: bytes) -> None:
    lowered, program = cortexm_program(model)
    assert float_ops(lowered) == [], float_ops(lowered)
    want = tflm_runner(model)([EVERY_INT8])[0]
    got = np.asarray(program.run(EVERY_INT8)).reshape(want.shape)
    diff = np.flatnonzero(got != want)
    assert diff.size == 0, f"{diff.size} inputs differ, first {EVERY_INT8.reshape(-1)[diff[0]]}: cortexm " \
                           f"{got.reshape(-1)[diff[0]]} TFLM {want.reshape(-1)[diff[0]]}"


@needs_tflm
@pytest.mark.parametrize("builtin", ["RELU", "RELU6", "LEAKY_RELU", "HARD_SWISH"])
def test_activation_matches_tflm_on_every_int8_input(builtin):
    rng = np.random.default_rng(sum(map(ord, builtin)))
    for _ in range(MODELS):
        check_every_input(activation_model(rng, builtin))


def test_int16_relu_is_refused_with_the_reason():
    m = ModelBuilder()
    x = m.tensor([1, 8], "INT16", 0.001, 0)
    out = m.tensor([1, 8], "INT16", 0.001, 0)
    m.operator("RELU", [x], [out])
    with pytest.raises(NotImplementedError, match="operator 0 RELU.*int8 is imported"):
        cortexm.from_tflite(m.build([x], [out]))


def test_negative_leaky_relu_alpha_is_refused():
    m = ModelBuilder()
    x = m.tensor([1, 8], "INT8", 0.05, 0)
    out = m.tensor([1, 8], "INT8", 0.05, 0)
    m.operator("LEAKY_RELU", [x], [out], S.OPTIONS_LEAKY_RELU, {S.LEAKY_RELU_ALPHA: ("f", -0.5)})
    with pytest.raises(NotImplementedError, match="alpha = -0.5"):
        cortexm.from_tflite(m.build([x], [out]))
