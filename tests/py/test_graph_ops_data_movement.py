"""Data-movement graph ops (permute, squeeze, unsqueeze, cat, slice, select, split, pads,
upsample) against torch, on float32 and on int8 with per-tensor qparams passing through."""

import numpy as np
import pytest
import torch

import cortexm

aten = torch.ops.aten
Q = {"scales": [0.05], "zero_points": [-3]}
QC = {"scales": [0.1, 0.2], "zero_points": [0, 1], "axis": 0}


def make(rng, shape, dtype):
    if dtype == "int8":
        return np.asarray(rng.integers(-128, 128, size=shape), dtype=np.int8)
    return np.asarray(rng.standard_normal(shape), dtype=np.float32)


def graph_input(g, name, a, qparams=None):
    """Adds `a` as an input; 0-d arrays enter as [1] and are viewed back to [] (numpy -> cortexm
    conversion makes 0-d arrays 1-d). Returns (value, array to feed)."""
    if a.ndim == 0:
        v = g.add_input(name, [1], str(a.dtype), qparams=qparams)
        return g.call("aten.view_copy.default", [v], {"size": []}), a.reshape(1)
    return g.add_input(name, list(a.shape), str(a.dtype), qparams=qparams), a


def run(op, arrays, attrs, qparams=None, name="n"):
    """One node over `arrays`; returns (outputs as a tuple, output Values as a tuple)."""
    g = cortexm.Graph()
    values, feeds = [], []
    for i, a in enumerate(arrays):
        q = qparams[i] if isinstance(qparams, list) else qparams
        v, f = graph_input(g, f"x{i}", np.asarray(a), q if np.asarray(a).dtype == np.int8 else None)
        values.append(v)
        feeds.append(f)
    out = g.call(op, values, attrs, name=name)
    outs = out if isinstance(out, tuple) else (out,)
    g.outputs = list(outs)
    got = g.run(*feeds)
    return (got if isinstance(got, tuple) else (got,)), outs


def check(op, arrays, attrs, torch_fn, qparams=Q, expect_q="same"):
    """Runs op and compares every output to torch_fn(*tensors) bit for bit, dtype and shape;
    checks the int8 outputs' qparams (expect_q: "same" as qparams, or None)."""
    got, values = run(op, arrays, attrs, qparams)
    want = torch_fn(*[torch.from_numpy(np.asarray(a)) for a in arrays])
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want)
    for g_, w, v in zip(got, want, values):
        w = w.numpy()
        assert g_.dtype == w.dtype and g_.shape == w.shape, (g_.shape, w.shape)
        assert tuple(v.shape) == w.shape
        np.testing.assert_array_equal(g_, w)
        if g_.dtype == np.int8:
            q = v.qparams
            if expect_q == "same":
                assert q["scales"] == qparams["scales"]
                assert q["zero_points"] == qparams["zero_points"]
            else:
                assert q is None
        else:
            assert v.qparams is None


DTYPES = ["float32", "int8"]


def bad(op, shape, attrs, pattern, dtype="float32", name="bad"):
    """Building the node must raise ValueError naming the node, the op and `pattern`."""
    g = cortexm.Graph()
    ins = shape if isinstance(shape, list) else [shape]
    values = [g.add_input(f"x{i}", list(s), dtype) for i, s in enumerate(ins)]
    op_re = op.replace(".", "[.]")
    with pytest.raises(ValueError, match=rf"node '{name}' \({op_re}\): .*{pattern}"):
        g.call(op, values, attrs, name=name)


# permute_copy

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dims", [
    ((), []), ((7,), [0]), ((7,), [-1]), ((3, 5), [1, 0]), ((2, 3, 4), [2, 0, 1]),
    ((2, 3, 4), [-1, -3, -2]), ((1, 3, 5, 7), [0, 2, 3, 1]), ((1, 5, 7, 3), [0, 3, 1, 2]),
    ((2, 1, 3, 1, 4), [4, 3, 2, 1, 0]), ((2, 3, 4, 5), [0, 1, 2, 3]), ((0, 3, 2), [2, 1, 0]),
])
def test_permute(dtype, shape, dims):
    a = make(np.random.default_rng(len(shape)), shape, dtype)
    check("aten.permute_copy.default", [a], {"dims": dims},
          lambda t: aten.permute_copy.default(t, dims))


