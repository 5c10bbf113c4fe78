import numpy as np
import pytest

import cortexm
from numpy_reference.pool import avg_pool2d, padding4

ops = cortexm.ops

CASES = [
    # (NHWC shape, kernel_size, stride, padding as passed to the op)
    ((2, 11, 9, 19), (3, 2), (2, 1), (1, 0, 2, 1)),  # asymmetric padding, edge windows clipped
    ((1, 7, 7, 1280), (7, 7), (1, 1), (0, 0)),  # MobileNetV2 global average pool
    ((1, 112, 112, 16), (3, 3), (2, 2), (1, 1)),
    ((3, 8, 7, 1), 2, 2, 0),
    ((1, 2, 3, 5), (3, 4), (1, 1), (1, 2, 2, 3)),  # kernel larger than the input
    ((2, 10, 10, 8), (2, 2), (3, 3), (1, 1, 0, 0)),  # stride larger than the kernel
    ((1, 17, 17, 9), 17, 1, 0),  # 289 taps: int32 sums
    ((1, 25, 5, 64), (5, 5), (5, 1), (2, 2)),  # DS-CNN-like
]


@pytest.mark.parametrize("shape,kernel,stride,padding", CASES)
def test_bit_exact_with_numpy(shape, kernel, stride, padding):
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(-128, 128, size=shape, dtype=np.int8)
    got = ops.quantized_avg_pool2d(x, kernel, stride, padding, -128, 127)
    k2, s2 = tuple(np.broadcast_to(kernel, 2)), tuple(np.broadcast_to(stride, 2))
    want = avg_pool2d(x, k2, s2, padding4(padding))
    assert got.dtype == np.int8
    assert got.shape == want.shape
    assert np.array_equal(got, want)


def test_matches_torch_avg_pool_rounded_half_away():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x = rng.integers(-128, 128, size=(2, 13, 11, 7), dtype=np.int8)
    got = ops.quantized_avg_pool2d(x, (3, 3), (2, 2), (1, 1))
    t = torch.from_numpy(x.astype(np.float32)).permute(0, 3, 1, 2)
    mean = torch.nn.functional.avg_pool2d(t, 3, 2, 1, count_include_pad=False)
    mean = mean.permute(0, 2, 3, 1).numpy().astype(np.float64)
    rounded = np.sign(mean) * np.floor(np.abs(mean) + 0.5)
    assert np.array_equal(got, rounded.astype(np.int8))
    assert np.all(np.abs(mean - got) <= 0.5)  # same qparams: within half an LSB of float math


def test_halves_round_away_from_zero():
    x = np.array([1, 2, -1, -2, 3, 4, -3, -4, 0, 1, 0, -1], np.int8).reshape(1, 1, 12, 1)
    got = ops.quantized_avg_pool2d(x, (1, 2), (1, 2), 0)
    assert got.ravel().tolist() == [2, -2, 4, -4, 1, -1]


def test_randomized_awkward_cases():
    rng = np.random.default_rng(21)
    for _ in range(150):
        kh, kw = (int(v) for v in rng.integers(1, 5, size=2))
        pad = tuple(int(rng.integers(0, k)) for k in (kh, kw, kh, kw))
        h = int(rng.integers(max(1, kh - pad[0] - pad[2]), 12))
        w = int(rng.integers(max(1, kw - pad[1] - pad[3]), 12))
        x = rng.integers(-128, 128, size=(int(rng.integers(1, 3)), h, w, int(rng.integers(1, 40))),
                         dtype=np.int8)
        stride = tuple(int(s) for s in rng.integers(1, 4, size=2))
        lo = int(rng.integers(-128, 100))
        act = (lo, int(rng.integers(lo, 128)))
        got = ops.quantized_avg_pool2d(x, (kh, kw), stride, pad, *act)
        assert np.array_equal(got, avg_pool2d(x, (kh, kw), stride, pad, *act))


def test_fused_activation_and_keywords():
    x = np.arange(-128, 128, dtype=np.int8).reshape(1, 4, 8, 8)
    got = ops.quantized_avg_pool2d(input=x, kernel_size=(2, 2), stride=(2, 2), padding=(0, 0),
                                   activation_min=-20, activation_max=30)
    assert np.array_equal(got, avg_pool2d(x, (2, 2), (2, 2), (0, 0, 0, 0), -20, 30))
    assert got.min() >= -20 and got.max() <= 30


def test_non_contiguous_input():
    x = np.random.default_rng(2).integers(-128, 128, size=(1, 9, 9, 12), dtype=np.int8)[..., ::2]
    assert np.array_equal(ops.quantized_avg_pool2d(x, 3, 2, 1), avg_pool2d(x, (3, 3), (2, 2),
                                                                             (1, 1, 1, 1)))


X = np.zeros((1, 6, 6, 3), np.int8)


@pytest.mark.parametrize("args,match", [
    (((3, 3), (2, 2), (3, 1)), r"padding\[0\] = 3 must be < kernel_size\[0\]"),
    (((3, 3), (2, 2), (1, 1, 1, 3)), r"padding\[3\] = 3 must be < kernel_size\[1\]"),
    (((3, 3), (2, 2), (-1, 0)), r"padding\[0\] = -1 must be >= 0"),
    (((0, 3), (1, 1), 0), r"kernel_size\[0\] = 0 must be >= 1"),
    (((3, 3), (1, 0), 0), r"stride\[1\] = 0 must be >= 1"),
    (((9, 3), (1, 1), (1, 1)), r"input.shape\[1\] = 6 is smaller than the padded kernel"),
    (((3, 3, 3), (1, 1), 0), "kernel_size has 3 elements, must have 1 or 2"),
    (((3, 3), (1, 1), (1, 1, 1)), "padding has 3 elements, must have 1 or 2 or 4"),
    (((3, 3), 1.5, 0), "stride must be a sequence of ints"),
    (((2**40, 3), (1, 1), 0), r"kernel_size\[0\] = 1099511627776 does not fit in int32"),
])
def test_bad_params_raise_value_error(args, match):
    with pytest.raises(ValueError, match=match):
        ops.quantized_avg_pool2d(X, *args)


def test_bad_inputs_raise_value_error():
    with pytest.raises(ValueError, match="activation_min = 5 must be <= activation_max"):
        ops.quantized_avg_pool2d(X, 2, 2, 0, 5, 4)
    with pytest.raises(ValueError, match="activation_max = 128"):
        ops.quantized_avg_pool2d(X, 2, 2, 0, -128, 128)
    with pytest.raises(ValueError, match="input dtype uint8 must be int8"):
        ops.quantized_avg_pool2d(X.astype(np.uint8), 2, 2, 0)
    with pytest.raises(ValueError, match=r"input rank 3 \(shape \(6, 6, 3\)\) must be 4"):
        ops.quantized_avg_pool2d(X[0], 2, 2, 0)
    with pytest.raises(ValueError, match="must be non-empty"):
        ops.quantized_avg_pool2d(np.zeros((1, 0, 6, 3), np.int8), 2, 2, 0)
    with pytest.raises(ValueError, match="covers more than 2"):
        ops.quantized_avg_pool2d(np.zeros((1, 4096, 4096, 1), np.int8), 4096, 1, 0)
