"""cortexm.ops.requantize_s16 (int16 <-> int8, int16 -> int16) against numpy and float math."""

import re

import numpy as np
import pytest

import cortexm
from numpy_reference.requantize import requantize_s16, requantize_s16_params

ops = cortexm.ops

# in dtype, out dtype, s_in, s_out, zp_in, zp_out, activation range (None: the dtype's)
CASES = {
    "int16_to_int8": (np.int16, np.int8, 1 / 32768, 1 / 127, 0, 0, None),
    "int16_to_int8_relu_range": (np.int16, np.int8, 3.3e-4, 2.7e-2, 0, -128, None),
    "int16_to_int8_narrow": (np.int16, np.int8, 1e-5, 9.1e-4, 0, 17, (-100, 101)),
    "int8_to_int16": (np.int8, np.int16, 1 / 127, 1 / 32768, 0, 0, None),
    "int8_to_int16_offsets": (np.int8, np.int16, 0.02, 0.02 / 300, 77, -5000, (-30000, 30000)),
    "int16_to_int16": (np.int16, np.int16, 2.5e-4, 1.3e-4, 0, 1000, None),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_input_value_bit_exact_and_within_half_lsb(name):
    in_dtype, out_dtype, s_in, s_out, zp_in, zp_out, act = CASES[name]
    info_in, info_out = np.iinfo(in_dtype), np.iinfo(out_dtype)
    act = act or (info_out.min, info_out.max)
    x = np.arange(info_in.min, info_in.max + 1).astype(in_dtype)
    x = np.concatenate([x, np.random.default_rng(1).permutation(x)]).reshape(2, -1, 4)
    mult, shift = requantize_s16_params(s_in, s_out, in_dtype)
    got = ops.requantize_s16(x, zp_in, zp_out, mult, shift, np.dtype(out_dtype), *act)
    assert got.dtype == out_dtype and got.shape == x.shape
    assert np.array_equal(got, requantize_s16(x, zp_in, zp_out, mult, shift, out_dtype, *act))
    exact = (x.astype(np.float64) - zp_in) * s_in / s_out + zp_out
    assert np.max(np.abs(np.clip(exact, *act) - got)) <= 0.5 + 1e-6
    assert np.mean((exact > act[0]) & (exact < act[1])) > 0.25


def test_default_range_is_the_output_dtypes():
    x = np.array([-32768, -1, 0, 1, 32767], np.int16)
    mult, shift = requantize_s16_params(1.0, 1.0, np.int16)
    assert ops.requantize_s16(x, 0, 0, mult, shift, "int8").tolist() == [-128, -1, 0, 1, 127]
    assert ops.requantize_s16(x, 0, 0, mult, shift, "int16").tolist() == x.tolist()


GOOD = dict(input_zero_point=0, output_zero_point=0, output_multiplier=1 << 30, output_shift=-14,
            output_dtype="int8", activation_min=None, activation_max=None)


def call(x=None, **override):
    x = np.zeros((2, 3), np.int16) if x is None else x
    return ops.requantize_s16(x, **{**GOOD, **override})


@pytest.mark.parametrize("kwargs,match", [
    (dict(x=np.zeros(3, np.int32)), "input dtype int32 must be int8 or int16"),
    (dict(x=[1, 2]), "input must be a numpy array"),
    (dict(output_dtype="int32"), "output_dtype int32 must be int8 or int16"),
    (dict(x=np.zeros(3, np.int8)), "int8 input and int8 output_dtype: use cortexm.ops.requantize"),
    (dict(input_zero_point=1), "input_zero_point = 1 must be in [0, 0]"),
    (dict(x=np.zeros(3, np.int8), output_dtype="int16", input_zero_point=128),
     "input_zero_point = 128 must be in [-128, 127]"),
    (dict(output_zero_point=128), "output_zero_point = 128 must be in [-128, 127]"),
    (dict(output_multiplier=-1), "output_multiplier = -1 must be in"),
    (dict(output_shift=31), "output_shift = 31 must be in [-31, 30]"),
    (dict(activation_max=200), "activation_max = 200 must be in [-128, 127]"),
    (dict(activation_min=5, activation_max=4), "activation_min = 5 must be <= activation_max"),
])
def test_bad_arguments_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        call(**kwargs)
