"""Reductions and pooling graph ops (mean.dim, adaptive / avg / max pool2d) against torch."""

import itertools

import numpy as np
import pytest
import torch

import cortexm

aten = torch.ops.aten


def build(op, shape, attrs):
    g = cortexm.Graph()
    x = g.add_input("x", list(shape))
    out = g.call(op, [x], attrs, name="n")
    g.outputs = [out]
    return g, out


def run_op(op, x, attrs):
    g, _ = build(op, x.shape, attrs)
    return g.run(x)


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def check(got, want, rtol=1e-5, atol=1e-6):
    want = want.numpy()
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


# ---- mean.dim

MEAN_CASES = [((5,), [0]), ((5,), [-1]), ((3, 7), [1]), ((3, 7), [0, 1]), ((3, 7), []),
              ((2, 3, 5, 7), [2, 3]), ((2, 3, 5, 7), [-1, -2]), ((2, 3, 5, 7), [1]),
              ((2, 3, 5, 7), [0, 2]), ((2, 3, 5, 7), [3, 0, 1]), ((1, 1, 9, 1), [2]),
              ((4, 1, 3), [1])]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape,dims", MEAN_CASES, ids=str)
def test_mean_matches_torch(shape, dims, keepdim):
    x = randn(*shape, seed=len(dims)) + np.float32(0.5)
    check(run_op("aten.mean.dim", x, {"dim": dims, "keepdim": keepdim}),
          aten.mean.dim(torch.from_numpy(x), dims, keepdim))


def test_mean_default_keepdim_and_large_sum():
    # 2^20 values near 1e3: a naive float32 running sum would drift; double stays within 1e-5.
    x = (np.random.default_rng(3).random((1, 1 << 20)) + 1000.0).astype(np.float32)
    got = run_op("aten.mean.dim", x, {"dim": [1]})
    np.testing.assert_allclose(got, x.astype(np.float64).mean(axis=1), rtol=1e-6)


def test_mean_empty_reduction_is_nan():
    x = np.zeros((2, 0, 3), np.float32)
    check(run_op("aten.mean.dim", x, {"dim": [1]}), aten.mean.dim(torch.from_numpy(x), [1]))


def test_mean_scalar_input_infers():
    _, out = build("aten.mean.dim", (), {"dim": [0], "keepdim": True})
    assert out.shape == ()
    _, out = build("aten.mean.dim", (2, 3), {"dim": [], "keepdim": True})
    assert out.shape == (1, 1)


# ---- adaptive_avg_pool2d

ADAPTIVE = [((1, 3, 7, 7), [1, 1]), ((2, 3, 7, 9), [3, 4]), ((1, 2, 10, 10), [3, 3]),
            ((1, 2, 5, 5), [7, 7]), ((3, 5, 6), [4, 5]), ((3, 5, 6), [5, 6]),
            ((1, 1, 13, 3), [5, 2]), ((0, 2, 4, 4), [2, 2]), ((2, 4, 1, 11), [1, 4])]


@pytest.mark.parametrize("shape,size", ADAPTIVE, ids=str)
def test_adaptive_avg_pool2d_matches_torch(shape, size):
    x = randn(*shape, seed=sum(shape))
    check(run_op("aten.adaptive_avg_pool2d.default", x, {"output_size": size}),
          aten.adaptive_avg_pool2d.default(torch.from_numpy(x), size))


# ---- avg_pool2d / max_pool2d

def torch_avg(x, a):
    return aten.avg_pool2d.default(torch.from_numpy(x), a["kernel_size"], a["stride"], a["padding"],
                                   a["ceil_mode"], a["count_include_pad"], a["divisor_override"])


def torch_max(x, a):
    return aten.max_pool2d.default(torch.from_numpy(x), a["kernel_size"], a["stride"], a["padding"],
                                   a["dilation"], a["ceil_mode"])


AVG = [
    dict(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0]),
    dict(kernel_size=[3], stride=[], padding=[1]),
    dict(kernel_size=[3, 3], stride=[2], padding=[1], ceil_mode=True),
    dict(kernel_size=[3, 3], stride=[2], padding=[1], ceil_mode=True, count_include_pad=False),
    dict(kernel_size=[2, 3], stride=[3, 2], padding=[1, 0], ceil_mode=True),
    dict(kernel_size=[3, 2], stride=[2, 1], padding=[1, 1], count_include_pad=False),
    dict(kernel_size=[3, 3], stride=[1], padding=[1], divisor_override=5),
    dict(kernel_size=[4, 4], stride=[3], padding=[2], ceil_mode=True, count_include_pad=False,
         divisor_override=-3),
    dict(kernel_size=[5, 1], stride=[2, 1], padding=[2, 0], ceil_mode=True),
    dict(kernel_size=[1, 1], stride=[2, 2], padding=[0]),
]

