"""aten.linear / addmm / mm / bmm graph ops against torch."""

import math

import numpy as np
import pytest
import torch

import cortexm

aten = torch.ops.aten


def run(op, arrays, attrs=None, name="n"):
    """One-node graph over `arrays` (None = absent optional input); returns its output."""
    g = cortexm.Graph()
    values, feeds = [], []
    for i, a in enumerate(arrays):
        if a is None:
            values.append(None)
            continue
        a = np.asarray(a)
        if a.ndim == 0:  # numpy -> cortexm conversion makes 0-d arrays 1-d: view back to []
            v = g.add_input(f"x{i}", [1], str(a.dtype))
            values.append(g.call("aten.view_copy.default", [v], {"size": []}))
            feeds.append(a.reshape(1))
            continue
        values.append(g.add_input(f"x{i}", list(a.shape), str(a.dtype)))
        feeds.append(a)
    g.outputs = [g.call(op, values, attrs or {}, name=name)]
    return g.run(*feeds)


def rand(rng, *shape):
    return np.asarray(rng.standard_normal(shape), dtype=np.float32)


def check(got, want, k):
    want = want.numpy()
    assert got.shape == want.shape and got.dtype == np.float32
    # Sums of k float products: torch's blocked order and ours round differently.
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * max(1.0, math.sqrt(k)) * 4)


LINEAR_CASES = [((5,), 3), ((1, 1), 1), ((4, 7), 9), ((2, 3, 17), 33), ((2, 1, 3, 16), 5),
                ((7, 129), 65), ((3, 1000), 24), ((0, 4), 3), ((6, 5), 1)]


@pytest.mark.parametrize("shape,n", LINEAR_CASES)
@pytest.mark.parametrize("with_bias", [False, True])
def test_linear(shape, n, with_bias):
    rng = np.random.default_rng(sum(shape) * 7 + n)
    k = shape[-1]
    x, w, b = rand(rng, *shape), rand(rng, n, k), rand(rng, n)
    got = run("aten.linear.default", [x, w, b if with_bias else None])
    want = aten.linear.default(torch.from_numpy(x), torch.from_numpy(w),
                               torch.from_numpy(b) if with_bias else None)
    check(got, want, k)


def test_linear_weight_as_constant_and_bias_omitted():
    rng = np.random.default_rng(0)
    x, w = rand(rng, 3, 8), rand(rng, 5, 8)
    g = cortexm.Graph()
    y = g.call("aten.linear.default", [g.add_input("x", [3, 8]), g.add_constant("w", w)])
    g.outputs = [y]
    check(g.run(x), aten.linear.default(torch.from_numpy(x), torch.from_numpy(w)), 8)


MM_CASES = [(1, 1, 1), (3, 5, 7), (4, 16, 4), (13, 1, 9), (9, 33, 1), (8, 513, 17), (5, 3, 600),
            (64, 64, 64), (0, 3, 2), (2, 0, 3)]


@pytest.mark.parametrize("m,k,n", MM_CASES)
def test_mm(m, k, n):
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    a, b = rand(rng, m, k), rand(rng, k, n)
    check(run("aten.mm.default", [a, b]), aten.mm.default(torch.from_numpy(a), torch.from_numpy(b)),
          k)


@pytest.mark.parametrize("batch,m,k,n", [(1, 2, 3, 4), (3, 5, 7, 6), (4, 1, 17, 1), (2, 9, 64, 33),
                                         (0, 2, 3, 4)])
def test_bmm(batch, m, k, n):
    rng = np.random.default_rng(batch + m + k + n)
    a, b = rand(rng, batch, m, k), rand(rng, batch, k, n)
    check(run("aten.bmm.default", [a, b]),
          aten.bmm.default(torch.from_numpy(a), torch.from_numpy(b)), k)


ADDMM_SELF = [(), (1,), (6,), (1, 6), (5, 1), (5, 6), (1, 1)]


@pytest.mark.parametrize("self_shape", ADDMM_SELF)
@pytest.mark.parametrize("beta,alpha", [(1.0, 1.0), (0.5, 2.0), (-1.25, 0.3), (0.0, 1.0)])
def test_addmm(self_shape, beta, alpha):
    rng = np.random.default_rng(len(self_shape) * 11 + int(abs(beta) * 8))
    c, a, b = rand(rng, *self_shape), rand(rng, 5, 7), rand(rng, 7, 6)
    got = run("aten.addmm.default", [c, a, b], {"beta": beta, "alpha": alpha})
    want = aten.addmm.default(torch.from_numpy(c), torch.from_numpy(a), torch.from_numpy(b),
                              beta=beta, alpha=alpha)
    check(got, want, 7)


