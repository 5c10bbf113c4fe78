"""cortexm.ops.quantized_activation_s16 (TFLite's int16 table with interpolation) against numpy:
bit-exact with an independent lookup over every int16 input, and the accuracy of tables built by
LUTPopulate for sigmoid / tanh / relu / silu / gelu / sqrt against the rounded float function."""

import math

import numpy as np
import pytest

import cortexm
from numpy_reference.activation_s16 import TABLE_SIZE, lut_lookup_s16, lut_populate_s16

ops = cortexm.ops
EVERY_INPUT = np.arange(-32768, 32768).astype(np.int16)
_erf = np.vectorize(math.erf)

# name: (f, input scale, output scale, max error in output LSB against round(f(x s_in) / s_out))
FUNCTIONS = {
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), 8 / 32768, 1 / 32768, 2),
    "tanh": (np.tanh, 4 / 32768, 1 / 32768, 4),
    "relu": (lambda x: np.maximum(x, 0), 6 / 32768, 6 / 32768, 1),
    "silu": (lambda x: x / (1 + np.exp(-x)), 8 / 32768, 8 / 32768, 2),
    "gelu": (lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), 5 / 32768, 5 / 32768, 2),
    "sigmoid_narrow_input": (lambda x: 1 / (1 + np.exp(-x)), 1e-5, 1 / 32768, 1),
    # 128-code segments over a wide input range: the error grows with (segment width)^2 f''.
    "tanh_wide_input": (np.tanh, 1e-3, 1 / 32768, 37),
    "sigmoid_wide_input": (lambda x: 1 / (1 + np.exp(-x)), 1e-3, 1 / 32768, 7),
}


def rounded_exact(fn, s_in, s_out):
    with np.errstate(invalid="ignore"):
        exact = np.nan_to_num(fn(EVERY_INPUT.astype(np.float64) * s_in) / s_out)
    return np.clip(np.sign(exact) * np.floor(np.abs(exact) + 0.5), -32768, 32767)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_every_input_bit_exact_and_within_a_few_lsb(name):
    fn, s_in, s_out, bound = FUNCTIONS[name]
    table = lut_populate_s16(fn, s_in, s_out)
    got = ops.quantized_activation_s16(EVERY_INPUT, table)
    assert got.dtype == np.int16 and got.shape == EVERY_INPUT.shape
    assert np.array_equal(got, lut_lookup_s16(EVERY_INPUT, table))
    err = np.abs(got.astype(np.int64) - rounded_exact(fn, s_in, s_out))
    assert err.max() <= bound, (name, err.max(), EVERY_INPUT[err.argmax()])


def test_sqrt_accuracy_away_from_zero():
    # sqrt's infinite slope at 0: the segments next to 0 interpolate poorly (measured 356 LSB);
    # from 512 input codes on, within 5 LSB, from 2048 on within 2.
    s_in, s_out = 100 / 32768, 10 / 32768
    table = lut_populate_s16(np.sqrt, s_in, s_out)
    got = ops.quantized_activation_s16(EVERY_INPUT, table).astype(np.int64)
    assert np.array_equal(got, lut_lookup_s16(EVERY_INPUT, table))
    err = np.abs(got - rounded_exact(np.sqrt, s_in, s_out))
    assert err[EVERY_INPUT >= 512].max() <= 5
    assert err[EVERY_INPUT >= 2048].max() <= 2
    assert err[EVERY_INPUT < -128].max() == 0  # NaN quantizes as 0


def test_awkward_tables_shapes_and_layouts():
    rng = np.random.default_rng(3)
    for table in (rng.integers(-32768, 32768, TABLE_SIZE).astype(np.int16),
                  np.where(np.arange(TABLE_SIZE) % 2, 32767, -32768).astype(np.int16),
                  np.full(TABLE_SIZE, -7, np.int16)):
        assert np.array_equal(ops.quantized_activation_s16(EVERY_INPUT, table),
                              lut_lookup_s16(EVERY_INPUT, table))
    table = lut_populate_s16(np.tanh, 3e-4, 1 / 32768)
    for shape in [(), (1,), (3, 5, 7), (2, 1, 1, 9)]:
        x = rng.integers(-32768, 32768, shape).astype(np.int16)
        got = ops.quantized_activation_s16(x, table)
        assert got.shape == x.shape
        assert np.array_equal(got, lut_lookup_s16(x, table))
    x = rng.integers(-32768, 32768, (6, 4)).astype(np.int16)
    assert np.array_equal(ops.quantized_activation_s16(x.T, table), lut_lookup_s16(x.T, table))


@pytest.mark.parametrize("kwargs, message", [
    (dict(input=np.zeros(4, np.int8)), "input dtype int8"),
    (dict(table=np.zeros(512, np.int16)), "table .* must have 513 entries"),
    (dict(table=np.zeros(TABLE_SIZE, np.int8)), "table dtype int8"),
    (dict(table=np.zeros((1, TABLE_SIZE), np.int16)), "table rank 2"),
    (dict(input=[1, 2]), "input must be a numpy array"),
])
def test_bad_arguments_raise_value_error_naming_them(kwargs, message):
    args = dict(input=np.zeros(4, np.int16), table=np.zeros(TABLE_SIZE, np.int16))
    args.update(kwargs)
    with pytest.raises(ValueError, match="quantized_activation_s16.*" + message):
        ops.quantized_activation_s16(**args)