def test_permute_all_dtypes():
    a = np.arange(24).reshape(2, 3, 4)
    for dt in [np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_]:
        x = (a % 2 == 0) if dt == np.bool_ else a.astype(dt)
        got, _ = run("aten.permute_copy.default", [x], {"dims": [1, 2, 0]})
        np.testing.assert_array_equal(got[0], x.transpose(1, 2, 0))
        assert got[0].dtype == x.dtype


def test_permute_drops_per_channel_qparams():
    a = make(np.random.default_rng(0), (2, 3), "int8")
    check("aten.permute_copy.default", [a], {"dims": [1, 0]},
          lambda t: aten.permute_copy.default(t, [1, 0]), qparams=QC, expect_q=None)


def test_permute_errors():
    op = "aten.permute_copy.default"
    bad(op, (2, 3), {"dims": [0]}, r"'dims' = \[0\] has 1 entries, the input has rank 2")
    bad(op, (2, 3), {"dims": [0, 0]}, r"'dims' = \[0, 0\] repeats dim 0")
    bad(op, (2, 3), {"dims": [1, -2, 0]}, r"'dims'")
    bad(op, (2, 3), {"dims": [0, 2]}, r"'dims' = 2 is out of range for rank 2")
    bad(op, (2, 3), {"dims": [0, -1.5]}, r"'dims'")


# squeeze_copy.dims / unsqueeze_copy

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dim", [
    ((2, 1, 3), [1]), ((2, 1, 3), [-2]), ((2, 1, 3), [0]), ((2, 1, 3), []), ((1, 1, 1), [0, 2]),
    ((1, 4, 1, 1), [-1, 0, 1]), ((1,), [0]), ((), [0]), ((), [-1]), ((3, 1, 0), [1, 2]),
])
def test_squeeze(dtype, shape, dim):
    a = make(np.random.default_rng(1), shape, dtype)
    check("aten.squeeze_copy.dims", [a], {"dim": dim},
          lambda t: aten.squeeze_copy.dims(t, dim))


def test_squeeze_errors():
    op = "aten.squeeze_copy.dims"
    bad(op, (2, 1), {"dim": [1, -1]}, r"'dim' = \[1, -1\] repeats dim 1")
    bad(op, (2, 1), {"dim": [2]}, r"'dim' = 2 is out of range for rank 2")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_unsqueeze_every_dim(dtype, shape):
    a = make(np.random.default_rng(2), shape, dtype)
    r = len(shape)
    for dim in range(-r - 1, r + 1):
        check("aten.unsqueeze_copy.default", [a], {"dim": dim},
              lambda t: aten.unsqueeze_copy.default(t, dim))


def test_unsqueeze_errors():
    op = "aten.unsqueeze_copy.default"
    bad(op, (2, 3), {"dim": 3}, r"'dim' = 3 is out of range for rank 3")
    bad(op, (2, 3), {"dim": -4}, r"'dim' = -4 is out of range")
    bad(op, (2, 3), {}, r"missing attribute 'dim'")


# cat

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes,dim", [
    ([(3,)], 0), ([(3,), (5,)], 0), ([(2, 3), (4, 3), (1, 3)], 0), ([(2, 3), (2, 1), (2, 7)], 1),
    ([(2, 3), (2, 1)], -1), ([(2, 3, 4), (2, 0, 4), (2, 5, 4)], 1), ([(1, 2, 3, 4)] * 4, -3),
    ([(2, 3, 4), (2, 3, 1)], 2), ([(0, 3), (0, 3)], 0), ([(2, 3), (2, 3)], -2),
])
def test_cat(dtype, shapes, dim):
    rng = np.random.default_rng(3)
    arrays = [make(rng, s, dtype) for s in shapes]
    check("aten.cat.default", arrays, {"dim": dim},
          lambda *ts: aten.cat.default(list(ts), dim))


def test_cat_default_dim_is_zero():
    rng = np.random.default_rng(4)
    a, b = make(rng, (2, 3), "float32"), make(rng, (1, 3), "float32")
    got, _ = run("aten.cat.default", [a, b], {})
    np.testing.assert_array_equal(got[0], np.concatenate([a, b]))


def test_cat_qparams_pass_only_when_shared():
    rng = np.random.default_rng(5)
    a, b = make(rng, (2, 3), "int8"), make(rng, (2, 4), "int8")
    fn = lambda x, y: aten.cat.default([x, y], 1)  # noqa: E731
    check("aten.cat.default", [a, b], {"dim": 1}, fn, qparams=Q)
    other = {"scales": [0.05], "zero_points": [4]}
    got, values = run("aten.cat.default", [a, b], {"dim": 1}, qparams=[Q, other])
    np.testing.assert_array_equal(got[0], np.concatenate([a, b], 1))
    assert values[0].qparams is None
    got, values = run("aten.cat.default", [a, b], {"dim": 1}, qparams=[Q, None])
    assert values[0].qparams is None