def test_addmm_defaults_and_large():
    rng = np.random.default_rng(3)
    c, a, b = rand(rng, 40), rand(rng, 17, 300), rand(rng, 300, 40)
    want = aten.addmm.default(torch.from_numpy(c), torch.from_numpy(a), torch.from_numpy(b))
    check(run("aten.addmm.default", [c, a, b]), want, 300)


def test_addmm_beta_zero_ignores_nan_self():
    rng = np.random.default_rng(4)
    c = np.full((3, 4), np.nan, np.float32)
    a, b = rand(rng, 3, 2), rand(rng, 2, 4)
    got = run("aten.addmm.default", [c, a, b], {"beta": 0.0})
    assert np.all(np.isfinite(got))
    check(got, aten.addmm.default(torch.from_numpy(c), torch.from_numpy(a), torch.from_numpy(b),
                                  beta=0.0), 2)


def test_products_of_special_values_follow_ieee():
    a = np.array([[np.inf, 1.0], [0.0, np.nan]], np.float32)
    b = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    got = run("aten.mm.default", [a, b])
    want = aten.mm.default(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    np.testing.assert_array_equal(got, want)


def build(op, shapes, attrs=None, dtypes=None, name="bad"):
    g = cortexm.Graph()
    ins = [None if s is None else g.add_input(f"x{i}", list(s), (dtypes or {}).get(i, "float32"))
           for i, s in enumerate(shapes)]
    return g.call(op, ins, attrs or {}, name=name)


@pytest.mark.parametrize("op,shapes,dtypes,pattern", [
    ("aten.linear.default", [(3, 4), (5, 3)], None, r"weight \[5, 3\].*input \[3, 4\]"),
    ("aten.linear.default", [(3, 4), (4,)], None, r"input 1 .*expected rank 2"),
    ("aten.linear.default", [(), (5, 1)], None, r"rank >= 1"),
    ("aten.linear.default", [(3, 4), (5, 4), (4,)], None, r"bias \[4\] must be \[5\]"),
    ("aten.linear.default", [(3, 4), (5, 4)], {0: "int8"}, r"input 0 .*int8.*expected float32"),
    ("aten.mm.default", [(3, 4), (5, 6)], None, r"\[3, 4\].*\[5, 6\].*4 != 5"),
    ("aten.mm.default", [(2, 3, 4), (4, 6)], None, r"input 0 .*expected rank 2"),
    ("aten.bmm.default", [(2, 3, 4), (3, 4, 5)], None, r"different batch sizes"),
    ("aten.bmm.default", [(2, 3, 4), (2, 5, 5)], None, r"4 != 5"),
    ("aten.bmm.default", [(3, 4), (4, 5)], None, r"expected rank 3"),
    ("aten.addmm.default", [(4, 6), (3, 5), (5, 6)], None, r"self \[4, 6\] does not broadcast"),
    ("aten.addmm.default", [(1, 3, 6), (3, 5), (5, 6)], None, r"self \[1, 3, 6\]"),
    ("aten.addmm.default", [(6,), (3, 5), (4, 6)], None, r"mat1 \[3, 5\].*5 != 4"),
    ("aten.addmm.default", [(6,), (3, 5), (5, 6)], {0: "int32"}, r"input 0 .*expected float32"),
])
def test_bad_inputs_raise(op, shapes, dtypes, pattern):
    with pytest.raises(ValueError, match=r"node 'bad' \(" + op.replace(".", r"\.") + r"\).*"
                       + pattern):
        build(op, shapes, dtypes=dtypes)


def test_bad_attribute_kind_raises():
    with pytest.raises(ValueError, match=r"node 'bad'.*'beta'"):
        build("aten.addmm.default", [(6,), (3, 5), (5, 6)], {"beta": "two"})
    with pytest.raises(ValueError, match=r"node 'bad'.*unknown attribute 'gamma'"):
        build("aten.mm.default", [(3, 5), (5, 6)], {"gamma": 1.0})