MAX = [
    dict(kernel_size=[2, 2], stride=[2, 2]),
    dict(kernel_size=[3], stride=[], padding=[1]),
    dict(kernel_size=[3, 3], stride=[2], padding=[1], ceil_mode=True),
    dict(kernel_size=[2, 3], stride=[3, 2], padding=[1, 0], ceil_mode=True),
    dict(kernel_size=[3, 3], stride=[1], padding=[1], dilation=[2]),
    dict(kernel_size=[3, 2], stride=[2, 1], padding=[1, 1], dilation=[2, 3], ceil_mode=True),
    dict(kernel_size=[4, 4], stride=[3], padding=[2], ceil_mode=True),
    dict(kernel_size=[5, 1], stride=[2, 1], padding=[2, 0], dilation=[1, 1]),
]

POOL_SHAPES = [(1, 3, 8, 8), (2, 2, 9, 11), (3, 7, 5), (1, 1, 6, 13), (0, 2, 7, 7)]

AVG_DEFAULTS = dict(stride=[], padding=[0], ceil_mode=False, count_include_pad=True,
                    divisor_override=None)
MAX_DEFAULTS = dict(stride=[], padding=[0], dilation=[1], ceil_mode=False)


@pytest.mark.parametrize("shape", POOL_SHAPES, ids=str)
@pytest.mark.parametrize("attrs", AVG, ids=str)
def test_avg_pool2d_matches_torch(attrs, shape):
    x = randn(*shape, seed=len(attrs))
    full = {**AVG_DEFAULTS, **attrs}
    check(run_op("aten.avg_pool2d.default", x, attrs), torch_avg(x, full))


@pytest.mark.parametrize("shape", POOL_SHAPES, ids=str)
@pytest.mark.parametrize("attrs", MAX, ids=str)
def test_max_pool2d_matches_torch(attrs, shape):
    x = randn(*shape, seed=len(attrs))
    full = {**MAX_DEFAULTS, **attrs}
    check(run_op("aten.max_pool2d.default", x, attrs), torch_max(x, full), rtol=0, atol=0)


def sweep(op, ref, defaults, make):
    """Random configurations: cortexm must accept exactly what torch accepts and agree with it."""
    rng = np.random.default_rng(11)
    agreed = refused = 0
    for _ in range(400):
        shape = [int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 10)),
                 int(rng.integers(1, 10))]
        attrs = make(rng)
        x = randn(*shape, seed=int(rng.integers(1 << 30)))
        try:
            want = ref(x, {**defaults, **attrs})
        except RuntimeError:
            with pytest.raises(ValueError, match=r"node 'n' \(" + op.replace(".", r"\.") + r"\)"):
                build(op, shape, attrs)
            refused += 1
            continue
        check(run_op(op, x, attrs), want)
        agreed += 1
    assert agreed > 100 and refused > 20


def pair(rng, lo, hi):
    return [int(v) for v in rng.integers(lo, hi, size=int(rng.integers(1, 3)))]


def test_avg_pool2d_random_sweep():
    def make(rng):
        return dict(kernel_size=pair(rng, 1, 6),
                    stride=pair(rng, 1, 4) if rng.random() < 0.7 else [],
                    padding=pair(rng, 0, 3), ceil_mode=bool(rng.random() < 0.5),
                    count_include_pad=bool(rng.random() < 0.5),
                    divisor_override=int(rng.integers(1, 9)) if rng.random() < 0.2 else None)
    sweep("aten.avg_pool2d.default", torch_avg, AVG_DEFAULTS, make)


def test_max_pool2d_random_sweep():
    def make(rng):
        return dict(kernel_size=pair(rng, 1, 6),
                    stride=pair(rng, 1, 4) if rng.random() < 0.7 else [],
                    padding=pair(rng, 0, 3), dilation=pair(rng, 1, 3),
                    ceil_mode=bool(rng.random() < 0.5))
    sweep("aten.max_pool2d.default", torch_max, MAX_DEFAULTS, make)


def test_max_pool2d_nan_and_inf():
    x = randn(1, 1, 4, 4)
    x[0, 0, 1, 1] = np.nan
    x[0, 0, 3, 3] = -np.inf
    x[0, 0, 2, 0] = np.inf
    a = dict(kernel_size=[2], stride=[2], padding=[0], dilation=[1], ceil_mode=False)
    check(run_op("aten.max_pool2d.default", x, a), torch_max(x, a), rtol=0, atol=0)


