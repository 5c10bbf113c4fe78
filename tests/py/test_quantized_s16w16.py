"""cortexm.ops.quantized_conv2d_s16w16 / quantized_linear_s16w16 (16x16: int16 activations and
weights, 64-bit sums, arm_nn_requantize_s64) bit for bit against the numpy int64 references of the
16x8 kernels (numpy_reference.conv.conv2d_s16, linear.linear_s16: they widen any weight type), on
awkward shapes and qparams: odd channels, kernels 1 / 3 / 5, strides, padding, dilation, groups,
1-D (H = 1), tiny and large scales, weights at +-32767, biases beyond int32."""

import re

import numpy as np
import pytest

import cortexm
from numpy_reference.common import quantize_multiplier
from numpy_reference.conv import conv2d_accumulator, conv2d_s16, output_hw
from numpy_reference.linear import linear_s16
from test_quantized_linear_s16 import CASES as LINEAR_CASES  # the 16x8 linear's shapes
from test_quantized_linear_s16 import extreme_qparams  # shifts 7 and -31, extreme multipliers

ops = cortexm.ops


def scales_for(count, taps, rng, target_std=4000.0):
    """Scales giving int16 outputs of about target_std LSB from int16 inputs and int16 weights of
    std ~2^14 (2^8 finer than 16x8's: shifts near -17)."""
    return target_std / (16384.0 * 16384.0 * np.sqrt(taps)) * rng.uniform(0.5, 2.0, count)


def multipliers(scales):
    mults, shifts = zip(*(quantize_multiplier(s) for s in scales))
    return list(mults), list(shifts)


def int16_weights(rng, shape, extreme=False):
    """Uniform int16 weights in [-32767, 32767]; extreme: only +-32767 (the quantizer's range)."""
    if extreme:
        return np.where(rng.integers(0, 2, size=shape), 32767, -32767).astype(np.int16)
    return rng.integers(-32767, 32768, size=shape, dtype=np.int16)


# name: input shape (NHWC), weight shape (OHWI), stride, padding, dilation, act range
CONV_CASES = {
    "conv1d_kernel_3_odd_channels": ((2, 1, 17, 5), (7, 1, 3, 5), (1, 1), (0, 1), (1, 1), (-32768, 32767)),
    "conv1d_kernel_5_stride_2_dilation_2": ((1, 1, 23, 3), (9, 1, 5, 3), (1, 2), (0, 0, 0, 3), (1, 2),
                                            (-32768, 32767)),
    "conv1d_kernel_1": ((1, 1, 11, 13), (3, 1, 1, 13), (1, 1), (0, 0), (1, 1), (-32768, 32767)),
    "silero_encoder_like": ((1, 1, 4, 129), (128, 1, 3, 129), (1, 1), (0, 1), (1, 1), (-32768, 32767)),
    "grouped_dilated_2d": ((2, 9, 11, 9), (15, 3, 2, 3), (2, 1), (1, 0, 2, 1), (1, 2), (-32768, 32767)),
    "depthwise_as_groups": ((1, 6, 6, 5), (10, 3, 3, 1), (1, 1), (1, 1), (1, 1), (-32768, 32767)),
    "kernel_5_bigger_than_input": ((1, 2, 3, 5), (7, 5, 5, 5), (1, 1), (2, 2, 2, 2), (1, 1), (-32768, 32767)),
    "relu_clamp": ((2, 8, 8, 7), (11, 3, 3, 7), (1, 1), (1, 1), (1, 1), (0, 32767)),
}


@pytest.mark.parametrize("name", list(CONV_CASES))
def test_conv_bit_exact_with_numpy_and_close_to_float(name):
    x_shape, w_shape, stride, padding, dilation, act = CONV_CASES[name]
    rng = np.random.default_rng(len(name))
    x = rng.integers(-32768, 32768, size=x_shape, dtype=np.int16)
    w = int16_weights(rng, w_shape)
    c_out, kh, kw, group_c = w_shape
    bias = rng.integers(-(1 << 40), 1 << 40, size=c_out).astype(np.int64)  # beyond int32
    scales = scales_for(c_out, kh * kw * group_c, rng)
    bias = (bias * 1e-4).astype(np.int64)  # real value of a few thousand LSB at these scales
    mults, shifts = multipliers(scales)
    got = ops.quantized_conv2d_s16w16(x, w, bias, stride, padding, dilation, mults, shifts, *act)
    want = conv2d_s16(x, w, bias, stride, padding, dilation, mults, shifts, *act)
    oh, ow = output_hw(x_shape[1:3], (kh, kw), stride, padding, dilation)
    assert got.shape == (x_shape[0], oh, ow, c_out) and got.dtype == np.int16
    assert np.array_equal(got, want)
    assert min(shifts) < -8  # scales 16x8 never reaches
    # The reduced multiplier keeps 15 bits: within 1 LSB of the float product.
    acc = conv2d_accumulator(x, w, stride, padding, dilation, 0) + bias
    exact = np.clip(acc * scales, *act)
    assert np.max(np.abs(exact - got)) <= 1.0 + np.max(np.abs(exact)) * 2.0 ** -14
    assert np.mean((got > act[0]) & (got < act[1])) > 0.25  # the check is not vacuous