def test_cat_errors():
    op = "aten.cat.default"
    bad(op, [(2, 3), (3, 3)], {"dim": 1}, r"input 1 \[3, 3\] does not match input 0 \[2, 3\] "
        r"except in dim 1")
    bad(op, [(2, 3), (2, 3, 1)], {"dim": 0}, r"input 1 \[2, 3, 1\] does not match")
    bad(op, [(2, 3), (2, 3)], {"dim": 2}, r"'dim' = 2 is out of range for rank 2")
    bad(op, [()], {"dim": 0}, r"cat needs rank >= 1")
    g = cortexm.Graph()
    a, b = g.add_input("a", [2, 3]), g.add_input("b", [2, 3], "int8")
    with pytest.raises(ValueError, match=r"node 'bad' .*input 1 is int8\[2, 3\].*one dtype"):
        g.call(op, [a, b], {"dim": 0}, name="bad")
    with pytest.raises(ValueError, match=r"got 0 inputs"):
        g.call(op, [], {"dim": 0}, name="bad")


# slice_copy.Tensor

SLICES = [(None, None, 1), (1, None, 1), (None, 3, 1), (2, 5, 1), (-3, None, 1), (None, -2, 1),
          (-100, 100, 1), (5, 2, 1), (7, 9, 1), (0, 7, 2), (1, 7, 3), (-6, -1, 4), (0, 7, 7),
          (0, 7, 100), (-1, None, 2), (3, 3, 1), (100, None, 1), (None, -100, 1),
          (-9223372036854775807, 9223372036854775807, 2)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("start,end,step", SLICES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_slice(dtype, start, end, step, dim):
    a = make(np.random.default_rng(6), (7, 7, 3) if dim != 0 else (7, 2, 5), dtype)
    check("aten.slice_copy.Tensor", [a], {"dim": dim, "start": start, "end": end, "step": step},
          lambda t: aten.slice_copy.Tensor(t, dim, start, end, step))


def test_slice_defaults():
    a = make(np.random.default_rng(7), (4, 3), "float32")
    got, _ = run("aten.slice_copy.Tensor", [a], {})
    np.testing.assert_array_equal(got[0], a)
    got, _ = run("aten.slice_copy.Tensor", [a], {"start": 1, "step": 2})
    np.testing.assert_array_equal(got[0], a[1::2])


def test_slice_errors():
    op = "aten.slice_copy.Tensor"
    bad(op, (4, 3), {"step": 0}, r"'step' = 0 must be >= 1")
    bad(op, (4, 3), {"step": -1}, r"'step' = -1 must be >= 1")
    bad(op, (4, 3), {"dim": 2}, r"'dim' = 2 is out of range for rank 2")
    bad(op, (4, 3), {"step": None}, r"'step' must not be None")
    bad(op, (), {}, r"rank-0")


# select_copy.int

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dim,index", [
    ((5,), 0, 0), ((5,), 0, -1), ((4, 5), 0, 3), ((4, 5), 1, -5), ((4, 5), -1, 2),
    ((2, 3, 4), 1, -2), ((2, 3, 4), -3, 1), ((2, 3, 4), 2, 3), ((1, 3, 0), 1, 1),
])
def test_select(dtype, shape, dim, index):
    a = make(np.random.default_rng(8), shape, dtype)
    check("aten.select_copy.int", [a], {"dim": dim, "index": index},
          lambda t: aten.select_copy.int(t, dim, index))


def test_select_errors():
    op = "aten.select_copy.int"
    bad(op, (4, 3), {"dim": 1, "index": 3}, r"'index' = 3 is out of range for dim 1 of size 3")
    bad(op, (4, 3), {"dim": 0, "index": -5}, r"'index' = -5 is out of range for dim 0 of size 4")
    bad(op, (4, 3), {"dim": 2, "index": 0}, r"'dim' = 2 is out of range")
    bad(op, (4, 3), {"dim": 0}, r"missing attribute 'index'")
    bad(op, (), {"dim": 0, "index": 0}, r"rank-0")