def test_pool_output_shapes():
    F = torch.nn.functional
    cases = [("aten.avg_pool2d.default", (1, 3, 7, 7),
              {"kernel_size": [3], "stride": [2], "ceil_mode": True},
              lambda x: F.avg_pool2d(x, 3, 2, ceil_mode=True)),
             ("aten.max_pool2d.default", (4, 6, 6), {"kernel_size": [2, 3], "padding": [1]},
              lambda x: F.max_pool2d(x, (2, 3), padding=1)),
             ("aten.adaptive_avg_pool2d.default", (2, 8, 5, 5), {"output_size": [1, 3]},
              lambda x: F.adaptive_avg_pool2d(x, [1, 3]))]
    for op, shape, attrs, ref in cases:
        _, out = build(op, shape, attrs)
        want = ref(torch.zeros(shape))
        assert out.shape == tuple(want.shape) and out.dtype == "float32"


BAD = [
    ("aten.mean.dim", (2, 3), {"dim": [2]}, "attribute 'dim' = 2 is out of range for rank 2"),
    ("aten.mean.dim", (2, 3), {"dim": [1, -1]},
     r"attribute 'dim' = \[1, -1\] names dim 1 more than once"),
    ("aten.mean.dim", (2, 3), {}, "missing attribute 'dim'"),
    ("aten.adaptive_avg_pool2d.default", (1, 2, 4, 4), {"output_size": [2]},
     r"'output_size' = \[2\] has 1"),
    ("aten.adaptive_avg_pool2d.default", (1, 2, 4, 4), {"output_size": [0, 2]}, "must be >= 1"),
    ("aten.adaptive_avg_pool2d.default", (4, 4), {"output_size": [2, 2]}, "expected rank 3 or 4"),
    ("aten.adaptive_avg_pool2d.default", (1, 0, 4, 4), {"output_size": [2, 2]},
     "empty non-batch dim"),
    ("aten.avg_pool2d.default", (1, 2, 4, 4), {"kernel_size": [2, 2, 2]},
     r"'kernel_size' = \[2, 2, 2\] has 3"),
    ("aten.avg_pool2d.default", (1, 2, 4, 4), {"kernel_size": []}, "'kernel_size' = \\[\\] has 0"),
    ("aten.avg_pool2d.default", (1, 2, 4, 4), {"kernel_size": [0]},
     r"kernel_size \[0, 0\] must be >= 1"),
    ("aten.avg_pool2d.default", (1, 2, 4, 4), {"kernel_size": [2], "stride": [0]},
     "stride .* must be >= 1"),
    ("aten.avg_pool2d.default", (1, 2, 4, 4), {"kernel_size": [2], "padding": [2]},
     r"padding \[2, 2\] must be at most half of kernel_size \[2, 2\]"),
    ("aten.avg_pool2d.default", (1, 2, 4, 4), {"kernel_size": [2], "padding": [-1]},
     "must be >= 0"),
    ("aten.avg_pool2d.default", (1, 2, 4, 4), {"kernel_size": [2], "divisor_override": 0},
     "'divisor_override' must not be 0"),
    ("aten.avg_pool2d.default", (1, 2, 2, 4), {"kernel_size": [3]},
     r"output size \[0, 1\].*too small"),
    ("aten.avg_pool2d.default", (2, 4), {"kernel_size": [1]}, "expected rank 3 .* or 4"),
    ("aten.max_pool2d.default", (1, 2, 5, 5), {"kernel_size": [2], "dilation": [0]},
     "dilation .* must be >= 1"),
    ("aten.max_pool2d.default", (1, 2, 5, 5), {"kernel_size": [3], "padding": [1, 2]},
     "at most half"),
    ("aten.max_pool2d.default", (1, 2, 5, 5), {"kernel_size": [3], "dilation": [3]}, "too small"),
    ("aten.max_pool2d.default", (1, 2, 5, 5), {"kernel_size": [2], "ceil": True},
     "unknown attribute 'ceil'"),
]


@pytest.mark.parametrize("op,shape,attrs,match", BAD, ids=lambda v: str(v))
def test_bad_attributes_and_shapes_raise(op, shape, attrs, match):
    with pytest.raises(ValueError, match=r"node 'n' \(" + op.replace(".", r"\.") + r"\).*" + match):
        build(op, shape, attrs)


def test_integer_input_is_rejected():
    for op, attrs in [("aten.mean.dim", {"dim": [0]}),
                      ("aten.max_pool2d.default", {"kernel_size": [2]}),
                      ("aten.avg_pool2d.default", {"kernel_size": [2]}),
                      ("aten.adaptive_avg_pool2d.default", {"output_size": [1, 1]})]:
        g = cortexm.Graph()
        x = g.add_input("x", [1, 2, 4, 4], "int8")
        with pytest.raises(ValueError, match=r"node 'n'.*int8\[1, 2, 4, 4\].*expected float32"):
            g.call(op, [x], attrs, name="n")