def test_conv_randomized_awkward_cases_with_extreme_values():
    rng = np.random.default_rng(16)
    for i in range(120):
        groups = int(rng.integers(1, 4))
        c_in, c_out = groups * int(rng.integers(1, 6)), groups * int(rng.integers(1, 6))
        kh = 1 if i % 3 == 0 else int(rng.choice([1, 3, 5]))  # every third 1-D
        kw = int(rng.choice([1, 3, 5]))
        stride = tuple(int(s) for s in rng.integers(1, 4, size=2))
        dilation = tuple(int(d) for d in rng.integers(1, 4, size=2))
        padding = (0, 0) if i % 4 == 0 else tuple(int(p) for p in rng.integers(0, 4, size=4))
        h = 1 if kh == 1 and i % 3 == 0 else int(rng.integers(1, 10))
        w_ = int(rng.integers(1, 12))
        if min(output_hw((h, w_), (kh, kw), stride, padding, dilation)) < 1:
            h, w_ = h + dilation[0] * (kh - 1), w_ + dilation[1] * (kw - 1)
        shape = (int(rng.integers(1, 3)), h, w_, c_in)
        extreme = i % 5 == 0
        x = (np.where(rng.integers(0, 2, size=shape), 32767, -32768).astype(np.int16) if extreme
             else rng.integers(-32768, 32768, size=shape, dtype=np.int16))
        w = int16_weights(rng, (c_out, kh, kw, c_in // groups), extreme)
        bias = None if i % 3 == 1 else rng.integers(-(1 << 46), 1 << 46, size=c_out)
        mults, shifts = (extreme_qparams(rng, c_out) if i % 2
                         else multipliers(scales_for(c_out, kh * kw * (c_in // groups), rng)))
        lo = int(rng.integers(-32768, 1000))
        act = (lo, int(rng.integers(lo, 32768)))
        got = ops.quantized_conv2d_s16w16(x, w, bias, stride, padding, dilation, mults, shifts, *act)
        want = conv2d_s16(x, w, bias, stride, padding, dilation, mults, shifts, *act)
        assert np.array_equal(got, want), (i, x.shape, w.shape, stride, padding, dilation)


@pytest.mark.parametrize("lead,k,c_out,per_channel,with_bias,act", LINEAR_CASES)
def test_linear_bit_exact_with_numpy_and_close_to_float(lead, k, c_out, per_channel, with_bias, act):
    rng = np.random.default_rng(k * 1000 + c_out)
    x = rng.integers(-32768, 32768, size=lead + (k,), dtype=np.int16)
    w = int16_weights(rng, (c_out, k))
    scales = scales_for(c_out if per_channel else 1, k, rng)
    # biases of a few thousand output LSB: beyond int32 at these scales once K is large
    bias = (rng.uniform(-3000, 3000, c_out) / scales).astype(np.int64) if with_bias else None
    if with_bias and c_out > 100:  # many channels: some bias beyond int32
        assert np.abs(bias).max() > 2**31
    mults, shifts = multipliers(scales)
    got = ops.quantized_linear_s16w16(x, w, bias, mults, shifts, *act)
    want = linear_s16(x, w, bias, mults, shifts, *act)
    assert got.shape == lead + (c_out,) and got.dtype == np.int16
    assert np.array_equal(got, want)
    acc = x.astype(np.int64) @ w.astype(np.int64).T + (0 if bias is None else bias)
    exact = np.clip(acc * scales, *act)
    assert np.max(np.abs(exact - got)) <= 1.0 + np.max(np.abs(exact)) * 2.0 ** -14
    assert np.mean((got > act[0]) & (got < act[1])) > 0.25  # the check is not vacuous


def test_linear_randomized_extremes():
    rng = np.random.default_rng(61)
    for i in range(80):
        k, c_out = int(rng.integers(1, 70)), int(rng.integers(1, 12))
        per_channel = bool(i % 2)
        extreme = i % 4 == 0
        shape = (int(rng.integers(1, 4)), k)
        x = (np.where(rng.integers(0, 2, size=shape), 32767, -32768).astype(np.int16) if extreme
             else rng.integers(-32768, 32768, size=shape, dtype=np.int16))
        w = int16_weights(rng, (c_out, k), extreme)
        bias = None if i % 3 == 0 else rng.integers(-(1 << 46), 1 << 46, size=c_out)
        count = c_out if per_channel else 1
        mults, shifts = extreme_qparams(rng, count) if i % 3 else multipliers(scales_for(count, k, rng))
        got = ops.quantized_linear_s16w16(x, w, bias, mults, shifts)
        assert np.array_equal(got, linear_s16(x, w, bias, mults, shifts)), i


def test_full_scale_sums_need_64_bits():
    """2^16 taps of (-32768) * (-32767): a sum of 2^46, exact (int32 blocks would wrap)."""
    k = 1 << 16
    x = np.full((1, k), -32768, np.int16)
    w = np.full((2, k), -32767, np.int16)
    w[1] = 32767
    got = ops.quantized_linear_s16w16(x, w, None, [1 << 30], [-31])  # times 2^-32
    assert np.array_equal(got, linear_s16(x, w, None, [1 << 30], [-31]))
    assert got.tolist() == [[16384, -16383]]  # +-(2^14 - 1/2), rounded half up


CONV_GOOD = dict(stride=(1, 1), padding=(1, 1), dilation=(1, 1), requantize_multipliers=[1 << 30] * 4,
                 requantize_shifts=[-16] * 4, activation_min=-32768, activation_max=32767)


def conv_call(x=None, w=None, bias=None, **override):
    x = np.zeros((1, 5, 5, 6), np.int16) if x is None else x
    w = np.zeros((4, 3, 3, 3), np.int16) if w is None else w
    return ops.quantized_conv2d_s16w16(x, w, bias, **{**CONV_GOOD, **override})


def test_conv_good_call_is_grouped():
    assert conv_call().shape == (1, 5, 5, 4)  # groups = 6 / 3


@pytest.mark.parametrize("kwargs,match", [
    (dict(x=np.zeros((1, 5, 5, 6), np.int8)), "input dtype int8 must be int16"),
    (dict(w=np.zeros((4, 3, 3, 3), np.int8)), "weight dtype int8 must be int16"),
    (dict(bias=np.zeros(4, np.int32)), "bias dtype int32 must be int64"),
    (dict(bias=np.zeros(3, np.int64)), "bias shape (3,) must be (4,)"),
    (dict(requantize_shifts=[0, 8, 0, 0]), "requantize_shifts[1] = 8 must be in [-31, 7]"),
    (dict(requantize_shifts=[0, 0, 0, -32]), "requantize_shifts[3] = -32 must be in [-31, 7]"),
    (dict(activation_min=5, activation_max=4), "activation_min = 5 must be <= activation_max"),
    (dict(x=np.zeros((1, 1, 70000, 1), np.int16), w=np.zeros((4, 1, 65537, 1), np.int16), padding=(0, 0)),
     "filter_taps = 65537 must be <= 2^16"),
])
def test_conv_bad_arguments_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        conv_call(**kwargs)


@pytest.mark.parametrize("kwargs,match", [
    (dict(w=np.zeros((3, 8), np.int8)), "weights dtype int8 must be int16"),
    (dict(x=np.zeros((2, 9), np.int16)), "weights shape (3, 8) must be (C_out, 9)"),
    (dict(x=np.zeros((1, 65537), np.int16), w=np.zeros((3, 65537), np.int16)), "input_features = 65537 must be <= 2^16"),
    (dict(shifts=[8]), "requantize_shifts[0] = 8 must be in [-31, 7]"),
])
def test_linear_bad_arguments_raise_value_error(kwargs, match):
    x, w = kwargs.pop("x", np.zeros((2, 8), np.int16)), kwargs.pop("w", np.zeros((3, 8), np.int16))
    shifts = kwargs.pop("shifts", [-16])
    with pytest.raises(ValueError, match=re.escape(match)):
        ops.quantized_linear_s16w16(x, w, None, [1 << 30], shifts)