# split_with_sizes_copy

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,sizes,dim", [
    ((6,), [6], 0), ((6,), [1, 5], 0), ((6, 4), [2, 0, 4], 0), ((3, 7), [3, 3, 1], 1),
    ((3, 7), [4, 3], -1), ((2, 5, 3), [1, 1, 1, 2], 1), ((2, 5, 3), [1, 2], 2),
    ((4, 2), [2, 2], -2),
])
def test_split_with_sizes(dtype, shape, sizes, dim):
    a = make(np.random.default_rng(9), shape, dtype)
    check("aten.split_with_sizes_copy.default", [a], {"split_sizes": sizes, "dim": dim},
          lambda t: aten.split_with_sizes_copy.default(t, sizes, dim))


def test_split_default_dim_and_output_count():
    a = make(np.random.default_rng(10), (5, 2), "float32")
    got, values = run("aten.split_with_sizes_copy.default", [a], {"split_sizes": [2, 3]})
    assert len(values) == 2
    np.testing.assert_array_equal(got[0], a[:2])
    np.testing.assert_array_equal(got[1], a[2:])


def test_split_errors():
    op = "aten.split_with_sizes_copy.default"
    bad(op, (6, 2), {"split_sizes": [2, 3]},
        r"'split_sizes' = \[2, 3\] sums to 5, dim 0 has size 6")
    bad(op, (6, 2), {"split_sizes": [7, -1]}, r"'split_sizes' = \[7, -1\] has a negative size")
    bad(op, (6, 2), {"split_sizes": []}, r"'split_sizes' is empty")
    bad(op, (6, 2), {"split_sizes": [6], "dim": -3}, r"'dim' = -3 is out of range")
    bad(op, (), {"split_sizes": [1]}, r"rank-0")


# constant_pad_nd

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,pad", [
    ((5,), [1, 2]), ((5,), [0, 0]), ((3, 4), [1, 1]), ((3, 4), [0, 2, 3, 0]),
    ((2, 3, 4), [1, 1, 1, 1]), ((2, 3, 4), [1, 2, 0, 1, 2, 0]), ((1, 2, 5, 5), [-1, -2, 1, 0]),
    ((1, 2, 5, 5), [-2, 3, -1, -1]),
    ((3, 4), [-4, 0]), ((3, 4), [-2, -2, 0, 1]), ((3, 4), []), ((), []), ((0, 3), [1, 1, 1, 1]),
    ((2, 3), [5, -3]), ((2, 3), [-3, 5]),
])
def test_constant_pad(dtype, shape, pad):
    a = make(np.random.default_rng(11), shape, dtype)
    value = 2.5 if dtype == "float32" else -7.0
    check("aten.constant_pad_nd.default", [a], {"pad": pad, "value": value},
          lambda t: aten.constant_pad_nd.default(t, pad, value))


def test_constant_pad_values():
    a = make(np.random.default_rng(12), (2, 3), "int8")
    for value in [0.0, 127.0, -128.0, 0.5, -1.7]:
        check("aten.constant_pad_nd.default", [a], {"pad": [1, 1], "value": value},
              lambda t: aten.constant_pad_nd.default(t, [1, 1], value))
    f = make(np.random.default_rng(12), (2, 3), "float32")
    got, _ = run("aten.constant_pad_nd.default", [f], {"pad": [0, 1]})
    assert np.all(got[0][:, 3] == 0)
    got, _ = run("aten.constant_pad_nd.default", [f], {"pad": [0, 1], "value": float("-inf")})
    assert np.all(got[0][:, 3] == -np.inf)
    b = np.array([[True, False]])
    got, _ = run("aten.constant_pad_nd.default", [b], {"pad": [1, 0], "value": 3.0})
    np.testing.assert_array_equal(got[0], [[True, True, False]])


def test_constant_pad_errors():
    op = "aten.constant_pad_nd.default"
    bad(op, (3, 4), {"pad": [1]}, r"'pad' = \[1\] must have an even length")
    bad(op, (3, 4), {"pad": [1, 1, 1, 1, 1, 1]}, r"'pad' = .* pads 3 dims, the input has rank 2")
    bad(op, (3, 4), {"pad": [-3, -2]},
        r"'pad' = \[-3, -2\] crops dim 1 \(size 4\) to a negative size")
    bad(op, (3, 4), {"pad": [6, -5]}, r"'pad' = \[6, -5\] crops dim 1")
    bad(op, (3, 4), {"pad": [0, 0, -4, 9]}, r"'pad' = \[0, 0, -4, 9\] crops dim 0 \(size 3\)")
    bad(op, (3, 4), {"pad": [1, 1], "value": 200.0}, r"'value' = 200.* does not fit", dtype="int8")
    bad(op, (3, 4), {"pad": [1, 1], "value": float("nan")}, r"'value' = .* does not fit",
        dtype="int8")
    # 2^63 passes a <= INT64_MAX test (that bound rounds to 2^63) and is UB to cast to int64
    bad(op, (3, 4), {"pad": [1, 1], "value": 2.0 ** 63}, r"'value' = 9223372036854775808.* does not fit",
        dtype="int64")
    bad(op, (3, 4), {"pad": [1, 1], "value": float("inf")}, r"'value' = inf does not fit", dtype="int32")


