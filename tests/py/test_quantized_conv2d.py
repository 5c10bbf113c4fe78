import re

import numpy as np
import pytest

import cortexm
from numpy_reference.common import quantize_multiplier
from numpy_reference.conv import conv2d, conv2d_accumulator, output_hw

ops = cortexm.ops

INT32_MAX = (1 << 31) - 1


def realistic_qparams(c_out, taps, seed):
    """Per-channel weight scales and an output scale giving outputs of about 50 LSB std."""
    rng = np.random.default_rng(seed)
    in_scale = 0.0173
    w_scales = 0.0041 * (1.0 + 0.37 * (np.arange(c_out) % 4)) * rng.uniform(0.9, 1.1, c_out)
    out_scale = in_scale * 0.0041 * 1.5 * 74.0 * 74.0 * np.sqrt(taps) / 50.0
    mults, shifts = zip(*(quantize_multiplier(in_scale * s / out_scale) for s in w_scales))
    return in_scale, w_scales, out_scale, list(mults), list(shifts)


def run_conv(x, w, bias, stride, padding, dilation, zp_in, zp_out, mults, shifts,
             act=(-128, 127)):
    got = ops.quantized_conv2d(x, w, bias, stride, padding, dilation, -zp_in, zp_out, mults,
                               shifts, act[0], act[1])
    want = conv2d(x, w, bias, stride, padding, dilation, -zp_in, zp_out, mults, shifts, *act)
    return got, want


