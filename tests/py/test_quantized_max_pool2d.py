import numpy as np
import pytest

import cortexm
from numpy_reference.pool import max_pool2d, padding4

ops = cortexm.ops

CASES = [
    # (NHWC shape, kernel_size, stride, padding as passed to the op)
    ((2, 11, 9, 19), (3, 2), (2, 1), (1, 0, 2, 1)),  # asymmetric padding, edge windows clipped
    ((1, 112, 112, 16), (3, 3), (2, 2), (1, 1)),  # ResNet-style stem max pool 3x3 s2 p1
    ((1, 7, 7, 1280), (7, 7), (1, 1), (0, 0)),
    ((3, 8, 7, 1), 2, 2, 0),
    ((1, 2, 3, 5), (3, 4), (1, 1), (1, 2, 2, 3)),  # kernel larger than the input
    ((2, 10, 10, 8), (2, 2), (3, 3), (1, 1, 0, 0)),  # stride larger than the kernel
]


@pytest.mark.parametrize("shape,kernel,stride,padding", CASES)
def test_bit_exact_with_numpy(shape, kernel, stride, padding):
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(-128, 128, size=shape, dtype=np.int8)
    got = ops.quantized_max_pool2d(x, kernel, stride, padding, -128, 127)
    k2, s2 = tuple(np.broadcast_to(kernel, 2)), tuple(np.broadcast_to(stride, 2))
    want = max_pool2d(x, k2, s2, padding4(padding))
    assert got.dtype == np.int8
    assert got.shape == want.shape
    assert np.array_equal(got, want)


def test_matches_torch_max_pool():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x = rng.integers(-128, -90, size=(2, 13, 11, 7), dtype=np.int8)  # padding must never win
    got = ops.quantized_max_pool2d(x, (3, 3), (2, 2), (1, 1))
    t = torch.from_numpy(x.astype(np.float32)).permute(0, 3, 1, 2)
    want = torch.nn.functional.max_pool2d(t, 3, 2, 1).permute(0, 2, 3, 1).numpy()
    assert np.array_equal(got, want.astype(np.int8))  # same qparams: float max is exact


def test_randomized_awkward_cases():
    rng = np.random.default_rng(22)
    for _ in range(150):
        kh, kw = (int(v) for v in rng.integers(1, 5, size=2))
        pad = tuple(int(rng.integers(0, k)) for k in (kh, kw, kh, kw))
        h = int(rng.integers(max(1, kh - pad[0] - pad[2]), 12))
        w = int(rng.integers(max(1, kw - pad[1] - pad[3]), 12))
        in_lo = int(rng.integers(-128, 128))
        x = rng.integers(in_lo, 128, size=(int(rng.integers(1, 3)), h, w,
                                           int(rng.integers(1, 40))), dtype=np.int8)
        stride = tuple(int(s) for s in rng.integers(1, 4, size=2))
        lo = int(rng.integers(-128, 100))
        act = (lo, int(rng.integers(lo, 128)))
        got = ops.quantized_max_pool2d(x, (kh, kw), stride, pad, *act)
        assert np.array_equal(got, max_pool2d(x, (kh, kw), stride, pad, *act))


def test_fused_relu6_range():
    x = np.arange(-128, 128, dtype=np.int8).reshape(1, 4, 8, 8)
    got = ops.quantized_max_pool2d(x, kernel_size=2, stride=2, activation_min=0,
                                   activation_max=6)
    assert np.array_equal(got, max_pool2d(x, (2, 2), (2, 2), (0, 0, 0, 0), 0, 6))


X = np.zeros((1, 6, 6, 3), np.int8)


@pytest.mark.parametrize("args,match", [
    (((3, 3), (2, 2), (3, 1)), r"padding\[0\] = 3 must be < kernel_size\[0\]"),
    (((2, 2), (2, 2), (0, 2)), r"padding\[1\] = 2 must be < kernel_size\[1\]"),
    (((3, 3), (0, 2), 0), r"stride\[0\] = 0 must be >= 1"),
    (((3, -1), (1, 1), 0), r"kernel_size\[1\] = -1 must be >= 1"),
    (((3, 3), (1, 1), "1"), "padding must be a sequence of ints"),
])
def test_bad_params_raise_value_error(args, match):
    with pytest.raises(ValueError, match=match):
        ops.quantized_max_pool2d(X, *args)


def test_bad_inputs_raise_value_error():
    with pytest.raises(ValueError, match="activation_min = 7 must be <= activation_max"):
        ops.quantized_max_pool2d(X, 2, 2, 0, 7, 6)
    with pytest.raises(ValueError, match="input dtype float32 must be int8"):
        ops.quantized_max_pool2d(X.astype(np.float32), 2, 2, 0)
    with pytest.raises(ValueError, match="input must be a numpy array"):
        ops.quantized_max_pool2d(X.tolist(), 2, 2, 0)
