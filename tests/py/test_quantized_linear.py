import numpy as np
import pytest

import cortexm
from numpy_reference.linear import linear, linear_params

ops = cortexm.ops


def make_case(rng, lead, k, c_out, zps=(-7, 3, 5), per_channel=True, with_bias=True):
    """Random int8 data with realistic scales: the output scale maps ~3 sigma onto int8."""
    zp_in, zp_w, zp_out = zps
    x = rng.integers(-128, 128, size=lead + (k,), dtype=np.int8)
    w = rng.integers(-128, 128, size=(c_out, k), dtype=np.int8)
    input_scale = 0.0213
    weight_scales = rng.uniform(0.001, 0.02, size=c_out) if per_channel else np.array([0.0071])
    output_scale = input_scale * 0.0071 * max(np.sqrt(k) * 74 * 74 * 3 / 128, 1.0)
    bias = rng.integers(-20000, 20001, size=c_out, dtype=np.int32) if with_bias else None
    mults, shifts = linear_params(input_scale, weight_scales, output_scale)
    args = dict(input_offset=-zp_in, filter_offset=-zp_w, output_offset=zp_out,
                requantize_multipliers=mults, requantize_shifts=shifts)
    scales = (input_scale, weight_scales, output_scale)
    return x, w, bias, args, scales


def float_result(x, w, bias, zps, scales, act=(-128, 127)):
    input_scale, weight_scales, output_scale = scales
    real = ((x.astype(np.float64) - zps[0]) @ (w.astype(np.float64) - zps[1]).T) * input_scale
    real = real * weight_scales
    if bias is not None:
        real = real + bias * input_scale * weight_scales
    return np.clip(real / output_scale + zps[2], *act)


CASES = [
    # (leading dims, K, C_out, zero points (input, weight, output), per-channel, bias)
    ((3,), 37, 13, (-7, 3, 5), True, True),
    ((2, 3), 17, 5, (100, -20, -3), False, True),
    ((), 64, 12, (-128, 0, 11), True, True),  # DS-CNN final layer, unbatched
    ((1,), 1280, 1000, (-128, 0, -9), True, True),  # MobileNetV2 classifier
    ((4,), 1, 1, (0, 0, 0), False, False),
    ((2, 1, 3), 33, 9, (127, -128, 127), True, False),
]


@pytest.mark.parametrize("lead,k,c_out,zps,per_channel,with_bias", CASES)
def test_bit_exact_with_numpy(lead, k, c_out, zps, per_channel, with_bias):
    rng = np.random.default_rng(k * 1000 + c_out)
    x, w, bias, args, scales = make_case(rng, lead, k, c_out, zps, per_channel, with_bias)
    got = ops.quantized_linear(x, w, bias, activation_min=-128, activation_max=127, **args)
    want = linear(x, w, bias, args["input_offset"], args["filter_offset"], args["output_offset"],
                  args["requantize_multipliers"], args["requantize_shifts"])
    assert got.shape == lead + (c_out,)
    assert got.dtype == np.int8
    assert np.array_equal(got, want)
    exact = float_result(x, w, bias, zps, scales)
    assert np.mean(np.abs(exact - got) <= 1.0) >= 0.99


def test_randomized_awkward_cases():
    rng = np.random.default_rng(11)
    for _ in range(150):
        lead = tuple(int(d) for d in rng.integers(1, 4, size=rng.integers(0, 3)))
        k, c_out = int(rng.integers(1, 80)), int(rng.integers(1, 20))
        zps = (int(rng.integers(-128, 128)), int(rng.integers(-128, 128)) if rng.random() < 0.5
               else 0, int(rng.integers(-128, 128)))
        x, w, bias, args, scales = make_case(rng, lead, k, c_out, zps, rng.random() < 0.5,
                                             rng.random() < 0.8)
        lo = int(rng.integers(-128, 100))
        act = (lo, int(rng.integers(lo, 128)))
        got = ops.quantized_linear(x, w, bias, activation_min=act[0], activation_max=act[1],
                                   **args)
        want = linear(x, w, bias, args["input_offset"], args["filter_offset"],
                      args["output_offset"], args["requantize_multipliers"],
                      args["requantize_shifts"], *act)
        assert np.array_equal(got, want)