# name: input shape, weight shape (OHWI), stride, padding, dilation, (zp_in, zp_out), act range
CASES = {
    "mobilenetv2_first_conv": ((1, 32, 32, 3), (32, 3, 3, 3), (2, 2), (0, 0, 1, 1), (1, 1),
                               (-1, -128), (-128, 127)),
    "pointwise": ((1, 16, 16, 32), (16, 1, 1, 32), (1, 1), (0, 0), (1, 1), (5, -3), (-128, 127)),
    "pointwise_strided_grouped": ((2, 7, 9, 12), (9, 1, 1, 4), (2, 3), (0, 0), (1, 1), (-9, 2),
                                  (-128, 127)),
    "pointwise_padded": ((1, 5, 6, 7), (5, 1, 1, 7), (1, 1), (1, 0, 0, 2), (1, 1), (3, 1),
                         (-128, 127)),
    "dscnn_first_conv": ((1, 49, 10, 1), (64, 10, 4, 1), (2, 2), (4, 1, 5, 2), (1, 1),
                         (-20, -128), (-128, 127)),
    "awkward_grouped_dilated": ((2, 9, 11, 9), (15, 3, 2, 3), (2, 1), (1, 0, 2, 1), (1, 2),
                                (7, -5), (-128, 127)),
    "kernel_bigger_than_input": ((1, 2, 3, 5), (7, 4, 5, 5), (1, 1), (2, 2, 1, 3), (1, 1),
                                 (0, 0), (-128, 127)),
    "depthwise_as_groups": ((1, 6, 6, 5), (10, 3, 3, 1), (1, 1), (1, 1), (1, 1), (-128, 127),
                            (-128, 127)),
    "long_columns": ((1, 6, 7, 67), (19, 5, 5, 67), (1, 1), (2, 2), (1, 1), (127, -128),
                     (-128, 127)),
    "fused_relu": ((2, 8, 8, 8), (12, 3, 3, 8), (1, 1), (1, 1), (1, 1), (3, -128), (-128, -20)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bit_exact_with_numpy_and_close_to_float(name):
    x_shape, w_shape, stride, padding, dilation, (zp_in, zp_out), act = CASES[name]
    rng = np.random.default_rng(len(name))
    x = rng.integers(-128, 128, size=x_shape, dtype=np.int8)
    w = rng.integers(-128, 128, size=w_shape, dtype=np.int8)
    c_out, kh, kw, group_c = w_shape
    bias = rng.integers(-40000, 40000, size=c_out).astype(np.int32)
    in_scale, w_scales, out_scale, mults, shifts = realistic_qparams(c_out, kh * kw * group_c,
                                                                     seed=len(name))
    got, want = run_conv(x, w, bias, stride, padding, dilation, zp_in, zp_out, mults, shifts, act)
    oh, ow = output_hw(x_shape[1:3], (kh, kw), stride, padding, dilation)
    assert got.shape == (x_shape[0], oh, ow, c_out)
    assert got.dtype == np.int8
    assert np.array_equal(got, want)

    acc = conv2d_accumulator(x, w, stride, padding, dilation, -zp_in) + bias
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


@pytest.mark.parametrize("as_arrays", [False, True])
def test_extreme_multipliers_shifts_and_bias_near_int32_limits(as_arrays):
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, size=(2, 7, 6, 6), dtype=np.int8)
    w = rng.integers(-128, 128, size=(10, 3, 3, 3), dtype=np.int8)
    max_sum = 3 * 3 * 3 * 255 * 128
    bias = np.array([(1 if oc % 2 else -1) * (INT32_MAX - max_sum) for oc in range(10)],
                    dtype=np.int32)
    mults, shifts = extreme_qparams(rng, 10)
    if as_arrays:
        mults, shifts = np.array(mults, np.int32), np.array(shifts, np.int32)
    for b in (bias, None):
        got, want = run_conv(x, w, b, (1, 2), (1, 0, 2, 1), (2, 1), 128 - 256, 127, mults, shifts)
        assert np.array_equal(got, want)


def test_output_offset_add_wraps_like_the_target():
    # requantize gives 2^31 - 5; + 100 wraps to a negative int32 and clamps to -128.
    x = np.full((1, 1, 2, 1), -7, np.int8)
    w = np.full((1, 1, 1, 1), 100, np.int8)
    bias = np.array([INT32_MAX - 3], np.int32)
    got, want = run_conv(x, w, bias, (1, 1), (0, 0), (1, 1), -7, 100, [INT32_MAX], [0])
    assert np.array_equal(got, want)
    assert np.all(got == -128)


def test_randomized_awkward_cases():
    rng = np.random.default_rng(11)
    for i in range(150):
        groups = int(rng.integers(1, 4))
        c_in, c_out = groups * int(rng.integers(1, 6)), groups * int(rng.integers(1, 6))
        kh, kw = (1, 1) if i % 4 == 0 else tuple(int(k) for k in rng.integers(1, 5, size=2))
        stride = tuple(int(s) for s in rng.integers(1, 4, size=2))
        dilation = tuple(int(d) for d in rng.integers(1, 4, size=2))
        padding = (0, 0) if i % 4 == 0 else tuple(int(p) for p in rng.integers(0, 4, size=4))
        h, w_ = (int(s) for s in rng.integers(1, 10, size=2))
        if min(output_hw((h, w_), (kh, kw), stride, padding, dilation)) < 1:
            h, w_ = h + dilation[0] * (kh - 1), w_ + dilation[1] * (kw - 1)
        x = rng.integers(-128, 128, size=(int(rng.integers(1, 3)), h, w_, c_in), dtype=np.int8)
        w = rng.integers(-128, 128, size=(c_out, kh, kw, c_in // groups), dtype=np.int8)
        bias = None if i % 3 == 0 else rng.integers(-50000, 50000, size=c_out).astype(np.int32)
        if i % 2:
            mults, shifts = extreme_qparams(rng, c_out)
        else:
            mults, shifts = realistic_qparams(c_out, kh * kw * (c_in // groups), seed=i)[3:]
        zp_in, zp_out = (int(z) for z in rng.integers(-128, 128, size=2))
        lo = int(rng.integers(-128, 60))
        act = (lo, int(rng.integers(lo, 128)))
        got, want = run_conv(x, w, bias, stride, padding, dilation, zp_in, zp_out, mults, shifts,
                             act)
        assert np.array_equal(got, want), (i, x.shape, w.shape, stride, padding, dilation)


def test_keywords_defaults_and_non_contiguous_input():
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, size=(1, 6, 10, 4), dtype=np.int8)[:, :, ::2, :]
    w = rng.integers(-128, 128, size=(3, 3, 3, 4), dtype=np.int8)
    got = ops.quantized_conv2d(input=x, weight=w, bias=None, stride=(1, 1), padding=(1, 1),
                               dilation=(1, 1), input_offset=4, output_offset=-2,
                               requantize_multipliers=[1 << 30] * 3,
                               requantize_shifts=[-9, -10, -8])
    want = conv2d(x, w, None, (1, 1), (1, 1), (1, 1), 4, -2, [1 << 30] * 3, [-9, -10, -8])
    assert np.array_equal(got, want)


GOOD = dict(stride=(1, 1), padding=(1, 1), dilation=(1, 1), input_offset=0, output_offset=0,
            requantize_multipliers=[1 << 30] * 4, requantize_shifts=[-8] * 4,
            activation_min=-128, activation_max=127)


def call(x=None, w=None, bias=None, **override):
    x = np.zeros((1, 5, 5, 6), np.int8) if x is None else x
    w = np.zeros((4, 3, 3, 3), np.int8) if w is None else w
    return ops.quantized_conv2d(x, w, bias, **{**GOOD, **override})


def test_good_call_is_grouped():
    assert call().shape == (1, 5, 5, 4)  # groups = 6 / 3


@pytest.mark.parametrize("kwargs,match", [
    (dict(x=np.zeros((1, 5, 5, 6), np.float32)), "input dtype float32 must be int8"),
    (dict(x=np.zeros((5, 5, 6), np.int8)), "input rank 3 (shape (5, 5, 6)) must be 4"),
    (dict(x=[[[[1]]]]), "input must be a numpy array"),
    (dict(w=np.zeros((4, 3, 3, 3), np.uint8)), "weight dtype uint8 must be int8"),
    (dict(w=np.zeros((4, 3, 3), np.int8)), "weight rank 3"),
    (dict(w=np.zeros((4, 3, 3, 4), np.int8)), "weight.shape[3] = 4 must divide input.shape[3]"),
    (dict(w=np.zeros((5, 3, 3, 3), np.int8), requantize_multipliers=[1 << 30] * 5,
          requantize_shifts=[0] * 5), "weight.shape[0] = 5 must be a multiple of groups"),
    (dict(w=np.zeros((0, 3, 3, 3), np.int8)), "weight.shape[0] = 0 must be >= 1"),
    (dict(x=np.zeros((0, 5, 5, 6), np.int8)), "input.shape[0] = 0 must be >= 1"),
    (dict(w=np.zeros((4, 9, 3, 3), np.int8)), "input.shape[1] = 5 is smaller than the dilated"),
    (dict(bias=np.zeros(3, np.int32)), "bias shape (3,) must be (4,)"),
    (dict(bias=np.zeros(4, np.int64)), "bias dtype int64 must be int32"),
    (dict(bias=np.zeros((4, 1), np.int32)), "bias rank 2"),
    (dict(requantize_shifts=[0, 31, 0, 0]), "requantize_shifts[1] = 31 must be in [-31, 30]"),
    (dict(requantize_shifts=[0, 0, 0, -32]), "requantize_shifts[3] = -32 must be in [-31, 30]"),
    (dict(requantize_multipliers=[-1, 1, 1, 1]), "requantize_multipliers[0] = -1 must be in"),
    (dict(requantize_multipliers=[1 << 31] * 4), "requantize_multipliers value 2147483648 does"),
    (dict(requantize_multipliers=[1] * 3), "requantize_multipliers has 3 elements, must have"),
    (dict(requantize_shifts=[0] * 5), "requantize_shifts has 5 elements, must have C_out = 4"),
    (dict(requantize_multipliers=[0.5] * 4), "requantize_multipliers must be a sequence of ints"),
    (dict(requantize_shifts=np.zeros(4, np.int64)), "requantize_shifts dtype int64 must be int32"),
    (dict(requantize_shifts=7), "requantize_shifts must be a sequence of ints"),
    (dict(activation_min=5, activation_max=4), "activation_min = 5 must be <= activation_max"),
    (dict(activation_max=128), "activation_max = 128 must be in [-128, 127]"),
    (dict(input_offset=129), "input_offset = 129 must be in [-127, 128]"),
    (dict(input_offset=-128), "input_offset = -128 must be in [-127, 128]"),
    (dict(output_offset=-129), "output_offset = -129 must be in [-128, 127]"),
    (dict(stride=(0, 1)), "stride[0] = 0 must be in [1, 2147483647]"),
    (dict(stride=(1,)), "stride has 1 elements, must have 2"),
    (dict(dilation=(1, 0)), "dilation[1] = 0 must be in [1, 2147483647]"),
    (dict(padding=(1, -1)), "padding[1] = -1 must be in [0, 2147483647]"),
    (dict(padding=(1, 1, 1)), "padding has 3 elements, must have 2 or 4"),
    (dict(padding=(0, 0, 0, 1 << 31)), "padding[3] = 2147483648 must be in [0, 2147483647]"),
    (dict(padding="ab"), "padding must be a sequence of ints"),
    (dict(padding=(0, 0, (1 << 31) - 3, 0)),
     "padding[2] = 2147483645 makes the padded input height 2^31 or more"),
])
def test_bad_arguments_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=re.escape("quantized_conv2d: " + match)):
        call(**kwargs)