# reflection_pad1d

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,padding", [
    ((2, 5), [1, 2]), ((2, 5), [4, 4]), ((2, 5), [0, 0]), ((3, 2, 7), [3, 0]), ((3, 2, 7), [0, 6]),
    ((1, 1, 2), [1, 1]), ((2, 5), [-1, 2]), ((2, 5), [2, -1]), ((2, 5), [-2, -2]),
    ((2, 5), [-4, 0]),
    ((2, 5), [-3, 3]), ((0, 2, 5), [1, 1]),
])
def test_reflection_pad1d(dtype, shape, padding):
    a = make(np.random.default_rng(13), shape, dtype)
    ref = lambda t: aten.reflection_pad1d.default(t, padding)  # noqa: E731
    if dtype == "int8":  # compare on float32 copies (exact for int8 values)
        want = aten.reflection_pad1d.default(torch.from_numpy(a.astype(np.float32)), padding)
        ref = lambda t: want.to(torch.int8)  # noqa: E731
    check("aten.reflection_pad1d.default", [a], {"padding": padding}, ref)


def test_reflection_pad1d_errors():
    op = "aten.reflection_pad1d.default"
    bad(op, (2, 5), {"padding": [5, 0]},
        r"'padding' = \[5, 0\] must be less than the input width 5")
    bad(op, (2, 5), {"padding": [0, 7]}, r"'padding' = \[0, 7\] must be less")
    bad(op, (2, 5), {"padding": [1]}, r"'padding' = \[1\] must be \(left, right\)")
    bad(op, (2, 5), {"padding": [-3, -2]}, r"'padding' = \[-3, -2\] leaves width 0")
    bad(op, (5,), {"padding": [1, 1]}, r"expected rank 2 or 3")
    bad(op, (1, 2, 3, 4), {"padding": [1, 1]}, r"expected rank 2 or 3")
    bad(op, (2, 0), {"padding": [0, 0]}, r"empty last dim")


# upsample_nearest2d

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,size", [
    ((1, 1, 2, 3), [4, 6]), ((2, 3, 4, 5), [8, 10]), ((1, 2, 3, 3), [9, 9]),
    ((1, 2, 5, 7), [13, 11]), ((1, 1, 7, 13), [3, 5]), ((1, 3, 4, 4), [4, 4]),
    ((1, 1, 3, 5), [10, 3]), ((2, 1, 1, 1), [3, 2]),
    ((1, 1, 6, 6), [1, 1]), ((1, 2, 10, 3), [7, 29]), ((0, 2, 3, 3), [6, 6]),
])
def test_upsample_nearest2d(dtype, shape, size):
    a = make(np.random.default_rng(14), shape, dtype)
    want = aten.upsample_nearest2d.default(torch.from_numpy(a.astype(np.float32)), size)
    check("aten.upsample_nearest2d.default", [a], {"output_size": size},
          lambda t: want.to(t.dtype))


def test_upsample_nearest2d_float_index_rounding_matches_torch():
    # Ratios in/out that are inexact in float32: torch floors o * float(in / out).
    rng = np.random.default_rng(15)
    for h in range(1, 12):
        for oh in range(1, 40, 3):
            a = make(rng, (1, 1, h, 3), "float32")
            want = aten.upsample_nearest2d.default(torch.from_numpy(a), [oh, 7])
            got, _ = run("aten.upsample_nearest2d.default", [a], {"output_size": [oh, 7]})
            np.testing.assert_array_equal(got[0], want.numpy())


def test_upsample_nearest2d_errors():
    op = "aten.upsample_nearest2d.default"
    bad(op, (1, 1, 2, 2), {"output_size": [4]}, r"'output_size' = \[4\] must be \(OH, OW\)")
    bad(op, (1, 1, 2, 2), {"output_size": [0, 4]}, r"'output_size' = \[0, 4\] must be positive")
    bad(op, (1, 2, 2), {"output_size": [4, 4]}, r"expected rank 4")
    bad(op, (1, 1, 0, 2), {"output_size": [4, 4]}, r"empty spatial dim")
