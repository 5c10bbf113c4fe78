import re

import numpy as np
import pytest

import cortexm
from numpy_reference.common import quantize_multiplier
from numpy_reference.conv import depthwise_conv2d, depthwise_conv2d_accumulator, output_hw

ops = cortexm.ops

INT32_MAX = (1 << 31) - 1


def realistic_qparams(c_out, taps, seed):
    """Per-channel weight scales and an output scale giving outputs of about 50 LSB std."""
    rng = np.random.default_rng(seed)
    in_scale = 0.0219
    w_scales = 0.0063 * (1.0 + 0.29 * (np.arange(c_out) % 5)) * rng.uniform(0.9, 1.1, c_out)
    out_scale = in_scale * 0.0063 * 1.6 * 74.0 * 74.0 * np.sqrt(taps) / 50.0
    mults, shifts = zip(*(quantize_multiplier(in_scale * s / out_scale) for s in w_scales))
    return in_scale, w_scales, out_scale, list(mults), list(shifts)


def run_dw(x, w, bias, stride, padding, dilation, m, zp_in, zp_out, mults, shifts,
           act=(-128, 127)):
    got = ops.quantized_depthwise_conv2d(x, w, bias, stride, padding, dilation, m, -zp_in, zp_out,
                                         mults, shifts, act[0], act[1])
    want = depthwise_conv2d(x, w, bias, stride, padding, dilation, m, -zp_in, zp_out, mults,
                            shifts, *act)
    return got, want


