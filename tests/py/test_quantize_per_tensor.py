import numpy as np
import pytest

import cortexm
from numpy_reference.quantize import dequantize_per_tensor, quantize_per_tensor

ops = cortexm.ops

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, 3.4e38, -3.4e38, 1e30, -1e30, 1.2e-38, 1e-45],
                    np.float32)


def inputs(rng, shape, scale, zero_point, qmin, qmax):
    """Uniform values reaching 20 steps past both ends of the range, plus special values."""
    steps = rng.uniform(qmin - zero_point - 20, qmax - zero_point + 20, size=shape)
    x = np.asarray(steps * scale, np.float32)
    flat = x.reshape(-1)
    flat[:min(flat.size, SPECIALS.size)] = SPECIALS[:flat.size]
    return x


CASES = [
    # (shape, scale (float32-exact), zero point, quant_min, quant_max, dtype)
    ((1001,), 0.0371, -13, -127, 120, np.int8),
    ((2, 3, 5, 7), 0.25, 0, -128, 127, np.int8),  # exact halves: round half to even
    ((17, 3), 1.7, 127, -128, 127, np.int8),
    ((4099,), 0.00031, 0, -32768, 32767, np.int16),
    ((33, 9), 3.7, -32768, -32768, 32767, np.int16),
    ((), 0.5, 5, -128, 127, np.int8),
    ((64,), 1e-20, 7, -100, 100, np.int8),
]


@pytest.mark.parametrize("shape,scale,zero_point,qmin,qmax,dtype", CASES)
def test_quantize_bit_exact_with_numpy(shape, scale, zero_point, qmin, qmax, dtype):
    scale = float(np.float32(scale))
    x = inputs(np.random.default_rng(qmax - qmin), shape, scale, zero_point, qmin, qmax)
    got = ops.quantize_per_tensor(x, scale, zero_point, qmin, qmax, dtype)
    assert got.dtype == dtype and got.shape == x.shape
    assert np.array_equal(got, quantize_per_tensor(x, scale, zero_point, qmin, qmax, dtype))
    # Within half an LSB of exact math, give or take float32 error in 1 / scale and the product.
    finite = np.isfinite(x)
    exact = x[finite].astype(np.float64) / scale
    ideal = np.clip(exact + zero_point, qmin, qmax)
    assert np.all(np.abs(ideal - got[finite]) <= 0.5 + np.abs(exact) * 4e-7 + 1e-9)


@pytest.mark.parametrize("shape,scale,zero_point,qmin,qmax,dtype", CASES)
def test_quantize_matches_pytorch_decomposed(shape, scale, zero_point, qmin, qmax, dtype):
    torch = pytest.importorskip("torch")
    import torch.ao.quantization.fx._decomposed  # noqa: F401  registers quantized_decomposed

    scale = float(np.float32(scale))
    x = inputs(np.random.default_rng(qmax - qmin + 1), shape, scale, zero_point, qmin, qmax)
    got = ops.quantize_per_tensor(x, scale, zero_point, qmin, qmax, dtype)
    torch_dtype = torch.int8 if dtype == np.int8 else torch.int16
    want = torch.ops.quantized_decomposed.quantize_per_tensor(
        torch.from_numpy(x.copy()), scale, zero_point, qmin, qmax, torch_dtype).numpy()
    assert np.array_equal(got, want)
    q = np.arange(qmin, qmax + 1).astype(dtype)
    got_f = ops.dequantize_per_tensor(q, scale, zero_point, qmin, qmax, dtype)
    want_f = torch.ops.quantized_decomposed.dequantize_per_tensor(
        torch.from_numpy(q), scale, zero_point, qmin, qmax, torch_dtype).numpy()
    assert np.array_equal(got_f.view(np.int32), want_f.view(np.int32))


def test_halves_round_to_even():
    x = np.array([0.125, 0.375, 0.625, 0.875, -0.125, -0.375, -0.625, -0.875], np.float32)
    got = ops.quantize_per_tensor(x, 0.25, 0, -128, 127, np.int8)
    assert got.tolist() == [0, 2, 2, 4, 0, -2, -2, -4]


def test_nan_is_zero_point_and_infinities_saturate():
    x = np.array([np.nan, np.inf, -np.inf, 1e38, -1e38], np.float32)
    got = ops.quantize_per_tensor(x, 0.1, 5, -100, 100, np.int8)
    assert got.tolist() == [5, 100, -100, 100, -100]
    got = ops.quantize_per_tensor(x[:1], 0.1, 5, 10, 100, np.int8)  # NaN clamps like 0.0
    assert got.tolist() == [10]


@pytest.mark.parametrize("dtype", [np.int8, np.dtype("int8"), "int8", np.int16, np.dtype("int16"),
                                   "int16"])
def test_dtype_spellings(dtype):
    x = np.linspace(-3, 3, 25, dtype=np.float32)
    got = ops.quantize_per_tensor(x, 0.05, 1, -128, 127, dtype)
    assert got.dtype == np.dtype(dtype)
    assert np.array_equal(got, quantize_per_tensor(x, 0.05, 1, -128, 127, np.dtype(dtype)))
    back = ops.dequantize_per_tensor(got, 0.05, 1, -128, 127, dtype)
    assert back.dtype == np.float32
    assert np.array_equal(back, dequantize_per_tensor(got, 0.05, 1))


