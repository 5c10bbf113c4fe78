"""Per-channel quantize / dequantize against torch's quantized_decomposed ops, and
dim_order_ops._clone_dim_order."""

import numpy as np
import pytest
import torch

import cortexm

try:
    import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers quantized_decomposed)
    qd = torch.ops.quantized_decomposed
    qd.quantize_per_channel.default
except (ImportError, AttributeError, RuntimeError):
    qd = None

QMIN = {"int8": -128, "int16": -32768, "int32": -(1 << 31)}
QMAX = {"int8": 127, "int16": 32767, "int32": (1 << 31) - 1}
TORCH_DTYPE = {"int8": torch.int8, "int16": torch.int16, "int32": torch.int32}


def build(op, shape, dtype, attrs):
    g = cortexm.Graph()
    x = g.add_input("x", list(shape), dtype)
    out = g.call(op, [x], attrs, name="n")
    g.outputs = [out]
    return g, out


def qattrs(shape, axis, dtype, rng, lo=None, hi=None):
    c = shape[axis]
    # float32-representable scales, as torch holds them in a float32 tensor.
    scales = [float(np.float32(s)) for s in rng.uniform(1e-3, 0.2, size=c)]
    span = min(QMAX[dtype], 1000)
    zps = [int(z) for z in rng.integers(-span // 2, span // 2 + 1, size=c)]
    return dict(scales=scales, zero_points=zps, axis=axis,
                quant_min=QMIN[dtype] if lo is None else lo,
                quant_max=QMAX[dtype] if hi is None else hi, dtype=dtype)


def ref_quantize(x, a):
    if qd is not None:
        return qd.quantize_per_channel.default(
            torch.from_numpy(x), torch.tensor(a["scales"], dtype=torch.float32),
            torch.tensor(a["zero_points"], dtype=torch.int64), a["axis"], a["quant_min"],
            a["quant_max"], TORCH_DTYPE[a["dtype"]]).numpy()
    shape = [1] * x.ndim
    shape[a["axis"]] = -1
    inv = (np.float32(1.0) / np.array(a["scales"], np.float32)).reshape(shape)
    zp = np.array(a["zero_points"], np.float32).reshape(shape)
    return np.clip(np.rint(x * inv) + zp, a["quant_min"], a["quant_max"]).astype(a["dtype"])


def ref_dequantize(q, a):
    if qd is not None:
        return qd.dequantize_per_channel.default(
            torch.from_numpy(q), torch.tensor(a["scales"], dtype=torch.float32),
            torch.tensor(a["zero_points"], dtype=torch.int64), a["axis"], a["quant_min"],
            a["quant_max"], TORCH_DTYPE[a["dtype"]]).numpy()
    shape = [1] * q.ndim
    shape[a["axis"]] = -1
    zp = np.array(a["zero_points"], np.int64).reshape(shape)
    scales = np.array(a["scales"], np.float32).reshape(shape)
    return (q.astype(np.int64) - zp).astype(np.float32) * scales


@pytest.mark.skipif(qd is None, reason="torch.ops.quantized_decomposed is not available")
def test_numpy_fallback_agrees_with_torch():
    global qd
    rng = np.random.default_rng(9)
    a = qattrs((3, 4, 5), 1, "int8", rng)
    x = (rng.standard_normal((3, 4, 5)) * 30).astype(np.float32)
    q = rng.integers(-128, 128, size=(3, 4, 5)).astype(np.int8)
    with_torch = ref_quantize(x, a), ref_dequantize(q, a)
    saved, qd = qd, None
    try:
        with_numpy = ref_quantize(x, a), ref_dequantize(q, a)
    finally:
        qd = saved
    assert np.array_equal(with_torch[0], with_numpy[0])
    np.testing.assert_array_equal(with_torch[1], with_numpy[1])


CASES = [((5,), 0), ((4, 3), 0), ((4, 3), 1), ((4, 3), -1), ((2, 3, 5, 7), 1), ((2, 3, 5, 7), 0),
         ((2, 3, 5, 7), 3), ((2, 3, 5, 7), -2), ((6, 1, 1, 3), 0), ((1, 9, 1), 1)]


@pytest.mark.parametrize("dtype", ["int8", "int16"])
@pytest.mark.parametrize("shape,axis", CASES, ids=str)
def test_quantize_per_channel_bit_exact(shape, axis, dtype):
    rng = np.random.default_rng(len(shape) * 10 + axis)
    a = qattrs(shape, axis, dtype, rng)
    x = (rng.standard_normal(shape) * (40 if dtype == "int8" else 3000)).astype(np.float32)
    # Exact halfway points round to even.
    flat = x.reshape(-1)
    k = min(4, flat.size)
    flat[:k] = 0.5 * np.float32(a["scales"][0]) * np.array([1, 3, -1, -5][:k])
    g, out = build("quantized_decomposed.quantize_per_channel.default", shape, "float32", a)
    assert out.dtype == dtype and out.shape == shape
    q = out.qparams
    assert q["axis"] == axis % len(shape) and q["zero_points"] == a["zero_points"]
    assert q["scales"] == a["scales"]
    assert (q["quant_min"], q["quant_max"]) == (QMIN[dtype], QMAX[dtype])
    got = g.run(x)
    want = ref_quantize(x, a)
    assert got.dtype == np.dtype(dtype) and np.array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32"])
@pytest.mark.parametrize("shape,axis", CASES, ids=str)
def test_dequantize_per_channel_matches(shape, axis, dtype):
    rng = np.random.default_rng(len(shape) * 7 + axis)
    a = qattrs(shape, axis, dtype, rng)
    hi = min(QMAX[dtype], 1 << 20)
    q = rng.integers(-hi - 1, hi + 1, size=shape).astype(dtype)
    g, out = build("quantized_decomposed.dequantize_per_channel.default", shape, dtype, a)
    assert out.dtype == "float32" and out.shape == shape and out.qparams is None
    got = g.run(q)
    want = ref_dequantize(q, a)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


def test_restricted_range_and_saturation():
    rng = np.random.default_rng(3)
    shape = (3, 4, 5)
    a = qattrs(shape, 1, "int8", rng, lo=-100, hi=90)
    x = (rng.standard_normal(shape) * 100).astype(np.float32)
    x[0, 0, :3] = [np.inf, -np.inf, 1e30]
    g, _ = build("quantized_decomposed.quantize_per_channel.default", shape, "float32", a)
    got = g.run(x)
    assert got.min() >= -100 and got.max() <= 90
    assert np.array_equal(got, ref_quantize(x, a))


def test_round_trip_through_a_graph():
    rng = np.random.default_rng(5)
    shape = (2, 6, 3, 3)
    a = qattrs(shape, 1, "int8", rng)
    g = cortexm.Graph()
    x = g.add_input("x", list(shape))
    q = g.call("quantized_decomposed.quantize_per_channel.default", [x], a)
    g.outputs = [g.call("quantized_decomposed.dequantize_per_channel.default", [q], a)]
    data = (rng.standard_normal(shape) * 3).astype(np.float32)
    got = g.run(data)
    assert np.array_equal(got, ref_dequantize(ref_quantize(data, a), a))


def test_keeps_input_dim_order():
    g = cortexm.Graph()
    x = g.add_input("x", [1, 3, 4, 4], dim_order=[0, 2, 3, 1])
    a = qattrs((1, 3, 4, 4), 1, "int8", np.random.default_rng(0))
    q = g.call("quantized_decomposed.quantize_per_channel.default", [x], a)
    assert q.dim_order == (0, 2, 3, 1)
    y = g.call("quantized_decomposed.dequantize_per_channel.default", [q], a)
    assert y.dim_order == (0, 2, 3, 1)


def base(dtype="int8", c=3):
    return dict(scales=[0.1] * c, zero_points=[0] * c, axis=1, quant_min=QMIN[dtype],
                quant_max=QMAX[dtype], dtype=dtype)


QOP = "quantized_decomposed.quantize_per_channel.default"
DQOP = "quantized_decomposed.dequantize_per_channel.default"

BAD = [
    (QOP, (2, 3), "float32", {"axis": 2}, "attribute 'axis' = 2 is out of range for rank 2"),
    (QOP, (2, 3), "float32", {"scales": [0.1, 0.2]}, "2 scales but 3 zero points"),
    (QOP, (2, 4), "float32", {}, "3 scales for axis 1 of extent 4"),
    (QOP, (2, 3), "float32", {"scales": [0.1, 0.0, 0.1]},
     r"scales\[1\] = 0\.0+ must be finite and > 0"),
    (QOP, (2, 3), "float32", {"scales": [0.1, 1e-60, 0.1]},
     r"scales\[1\] = .* not a finite float32 > 0"),
    (QOP, (2, 3), "float32", {"zero_points": [0, 200, 0]}, "zero point 200 is outside int8"),
    (QOP, (2, 3), "float32", {"quant_min": 10, "quant_max": 5}, r"quant range \[10, 5\]"),
    (QOP, (2, 3), "float32", {"quant_min": -129}, r"quant range \[-129, 127\] is not within int8"),
    (QOP, (2, 3), "float32", {"dtype": "int32", "quant_min": -5, "quant_max": 5},
     "dtype int32 must be int8 or int16"),
    (QOP, (2, 3), "int8", {}, r"int8\[2, 3\], expected float32"),
    (QOP, (), "float32", {"axis": 0}, "expected rank >= 1"),
    (DQOP, (2, 3), "int8", {"dtype": "int16", "quant_min": -5, "quant_max": 5},
     "dtype attribute int16 does not match"),
    (DQOP, (2, 3), "float32", {}, "expected int8 or int16 or int32"),
    (DQOP, (2, 3), "int8", {"axis": -3}, "attribute 'axis' = -3"),
    (DQOP, (2, 5), "int8", {}, "3 scales for axis 1 of extent 5"),
    (DQOP, (2, 3), "int8", {"scales": [0.1, -1.0, 0.1]},
     r"scales\[1\] = -1\.0+ must be finite and > 0"),
]


@pytest.mark.parametrize("op,shape,dtype,override,match", BAD, ids=lambda v: str(v))
def test_bad_qparams_raise(op, shape, dtype, override, match):
    with pytest.raises(ValueError, match=r"node 'n' \(" + op.replace(".", r"\.") + r"\).*" + match):
        build(op, shape, dtype, {**base(), **override})


# ---- _clone_dim_order

CLONE = "dim_order_ops._clone_dim_order.default"


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "int32", "int64", "uint8", "bool"])
def test_clone_dim_order_keeps_values(dtype):
    rng = np.random.default_rng(0)
    x = rng.integers(-100, 100, size=(2, 3, 4, 5)).astype(dtype)
    g, out = build(CLONE, x.shape, dtype, {"dim_order": [0, 2, 3, 1]})
    assert out.dim_order == (0, 2, 3, 1) and out.dtype == dtype and out.shape == (2, 3, 4, 5)
    got = g.run(x)
    assert got.dtype == x.dtype and np.array_equal(got, x)


