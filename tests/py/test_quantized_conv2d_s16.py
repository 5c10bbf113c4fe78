"""cortexm.ops.quantized_conv2d_s16 (arm_convolve_s16) against the numpy reference and float math."""

import re

import numpy as np
import pytest

import cortexm
from numpy_reference.common import quantize_multiplier
from numpy_reference.conv import conv2d_accumulator, conv2d_s16, output_hw

ops = cortexm.ops


def qparams(c_out, taps, rng, target_std=4000.0):
    """Per-channel scales giving int16 outputs of about target_std LSB from int16 inputs of std
    ~2^14 and int8 weights of std ~74."""
    scales = target_std / (16384.0 * 74.0 * np.sqrt(taps)) * rng.uniform(0.5, 2.0, c_out)
    mults, shifts = zip(*(quantize_multiplier(s) for s in scales))
    return scales, list(mults), list(shifts)


# name: input shape, weight shape (OHWI), stride, padding, dilation, act range
CASES = {
    "silero_stft": ((1, 1, 640, 1), (258, 1, 256, 1), (1, 128), (0, 0), (1, 1), (-32768, 32767)),
    "silero_encoder_0": ((2, 1, 4, 129), (128, 1, 3, 129), (1, 1), (0, 1), (1, 1), (-32768, 32767)),
    "awkward_grouped_dilated": ((2, 9, 11, 9), (15, 3, 2, 3), (2, 1), (1, 0, 2, 1), (1, 2),
                                (-32768, 32767)),
    "kernel_bigger_than_input": ((1, 2, 3, 5), (7, 4, 5, 5), (1, 1), (2, 2, 1, 3), (1, 1),
                                 (-32768, 32767)),
    "depthwise_as_groups": ((1, 6, 6, 5), (10, 3, 3, 1), (1, 1), (1, 1), (1, 1), (-32768, 32767)),
    "relu_clamp": ((2, 8, 8, 8), (12, 3, 3, 8), (1, 1), (1, 1), (1, 1), (0, 32767)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bit_exact_with_numpy_and_close_to_float(name):
    x_shape, w_shape, stride, padding, dilation, act = CASES[name]
    rng = np.random.default_rng(len(name))
    x = rng.integers(-32768, 32768, size=x_shape, dtype=np.int16)
    w = rng.integers(-128, 128, size=w_shape, dtype=np.int8)
    c_out, kh, kw, group_c = w_shape
    bias = rng.integers(-(1 << 24), 1 << 24, size=c_out).astype(np.int64)
    scales, mults, shifts = qparams(c_out, kh * kw * group_c, rng)
    got = ops.quantized_conv2d_s16(x, w, bias, stride, padding, dilation, mults, shifts, *act)
    want = conv2d_s16(x, w, bias, stride, padding, dilation, mults, shifts, *act)
    oh, ow = output_hw(x_shape[1:3], (kh, kw), stride, padding, dilation)
    assert got.shape == (x_shape[0], oh, ow, c_out)
    assert got.dtype == np.int16
    assert np.array_equal(got, want)

    # The reduced multiplier keeps 15 bits: within 1 LSB of the float product for int16 outputs.
    acc = conv2d_accumulator(x, w, stride, padding, dilation, 0) + bias
    exact = np.clip(acc * scales, *act)
    assert np.max(np.abs(exact - got)) <= 1.0 + np.max(np.abs(exact)) * 2.0 ** -14
    assert np.mean((got > act[0]) & (got < act[1])) > 0.25  # the check is not vacuous


def extreme_qparams(rng, c_out):
    """Shift 7 and -31, multipliers 2^31 - 1 (reduced 2^15 - 1), near 0x7FFF0000, tiny and 0."""
    mults, shifts = [], []
    for oc in range(c_out):
        kind = oc % 5
        mult = [int(rng.integers(1 << 30, 1 << 31)), int(rng.integers(1 << 30, 1 << 31)),
                (1 << 31) - 1, 0x7FFF0000 - int(rng.integers(0, 2)), int(rng.integers(0, 1 << 16))][kind]
        shift = [7, -31, int(rng.integers(-31, 8)), int(rng.integers(-20, 1)),
                 int(rng.integers(-31, 8))][kind]
        mults.append(mult)
        shifts.append(shift)
    return mults, shifts


def test_randomized_awkward_cases_with_extreme_values():
    rng = np.random.default_rng(11)
    for i in range(120):
        groups = int(rng.integers(1, 4))
        c_in, c_out = groups * int(rng.integers(1, 6)), groups * int(rng.integers(1, 6))
        kh, kw = (1, 1) if i % 4 == 0 else tuple(int(k) for k in rng.integers(1, 5, size=2))
        stride = tuple(int(s) for s in rng.integers(1, 4, size=2))
        dilation = tuple(int(d) for d in rng.integers(1, 4, size=2))
        padding = (0, 0) if i % 4 == 0 else tuple(int(p) for p in rng.integers(0, 4, size=4))
        h, w_ = (int(s) for s in rng.integers(1, 10, size=2))
        if min(output_hw((h, w_), (kh, kw), stride, padding, dilation)) < 1:
            h, w_ = h + dilation[0] * (kh - 1), w_ + dilation[1] * (kw - 1)
        shape = (int(rng.integers(1, 3)), h, w_, c_in)
        if i % 5 == 0:  # only the extremes of both ranges
            x = np.where(rng.integers(0, 2, size=shape), 32767, -32768).astype(np.int16)
            w = np.where(rng.integers(0, 2, size=(c_out, kh, kw, c_in // groups)), 127,
                         -128).astype(np.int8)
        else:
            x = rng.integers(-32768, 32768, size=shape, dtype=np.int16)
            w = rng.integers(-128, 128, size=(c_out, kh, kw, c_in // groups), dtype=np.int8)
        bias = None if i % 3 == 0 else rng.integers(-(1 << 40), 1 << 40, size=c_out)
        if i % 2:
            mults, shifts = extreme_qparams(rng, c_out)
        else:
            mults, shifts = qparams(c_out, kh * kw * (c_in // groups), rng)[1:]
        lo = int(rng.integers(-32768, 1000))
        act = (lo, int(rng.integers(lo, 32768)))
        got = ops.quantized_conv2d_s16(x, w, bias, stride, padding, dilation, mults, shifts, *act)
        want = conv2d_s16(x, w, bias, stride, padding, dilation, mults, shifts, *act)
        assert np.array_equal(got, want), (i, x.shape, w.shape, stride, padding, dilation)


def test_keywords_defaults_and_non_contiguous_input():
    rng = np.random.default_rng(5)
    x = rng.integers(-32768, 32768, size=(1, 6, 10, 4), dtype=np.int16)[:, :, ::2, :]
    w = rng.integers(-128, 128, size=(3, 3, 3, 4), dtype=np.int8)
    got = ops.quantized_conv2d_s16(input=x, weight=w, bias=None, stride=(1, 1), padding=(1, 1),
                                   dilation=(1, 1), requantize_multipliers=[1 << 30] * 3,
                                   requantize_shifts=[-9, -10, -8])
    want = conv2d_s16(x, w, None, (1, 1), (1, 1), (1, 1), [1 << 30] * 3, [-9, -10, -8])
    assert np.array_equal(got, want)


GOOD = dict(stride=(1, 1), padding=(1, 1), dilation=(1, 1), requantize_multipliers=[1 << 30] * 4,
            requantize_shifts=[-8] * 4, activation_min=-32768, activation_max=32767)


def call(x=None, w=None, bias=None, **override):
    x = np.zeros((1, 5, 5, 6), np.int16) if x is None else x
    w = np.zeros((4, 3, 3, 3), np.int8) if w is None else w
    return ops.quantized_conv2d_s16(x, w, bias, **{**GOOD, **override})


def test_good_call_is_grouped():
    assert call().shape == (1, 5, 5, 4)  # groups = 6 / 3


@pytest.mark.parametrize("kwargs,match", [
    (dict(x=np.zeros((1, 5, 5, 6), np.int8)), "input dtype int8 must be int16"),
    (dict(x=np.zeros((5, 5, 6), np.int16)), "input rank 3 (shape (5, 5, 6)) must be 4"),
    (dict(w=np.zeros((4, 3, 3, 3), np.int16)), "weight dtype int16 must be int8"),
    (dict(w=np.zeros((4, 3, 3, 4), np.int8)), "weight.shape[3] = 4 must divide input.shape[3]"),
    (dict(bias=np.zeros(4, np.int32)), "bias dtype int32 must be int64"),
    (dict(bias=np.zeros(3, np.int64)), "bias shape (3,) must be (4,)"),
    (dict(requantize_shifts=[0, 8, 0, 0]), "requantize_shifts[1] = 8 must be in [-31, 7]"),
    (dict(requantize_shifts=[0, 0, 0, -32]), "requantize_shifts[3] = -32 must be in [-31, 7]"),
    (dict(requantize_multipliers=[-1, 1, 1, 1]), "requantize_multipliers[0] = -1 must be in"),
    (dict(requantize_multipliers=[1] * 3), "requantize_multipliers has 3 elements, must have"),
    (dict(activation_min=-32769), "activation_min"),
    (dict(activation_max=32768), "activation_max"),
    (dict(activation_min=5, activation_max=4), "activation_min = 5 must be <= activation_max"),
    (dict(stride=(0, 1)), "stride"),
    (dict(w=np.zeros((4, 9, 3, 3), np.int8)), "input.shape[1] = 5 is smaller than the dilated"),
])
def test_bad_arguments_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        call(**kwargs)