def test_torch_dtypes_accepted():
    torch = pytest.importorskip("torch")
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    assert ops.quantize_per_tensor(x, 0.05, 1, -128, 127, torch.int8).dtype == np.int8
    assert ops.quantize_per_tensor(x, 0.05, 1, -128, 127, torch.int16).dtype == np.int16


def test_randomized_round_trip_and_dequantize():
    rng = np.random.default_rng(9)
    for _ in range(150):
        dtype = np.int8 if rng.random() < 0.5 else np.int16
        info = np.iinfo(dtype)
        qmin = int(rng.integers(info.min, info.max + 1))
        qmax = int(rng.integers(qmin, info.max + 1))
        zero_point = int(rng.integers(info.min, info.max + 1))
        scale = float(np.float32(2.0 ** rng.uniform(-12, 6)))
        x = inputs(rng, (int(rng.integers(1, 300)),), scale, zero_point, qmin, qmax)
        got = ops.quantize_per_tensor(x, scale, zero_point, qmin, qmax, dtype)
        assert np.array_equal(got, quantize_per_tensor(x, scale, zero_point, qmin, qmax, dtype))
        q = np.arange(qmin, qmax + 1).astype(dtype)
        deq = ops.dequantize_per_tensor(q, scale, zero_point, qmin, qmax, dtype)
        assert np.array_equal(deq, dequantize_per_tensor(q, scale, zero_point))
        assert np.array_equal(ops.quantize_per_tensor(deq, scale, zero_point, qmin, qmax, dtype), q)


def test_non_contiguous_input():
    x = np.linspace(-2, 2, 40, dtype=np.float32).reshape(5, 8)[:, ::3]
    got = ops.quantize_per_tensor(x, 0.01, -3, -128, 127, np.int8)
    assert np.array_equal(got, quantize_per_tensor(x, 0.01, -3, -128, 127, np.int8))


X = np.zeros(4, np.float32)


@pytest.mark.parametrize("args,match", [
    ((0.0, 0, -128, 127, np.int8), "scale = 0.0 must be finite and > 0"),
    ((-0.5, 0, -128, 127, np.int8), "scale = -0.5 must be finite and > 0"),
    ((float("nan"), 0, -128, 127, np.int8), "scale = nan must be finite and > 0"),
    ((float("inf"), 0, -128, 127, np.int8), "scale = inf must be finite and > 0"),
    ((1e-50, 0, -128, 127, np.int8), "scale = 1e-50 is not a finite positive float32"),
    ((1e50, 0, -128, 127, np.int8), "scale = 1e\\+50 is not a finite positive float32"),
    ((0.1, 128, -128, 127, np.int8), r"zero_point = 128 must be in \[-128, 127\]"),
    ((0.1, -32769, -32768, 32767, np.int16), r"zero_point = -32769 must be in \[-32768, 32767\]"),
    ((0.1, 0, -129, 127, np.int8), "quant_min = -129"),
    ((0.1, 0, -128, 128, np.int8), "quant_max = 128"),
    ((0.1, 0, 5, 4, np.int8), "quant_min = 5 must be <= quant_max"),
    ((0.1, 0, -128, 127, np.float32), "dtype = float32 must be int8 or int16"),
    ((0.1, 0, -128, 127, "int4"), "dtype = 'int4' must be int8 or int16"),
    ((0.1, 0, -128, 127, None), "dtype = None must be int8 or int16"),
    ((0.1, 0, -128, 127, np.uint8), "dtype = uint8 must be int8 or int16"),
])
def test_bad_params_raise_value_error(args, match):
    with pytest.raises(ValueError, match=match):
        ops.quantize_per_tensor(X, *args)
    with pytest.raises(ValueError, match=match):
        q = np.zeros(4, args[-1] if args[-1] in (np.int8, np.int16) else np.int8)
        ops.dequantize_per_tensor(q, *args)


def test_bad_arrays_raise_value_error():
    with pytest.raises(ValueError, match="input dtype float64 must be float32"):
        ops.quantize_per_tensor(X.astype(np.float64), 0.1, 0, -128, 127, np.int8)
    with pytest.raises(ValueError, match="input must be a numpy array, got list"):
        ops.quantize_per_tensor([0.5], 0.1, 0, -128, 127, np.int8)
    with pytest.raises(ValueError, match="dtype = int16 must match input dtype int8"):
        ops.dequantize_per_tensor(np.zeros(3, np.int8), 0.1, 0, -128, 127, np.int16)
    with pytest.raises(ValueError, match="input dtype float32 must be int8 or int16"):
        ops.dequantize_per_tensor(X, 0.1, 0, -128, 127, np.int8)
    with pytest.raises(ValueError, match="input must be a numpy array"):
        ops.dequantize_per_tensor([1, 2], 0.1, 0, -128, 127, np.int8)


def test_input_copy_that_cannot_be_allocated_is_a_memory_error():
    # A broadcast view: the C-contiguous copy the kernel needs would take 2^62 bytes.
    x = np.broadcast_to(np.float32(1.0), (1 << 30, 1 << 30))
    with pytest.raises(MemoryError, match=r"^quantize_per_tensor: input \(shape \(1073741824, 1073741824\)\): "
                                          r"cannot make a C-contiguous copy: out of memory$"):
        ops.quantize_per_tensor(x, 0.5, 0, -128, 127, np.int8)