def test_clone_dim_order_none_is_contiguous_and_qparams_pass():
    qp = {"scales": [0.05], "zero_points": [-3], "quant_min": -128, "quant_max": 127}
    g = cortexm.Graph()
    x = g.add_input("x", [1, 3, 2, 2], "int8", dim_order=[0, 2, 3, 1], qparams=qp)
    y = g.call(CLONE, [x], {}, name="n")
    assert y.dim_order == (0, 1, 2, 3) and y.qparams == {**qp, "axis": -1}
    z = g.call(CLONE, [y], {"dim_order": None, "non_blocking": True})
    assert z.dim_order == (0, 1, 2, 3)
    g.outputs = [z]
    data = np.arange(12, dtype=np.int8).reshape(1, 3, 2, 2)
    assert np.array_equal(g.run(data), data)
    pc = {"scales": [0.1, 0.2, 0.3], "zero_points": [0, 1, 2], "axis": 1, "quant_min": -128,
          "quant_max": 127}
    w = g.add_input("w", [1, 3, 2, 2], "int8", qparams=pc)
    assert g.call(CLONE, [w], {"dim_order": [0, 2, 3, 1]}).qparams == pc
    assert g.nodes[0].op == CLONE


def test_clone_dim_order_rank_1_and_3():
    g, out = build(CLONE, (4,), "float32", {"dim_order": [0]})
    assert out.dim_order == (0,)
    x = np.arange(4, dtype=np.float32)
    assert np.array_equal(g.run(x), x)
    g, out = build(CLONE, (2, 3, 4), "float32", {"dim_order": [2, 0, 1]})
    assert out.dim_order == (2, 0, 1)
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    assert np.array_equal(g.run(x), x)


@pytest.mark.parametrize("order", [[0, 1, 2], [0, 2, 3, 3], [0, 1, 2, 4], [-1, 0, 1, 2],
                                   [0, 1, 2, 3, 4]])
def test_clone_dim_order_rejects_non_permutations(order):
    with pytest.raises(ValueError, match=r"node 'n' \(dim_order_ops\._clone_dim_order\.default\): "
                                         r"attribute 'dim_order' = .* is not a permutation of "
                                         r"the input's 4 dims"):
        build(CLONE, (1, 2, 3, 4), "float32", {"dim_order": order})
