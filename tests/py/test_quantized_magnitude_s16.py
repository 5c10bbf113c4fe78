"""cortexm.ops.quantized_magnitude_s16 against the numpy reference (math.isqrt) and float math."""

import re

import numpy as np
import pytest

import cortexm
from numpy_reference.common import quantize_multiplier
from numpy_reference.magnitude import FRACTION_BITS, magnitude_s16

ops = cortexm.ops

# in scale, out scale, zero point, dtype, activation range (None: the dtype's)
CASES = {
    "int16_symmetric": (1 / 32768, np.sqrt(2) / 32767, 0, np.int16, None),
    "int16_clamped_top": (0.0173, 0.0173 * 0.61, 0, np.int16, None),
    "int16_offset_narrow": (3e-5, 7e-4, -1234, np.int16, (-30000, 20000)),
    "int8_relu_range": (1 / 32768, np.sqrt(2) / 255, -128, np.int8, None),
    "int8_coarse": (0.002, 0.9, 5, np.int8, (-100, 90)),
}


def data(shape, rng):
    re_, im = (rng.integers(-32768, 32768, size=shape, dtype=np.int16) for _ in range(2))
    flat_re, flat_im = re_.reshape(-1), im.reshape(-1)
    flat_re[::4] = np.where(rng.integers(0, 2, flat_re[::4].size), 32767, -32768)
    flat_im[::4] = np.where(rng.integers(0, 2, flat_im[::4].size), 32767, -32768)
    flat_re[1::4] = rng.integers(-40, 41, flat_re[1::4].size)
    flat_im[1::4] = rng.integers(-40, 41, flat_im[1::4].size)
    flat_re[:2], flat_im[:2] = (0, -32768), (0, -32768)
    return re_, im


@pytest.mark.parametrize("name", list(CASES))
def test_bit_exact_with_numpy_and_within_half_lsb_of_float(name):
    s_in, s_out, zp, dtype, act = CASES[name]
    info = np.iinfo(dtype)
    act = act or (info.min, info.max)
    rng = np.random.default_rng(len(name))
    real, imag = data((3, 129, 7), rng)
    mult, shift = quantize_multiplier(s_in / (s_out * 2 ** FRACTION_BITS))
    got = ops.quantized_magnitude_s16(real, imag, mult, shift, zp, np.dtype(dtype), *act)
    want = magnitude_s16(real, imag, mult, shift, zp, *act, dtype)
    assert got.dtype == dtype and got.shape == real.shape
    assert np.array_equal(got, want)
    exact = np.hypot(real.astype(np.float64), imag.astype(np.float64)) * s_in / s_out + zp
    assert np.max(np.abs(np.clip(exact, *act) - got)) <= 0.5 + s_in / s_out / 65536 + 1e-6
    assert np.mean((exact > act[0]) & (exact < act[1])) > 0.25  # the check is not vacuous


def test_defaults_are_int16_full_range_and_zero_point_0():
    real = np.array([3, -300, 0, 1, -32768, 2], np.int16)
    imag = np.array([4, 400, -7, 1, 0, 1], np.int16)
    mult, shift = quantize_multiplier(1 / 2 ** FRACTION_BITS)
    got = ops.quantized_magnitude_s16(real, imag, mult, shift)
    assert got.dtype == np.int16
    assert got.tolist() == [5, 500, 7, 1, 32767, 2]  # sqrt 2 -> 1, sqrt 5 -> 2, 32768 clamps
    int8 = ops.quantized_magnitude_s16(real, imag, mult, shift, output_dtype="int8")
    assert int8.tolist() == [5, 127, 7, 1, 127, 2]


def test_non_contiguous_and_scalar_inputs():
    rng = np.random.default_rng(2)
    real, imag = data((4, 10), rng)
    mult, shift = quantize_multiplier(0.5 / 2 ** FRACTION_BITS)
    got = ops.quantized_magnitude_s16(real[:, ::3], imag[:, ::3], mult, shift)
    assert np.array_equal(got, magnitude_s16(real[:, ::3], imag[:, ::3], mult, shift, 0,
                                             -32768, 32767, np.int16))
    scalar = ops.quantized_magnitude_s16(np.array(6, np.int16), np.array(-8, np.int16),
                                         mult, shift)
    assert scalar.shape == () and int(scalar) == 5


GOOD = dict(output_multiplier=1 << 30, output_shift=-15, output_zero_point=0,
            output_dtype="int16", activation_min=None, activation_max=None)


def call(real=None, imag=None, **override):
    real = np.zeros((2, 3), np.int16) if real is None else real
    imag = np.zeros((2, 3), np.int16) if imag is None else imag
    return ops.quantized_magnitude_s16(real, imag, **{**GOOD, **override})


@pytest.mark.parametrize("kwargs,match", [
    (dict(real=np.zeros((2, 3), np.int8)), "real dtype int8 must be int16"),
    (dict(imag=np.zeros((3, 2), np.int16)), "imag shape (3, 2) must equal real shape (2, 3)"),
    (dict(imag=np.zeros((2, 3, 1), np.int16)), "imag shape (2, 3, 1) must equal real shape"),
    (dict(output_dtype="int32"), "output_dtype int32 must be int8 or int16"),
    (dict(output_multiplier=-1), "output_multiplier = -1 must be in"),
    (dict(output_shift=31), "output_shift = 31 must be in [-31, 30]"),
    (dict(output_shift=1.0), "output_shift = 1.0 must be an int"),
    (dict(output_zero_point=128, output_dtype="int8"), "output_zero_point = 128 must be in [-128, 127]"),
    (dict(activation_min=-129, output_dtype=np.int8), "activation_min = -129 must be in [-128, 127]"),
    (dict(activation_max=40000), "activation_max = 40000 must be in [-32768, 32767]"),
    (dict(activation_min=3, activation_max=2), "activation_min = 3 must be <= activation_max"),
])
def test_bad_arguments_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        call(**kwargs)