def test_extreme_requantization_and_bias_near_int32_limits():
    rng = np.random.default_rng(3)
    k, c_out = 37, 6
    x = rng.integers(-128, 128, size=(2, k), dtype=np.int8)
    w = rng.integers(-128, 128, size=(c_out, k), dtype=np.int8)
    headroom = k * 255 * 255
    bias = np.array([2**31 - 1 - headroom, -2**31 + headroom] * 3, np.int32)
    for mults, shifts in [([2**31 - 1], [30]), ([2**31 - 1], [-31]), ([1], [30]), ([0], [0]),
                          ([1 << 30] * c_out, list(range(-20, -20 + c_out)))]:
        args = (x, w, bias, 128, -127, 3, mults, shifts, -128, 127)
        assert np.array_equal(ops.quantized_linear(*args), linear(*args))


def test_accumulator_wraps_like_the_target():
    # 40000 * 255 * 255 overflows int32: the sum wraps mod 2^32, as on a Cortex-M.
    x = np.full((2, 40000), 127, np.int8)
    w = np.full((3, 40000), 127, np.int8)
    args = (x, w, None, 128, 128, 0, [1 << 30], [-16], -128, 127)
    assert np.array_equal(ops.quantized_linear(*args), linear(*args))


def test_non_contiguous_input():
    rng = np.random.default_rng(8)
    x = rng.integers(-128, 128, size=(5, 40), dtype=np.int8)[:, ::2]
    w = rng.integers(-128, 128, size=(20, 7), dtype=np.int8).T
    args = (x, w, None, 10, 0, -4, [1 << 30], [-10], -128, 127)
    assert np.array_equal(ops.quantized_linear(*args), linear(*args))


BASE = dict(bias=np.zeros(3, np.int32), input_offset=0, filter_offset=0, output_offset=0,
            requantize_multipliers=[1 << 30], requantize_shifts=[0], activation_min=-128,
            activation_max=127)
X, W = np.zeros((2, 4), np.int8), np.zeros((3, 4), np.int8)


@pytest.mark.parametrize("override,match", [
    (dict(requantize_shifts=[31]), r"requantize_shifts\[0\] = 31 must be in \[-31, 30\]"),
    (dict(requantize_multipliers=[1, -1, 1], requantize_shifts=[0, 0, 0]),
     r"requantize_multipliers\[1\] = -1"),
    (dict(requantize_multipliers=[2**31]), "requantize_multipliers value 2147483648"),
    (dict(requantize_multipliers=[1, 1], requantize_shifts=[0, 0]),
     "requantize_multipliers has 2 elements, must have 1 or C_out = 3"),
    (dict(requantize_shifts=[0, 0]), "requantize_shifts has 2 elements, must have 1"),
    (dict(requantize_shifts=5), "requantize_shifts must be a sequence of ints"),
    (dict(activation_min=5, activation_max=4), "activation_min = 5"),
    (dict(activation_max=128), "activation_max = 128"),
    (dict(input_offset=129), "input_offset = 129"),
    (dict(input_offset=-128), "input_offset = -128"),
    (dict(filter_offset=-128), "filter_offset = -128"),
    (dict(output_offset=128), "output_offset = 128"),
    (dict(bias=np.zeros(4, np.int32)), r"bias shape \(4,\) must be \(3,\)"),
    (dict(bias=np.zeros(3, np.int64)), "bias dtype int64 must be int32"),
    (dict(bias=np.zeros((3, 1), np.int32)), "bias rank 2"),
])
def test_bad_params_raise_value_error(override, match):
    with pytest.raises(ValueError, match=match):
        ops.quantized_linear(X, W, **{**BASE, **override})


def test_bad_arrays_raise_value_error():
    with pytest.raises(ValueError, match="input dtype float32 must be int8"):
        ops.quantized_linear(X.astype(np.float32), W, **BASE)
    with pytest.raises(ValueError, match="weights dtype uint8 must be int8"):
        ops.quantized_linear(X, W.astype(np.uint8), **BASE)
    with pytest.raises(ValueError, match=r"weights rank 1 \(shape \(12,\)\) must be 2"):
        ops.quantized_linear(X, W.reshape(-1), **BASE)
    with pytest.raises(ValueError, match=r"weights shape \(3, 5\) must be \(C_out, 4\)"):
        ops.quantized_linear(X, np.zeros((3, 5), np.int8), **BASE)
    with pytest.raises(ValueError, match="input rank 0"):
        ops.quantized_linear(np.zeros((), np.int8), W, **BASE)
    with pytest.raises(ValueError, match="must not be empty"):
        ops.quantized_linear(np.zeros((0, 4), np.int8), W, **BASE)
    with pytest.raises(ValueError, match="must not be empty"):
        ops.quantized_linear(np.zeros((2, 0), np.int8), np.zeros((3, 0), np.int8), **BASE)
    with pytest.raises(ValueError, match="input must be a numpy array, got list"):
        ops.quantized_linear([[1, 2, 3, 4]], W, **BASE)