# name: input shape, kernel (KH, KW), depth multiplier, stride, padding, dilation,
# (zp_in, zp_out), act range
CASES = {
    "mobilenetv2_3x3_stride2": ((1, 16, 16, 32), (3, 3), 1, (2, 2), (0, 0, 1, 1), (1, 1),
                                (-128, 3), (3, 127)),
    "mobilenetv2_3x3_same": ((1, 12, 12, 48), (3, 3), 1, (1, 1), (1, 1), (1, 1), (-128, -128),
                             (-128, 127)),
    "dscnn_depthwise": ((1, 25, 5, 64), (3, 3), 1, (1, 1), (1, 1), (1, 1), (-128, -128),
                        (-128, 127)),
    "awkward_multiplier_2": ((2, 9, 11, 7), (3, 3), 2, (2, 1), (1, 0, 2, 1), (1, 2), (-11, 6),
                             (-128, 127)),
    "multiplier_3_rectangular": ((2, 7, 8, 5), (2, 4), 3, (1, 2), (0, 1, 1, 2), (1, 1), (9, -9),
                                 (-128, 127)),
    "dilated_3x3_odd_channels": ((1, 13, 12, 37), (3, 3), 1, (2, 3), (0, 2, 1, 0), (2, 3),
                                 (4, 0), (-128, 127)),
    "five_by_five": ((1, 9, 9, 21), (5, 5), 1, (1, 1), (2, 2), (1, 1), (-3, 12), (-128, 127)),
    "one_by_one": ((2, 4, 5, 9), (1, 1), 2, (1, 1), (0, 0), (1, 1), (127, -128), (-128, 127)),
    "kernel_bigger_than_input": ((1, 2, 3, 6), (4, 5), 1, (1, 1), (2, 2, 1, 3), (1, 1), (0, 0),
                                 (-128, 127)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bit_exact_with_numpy_and_close_to_float(name):
    x_shape, (kh, kw), m, stride, padding, dilation, (zp_in, zp_out), act = CASES[name]
    rng = np.random.default_rng(len(name) + 100)
    c_out = x_shape[3] * m
    x = rng.integers(-128, 128, size=x_shape, dtype=np.int8)
    w = rng.integers(-128, 128, size=(1, kh, kw, c_out), dtype=np.int8)
    bias = rng.integers(-9000, 9000, size=c_out).astype(np.int32)
    in_scale, w_scales, out_scale, mults, shifts = realistic_qparams(c_out, kh * kw, len(name))
    got, want = run_dw(x, w, bias, stride, padding, dilation, m, zp_in, zp_out, mults, shifts,
                       act)
    oh, ow = output_hw(x_shape[1:3], (kh, kw), stride, padding, dilation)
    assert got.shape == (x_shape[0], oh, ow, c_out)
    assert got.dtype == np.int8
    assert np.array_equal(got, want)

    acc = depthwise_conv2d_accumulator(x, w, stride, padding, dilation, m, -zp_in) + bias
    exact = np.clip(acc * (in_scale * w_scales / out_scale) + zp_out, *act)
    assert np.mean(np.abs(exact - got) <= 1.0) >= 0.99
    assert np.mean((got > act[0]) & (got < act[1])) > 0.25  # the check is not vacuous


def extreme_qparams(rng, c_out):
    """Fixed-point extremes: shift 30 with tiny multipliers, shift -31, 2^31 - 1, 0."""
    mults, shifts = [], []
    for oc in range(c_out):
        kind = oc % 5
        if kind == 0:
            mults.append(int(rng.integers(1, 65)))
            shifts.append(30)
        elif kind == 1:
            mults.append(int(rng.integers(1 << 30, 1 << 31)))
            shifts.append(-31)
        elif kind == 2:
            mults.append(INT32_MAX)
            shifts.append(int(rng.integers(-31, 31)))
        elif kind == 3:
            mults.append(0)
            shifts.append(int(rng.integers(-31, 31)))
        else:
            mults.append(int(rng.integers(0, 1 << 31)))
            shifts.append(int(rng.integers(-31, 31)))
    return mults, shifts


@pytest.mark.parametrize("m", [1, 2])
def test_extreme_multipliers_shifts_and_bias_near_int32_limits(m):
    rng = np.random.default_rng(7 + m)
    x = rng.integers(-128, 128, size=(2, 7, 6, 11), dtype=np.int8)
    c_out = 11 * m
    w = rng.integers(-128, 128, size=(1, 3, 3, c_out), dtype=np.int8)
    max_sum = 3 * 3 * 255 * 128
    bias = np.array([(1 if oc % 3 else -1) * (INT32_MAX - max_sum) for oc in range(c_out)],
                    dtype=np.int32)
    mults, shifts = extreme_qparams(rng, c_out)
    for b in (bias, None):
        for stride, padding in (((1, 1), (1, 1)), ((2, 1), (0, 1, 2, 0))):
            got, want = run_dw(x, w, b, stride, padding, (1, 1), m, -128, 127, mults, shifts)
            assert np.array_equal(got, want)


def test_output_offset_add_wraps_like_the_target():
    # requantize gives 2^31 - 5; + 100 wraps to a negative int32 and clamps to -128.
    x = np.full((1, 1, 1, 2), -7, np.int8)
    w = np.full((1, 1, 1, 2), 100, np.int8)
    bias = np.array([INT32_MAX - 3] * 2, np.int32)
    got, want = run_dw(x, w, bias, (1, 1), (0, 0), (1, 1), 1, -7, 100, [INT32_MAX] * 2, [0, 0])
    assert np.array_equal(got, want)
    assert np.all(got == -128)


def test_randomized_awkward_cases():
    rng = np.random.default_rng(13)
    for i in range(150):
        m = 1 if i % 3 == 0 else int(rng.integers(1, 4))
        c_in = int(rng.integers(1, 22))
        kh, kw = (3, 3) if i % 3 == 0 else tuple(int(k) for k in rng.integers(1, 5, size=2))
        stride = tuple(int(s) for s in rng.integers(1, 4, size=2))
        dilation = tuple(int(d) for d in rng.integers(1, 4, size=2))
        padding = tuple(int(p) for p in rng.integers(0, 4, size=4))
        h, w_ = (int(s) for s in rng.integers(1, 10, size=2))
        if min(output_hw((h, w_), (kh, kw), stride, padding, dilation)) < 1:
            h, w_ = h + dilation[0] * (kh - 1), w_ + dilation[1] * (kw - 1)
        x = rng.integers(-128, 128, size=(int(rng.integers(1, 3)), h, w_, c_in), dtype=np.int8)
        w = rng.integers(-128, 128, size=(1, kh, kw, c_in * m), dtype=np.int8)
        bias = None if i % 4 == 0 else rng.integers(-50000, 50000, size=c_in * m).astype(np.int32)
        if i % 2:
            mults, shifts = extreme_qparams(rng, c_in * m)
        else:
            mults, shifts = realistic_qparams(c_in * m, kh * kw, seed=i)[3:]
        zp_in, zp_out = (int(z) for z in rng.integers(-128, 128, size=2))
        lo = int(rng.integers(-128, 60))
        act = (lo, int(rng.integers(lo, 128)))
        got, want = run_dw(x, w, bias, stride, padding, dilation, m, zp_in, zp_out, mults, shifts,
                           act)
        assert np.array_equal(got, want), (i, x.shape, w.shape, m, stride, padding, dilation)


def test_keywords_defaults_and_non_contiguous_input():
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, size=(1, 6, 10, 4), dtype=np.int8)[:, :, ::2, :]
    w = rng.integers(-128, 128, size=(1, 3, 3, 8), dtype=np.int8)
    got = ops.quantized_depthwise_conv2d(
        input=x, weight=w, bias=None, stride=(1, 1), padding=(1, 1), dilation=(1, 1),
        depth_multiplier=2, input_offset=4, output_offset=-2,
        requantize_multipliers=np.full(8, 1 << 30, np.int32),
        requantize_shifts=np.full(8, -7, np.int32))
    want = depthwise_conv2d(x, w, None, (1, 1), (1, 1), (1, 1), 2, 4, -2, [1 << 30] * 8, [-7] * 8)
    assert np.array_equal(got, want)


GOOD = dict(stride=(1, 1), padding=(1, 1), dilation=(1, 1), depth_multiplier=2, input_offset=0,
            output_offset=0, requantize_multipliers=[1 << 30] * 6, requantize_shifts=[-8] * 6,
            activation_min=-128, activation_max=127)


def call(x=None, w=None, bias=None, **override):
    x = np.zeros((1, 5, 5, 3), np.int8) if x is None else x
    w = np.zeros((1, 3, 3, 6), np.int8) if w is None else w
    return ops.quantized_depthwise_conv2d(x, w, bias, **{**GOOD, **override})


def test_good_call():
    assert call().shape == (1, 5, 5, 6)


@pytest.mark.parametrize("kwargs,match", [
    (dict(x=np.zeros((1, 5, 5, 3), np.int16)), "input dtype int16 must be int8"),
    (dict(x=np.zeros((1, 5, 5, 3, 1), np.int8)), "input rank 5"),
    (dict(w=np.zeros((1, 3, 3, 6), np.float64)), "weight dtype float64 must be int8"),
    (dict(w=np.zeros((2, 3, 3, 6), np.int8)), "weight.shape[0] = 2 must be 1"),
    (dict(w=np.zeros((1, 3, 3, 5), np.int8), requantize_multipliers=[1] * 5,
          requantize_shifts=[0] * 5),
     "weight.shape[3] = 5 must equal input.shape[3] * depth_multiplier"),
    (dict(depth_multiplier=3), "weight.shape[3] = 6 must equal input.shape[3] * depth_multiplier"),
    (dict(depth_multiplier=0), "depth_multiplier = 0 must be in [1, 2147483647]"),
    (dict(x=np.zeros((1, 5, 0, 3), np.int8)), "input.shape[2] = 0 must be >= 1"),
    (dict(w=np.zeros((1, 3, 0, 6), np.int8)), "weight.shape[2] = 0 must be >= 1"),
    (dict(dilation=(4, 1)), "input.shape[1] = 5 is smaller than the dilated kernel"),
    (dict(bias=np.zeros(3, np.int32)), "bias shape (3,) must be (6,)"),
    (dict(bias=np.zeros(6, np.float32)), "bias dtype float32 must be int32"),
    (dict(bias=[0] * 6), "bias must be a numpy array"),
    (dict(requantize_shifts=[0, 0, 0, 0, 31, 0]), "requantize_shifts[4] = 31 must be in [-31, 30]"),
    (dict(requantize_multipliers=[1, 1, -3, 1, 1, 1]), "requantize_multipliers[2] = -3 must be"),
    (dict(requantize_multipliers=[1] * 7), "requantize_multipliers has 7 elements, must have"),
    (dict(requantize_shifts=np.zeros((6, 1), np.int32)), "requantize_shifts rank 2"),
    (dict(activation_min=0, activation_max=-1), "activation_min = 0 must be <= activation_max"),
    (dict(activation_min=-129), "activation_min = -129 must be in [-128, 127]"),
    (dict(input_offset=-200), "input_offset = -200 must be in [-127, 128]"),
    (dict(output_offset=128), "output_offset = 128 must be in [-128, 127]"),
    (dict(stride=(1, 0)), "stride[1] = 0 must be in [1, 2147483647]"),
    (dict(padding=(0, 0, -2, 0)), "padding[2] = -2 must be in [0, 2147483647]"),
    (dict(dilation=(1, 1, 1)), "dilation has 3 elements, must have 2"),
    (dict(stride=None), "stride must be a sequence of ints"),
    (dict(padding=(0, 1 << 30, 0, 1 << 30)),
     "padding[1] = 1073741824 makes the padded input width 2^31 or more"),
])
def test_bad_arguments_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=re.escape("quantized_depthwise_conv2d: " + match)):
        call(**kwargs)
