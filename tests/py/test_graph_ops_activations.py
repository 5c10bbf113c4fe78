"""Elementwise graph ops (activations, binary and scalar arithmetic) and softmax against torch."""

import numpy as np
import pytest
import torch

import cortexm

aten = torch.ops.aten
RTOL, ATOL = 1e-5, 1e-6


def run_op(op, arrays, attrs=None):
    g = cortexm.Graph()
    ins = [g.add_input(f"x{i}", list(a.shape), str(a.dtype)) for i, a in enumerate(arrays)]
    g.outputs = [g.call(op, ins, attrs or {}, name="n")]
    return g.run(*arrays)


def build(op, shapes, attrs=None):
    g = cortexm.Graph()
    ins = [g.add_input(f"x{i}", list(s)) for i, s in enumerate(shapes)]
    return g.call(op, ins, attrs or {}, name="n")


def randn(*shape, seed=0, scale=3.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def check(got, want, rtol=RTOL, atol=ATOL):
    want = want.numpy()
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


# Rank-0 graph inputs cannot be fed yet (the binding reads a 0-d array as shape [1]), so scalars
# are checked through inference only.
SHAPES = [(1,), (7,), (2, 3, 5), (1, 3, 9, 11), (2, 1, 4, 1, 3)]

# op, attrs, torch reference
UNARY = [
    ("aten.hardsigmoid.default", {}, lambda t: aten.hardsigmoid.default(t)),
    ("aten.hardswish.default", {}, lambda t: aten.hardswish.default(t)),
    ("aten.sigmoid.default", {}, lambda t: aten.sigmoid.default(t)),
    ("aten.tanh.default", {}, lambda t: aten.tanh.default(t)),
    ("aten.silu.default", {}, lambda t: aten.silu.default(t)),
    ("aten.gelu.default", {}, lambda t: aten.gelu.default(t)),
    ("aten.gelu.default", {"approximate": "none"},
     lambda t: aten.gelu.default(t, approximate="none")),
    ("aten.gelu.default", {"approximate": "tanh"},
     lambda t: aten.gelu.default(t, approximate="tanh")),
    ("aten.abs.default", {}, lambda t: aten.abs.default(t)),
    ("aten.clamp.default", {"min": -1.5, "max": 2.25}, lambda t: aten.clamp.default(t, -1.5, 2.25)),
    ("aten.clamp.default", {"min": 0.5}, lambda t: aten.clamp.default(t, 0.5)),
    ("aten.clamp.default", {"max": -0.25}, lambda t: aten.clamp.default(t, None, -0.25)),
    ("aten.clamp.default", {"min": None, "max": 1}, lambda t: aten.clamp.default(t, None, 1)),
    ("aten.clamp.default", {"min": 3.0, "max": 1.0}, lambda t: aten.clamp.default(t, 3.0, 1.0)),
    ("aten.add.Scalar", {"other": 1.75}, lambda t: aten.add.Scalar(t, 1.75)),
    ("aten.add.Scalar", {"other": -0.3, "alpha": 2.5},
     lambda t: aten.add.Scalar(t, -0.3, alpha=2.5)),
    ("aten.sub.Scalar", {"other": 0.7}, lambda t: aten.sub.Scalar(t, 0.7)),
    ("aten.sub.Scalar", {"other": 3, "alpha": -0.5}, lambda t: aten.sub.Scalar(t, 3, alpha=-0.5)),
    ("aten.mul.Scalar", {"other": -1.3}, lambda t: aten.mul.Scalar(t, -1.3)),
    ("aten.div.Scalar", {"other": 0.37}, lambda t: aten.div.Scalar(t, 0.37)),
    ("aten.div.Scalar", {"other": 3}, lambda t: aten.div.Scalar(t, 3)),
    ("aten.pow.Tensor_Scalar", {"exponent": 2}, lambda t: aten.pow.Tensor_Scalar(t, 2)),
    ("aten.pow.Tensor_Scalar", {"exponent": 3.0}, lambda t: aten.pow.Tensor_Scalar(t, 3.0)),
    ("aten.pow.Tensor_Scalar", {"exponent": -1}, lambda t: aten.pow.Tensor_Scalar(t, -1)),
]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op,attrs,ref", UNARY, ids=lambda v: str(v) if not callable(v) else "")
def test_unary_matches_torch(op, attrs, ref, shape):
    x = randn(*shape, seed=len(shape))
    check(run_op(op, [x], attrs), ref(torch.from_numpy(x)))


def test_activations_over_a_wide_range():
    # Saturation regions, the kinks at -3 / 3 and values near zero.
    special = [-3, 3, 0, -0.0, 1e-8, -1e-8, 88, -88, -104, 104]
    x = np.concatenate([np.linspace(-30, 30, 2001), special])
    x = x.astype(np.float32)
    t = torch.from_numpy(x)
    for op, attrs, ref in UNARY[:9]:
        check(run_op(op, [x], attrs), ref(t))


def test_sqrt_and_fractional_pow():
    x = np.abs(randn(3, 17, seed=4)) + np.float32(1e-3)
    t = torch.from_numpy(x)
    check(run_op("aten.sqrt.default", [x]), aten.sqrt.default(t))
    for e in (0.5, -0.5, 1.7, -2.0, 0.0, 1.0):
        check(run_op("aten.pow.Tensor_Scalar", [x], {"exponent": e}), aten.pow.Tensor_Scalar(t, e))
    # Negative inputs: NaN like torch.
    neg = np.array([-4.0, -0.0, 4.0, np.inf], dtype=np.float32)
    check(run_op("aten.sqrt.default", [neg]), aten.sqrt.default(torch.from_numpy(neg)))
    check(run_op("aten.pow.Tensor_Scalar", [neg], {"exponent": 0.5}),
          aten.pow.Tensor_Scalar(torch.from_numpy(neg), 0.5))


def test_nan_propagation():
    x = np.array([np.nan, 1.0, -np.inf, np.inf], dtype=np.float32)
    t = torch.from_numpy(x)
    check(run_op("aten.clamp.default", [x], {"min": 0.0, "max": 2.0}),
          aten.clamp.default(t, 0.0, 2.0))
    check(run_op("aten.hardswish.default", [x]), aten.hardswish.default(t))
    check(run_op("aten.sigmoid.default", [x]), aten.sigmoid.default(t))
    y = np.array([0.0, np.nan, 5.0, -np.inf], dtype=np.float32)
    u = torch.from_numpy(y)
    check(run_op("aten.maximum.default", [x, y]), aten.maximum.default(t, u))
    check(run_op("aten.minimum.default", [x, y]), aten.minimum.default(t, u))


BROADCAST = [((2, 3, 5), (2, 3, 5)), ((2, 3, 5), (5,)), ((2, 1, 5), (1, 4, 1)), ((1,), (3, 3)),
             ((4, 1), (1,)), ((1, 3, 1, 7), (2, 1, 6, 1)), ((9,), (1, 9))]

BINARY = [
    ("aten.sub.Tensor", {}, lambda a, b: aten.sub.Tensor(a, b)),
    ("aten.sub.Tensor", {"alpha": 0.5}, lambda a, b: aten.sub.Tensor(a, b, alpha=0.5)),
    ("aten.sub.Tensor", {"alpha": -3}, lambda a, b: aten.sub.Tensor(a, b, alpha=-3)),
    ("aten.mul.Tensor", {}, lambda a, b: aten.mul.Tensor(a, b)),
    ("aten.div.Tensor", {}, lambda a, b: aten.div.Tensor(a, b)),
    ("aten.minimum.default", {}, lambda a, b: aten.minimum.default(a, b)),
    ("aten.maximum.default", {}, lambda a, b: aten.maximum.default(a, b)),
]


@pytest.mark.parametrize("shapes", BROADCAST, ids=str)
@pytest.mark.parametrize("op,attrs,ref", BINARY, ids=lambda v: str(v) if not callable(v) else "")
def test_binary_broadcasting_matches_torch(op, attrs, ref, shapes):
    a = randn(*shapes[0], seed=1)
    b = randn(*shapes[1], seed=2)
    check(run_op(op, [a, b], attrs), ref(torch.from_numpy(a), torch.from_numpy(b)))


def test_div_by_zero_gives_inf_and_nan():
    a = np.array([1.0, -1.0, 0.0], dtype=np.float32)
    b = np.zeros(3, dtype=np.float32)
    check(run_op("aten.div.Tensor", [a, b]),
          aten.div.Tensor(torch.from_numpy(a), torch.from_numpy(b)))
    check(run_op("aten.div.Scalar", [a], {"other": 0.0}), aten.div.Scalar(torch.from_numpy(a), 0.0))


SOFTMAX_CASES = [((7,), 0), ((7,), -1), ((3, 5), 0), ((3, 5), 1), ((2, 3, 4, 5), 1),
                 ((2, 3, 4, 5), -1), ((2, 3, 4, 5), -3), ((1, 1, 9), 2), ((4, 1, 3), 1),
                 ((1,), 0), ((6, 0), 0)]


@pytest.mark.parametrize("shape,dim", SOFTMAX_CASES, ids=str)
@pytest.mark.parametrize("op", ["aten._softmax.default", "aten._log_softmax.default"])
def test_softmax_matches_torch(op, shape, dim):
    x = randn(*shape, seed=7, scale=4.0)
    ref = aten._softmax.default if op == "aten._softmax.default" else aten._log_softmax.default
    check(run_op(op, [x], {"dim": dim}), ref(torch.from_numpy(x), dim, False), atol=1e-5)
    check(run_op(op, [x], {"dim": dim, "half_to_float": False}),
          ref(torch.from_numpy(x), dim, False), atol=1e-5)


def test_softmax_is_numerically_stable():
    x = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1e4, -999.0]], dtype=np.float32)
    t = torch.from_numpy(x)
    got = run_op("aten._softmax.default", [x], {"dim": 1})
    assert np.all(np.isfinite(got))
    check(got, aten._softmax.default(t, 1, False))
    check(run_op("aten._log_softmax.default", [x], {"dim": 1}),
          aten._log_softmax.default(t, 1, False), atol=1e-4)


def test_output_infos():
    v = build("aten.sub.Tensor", [(2, 1, 5), (3, 1)])
    assert v.shape == (2, 3, 5) and v.dtype == "float32"
    assert build("aten.gelu.default", [(4, 2)]).shape == (4, 2)
    assert build("aten._softmax.default", [(4, 2)], {"dim": -2}).shape == (4, 2)
    assert build("aten._log_softmax.default", [()], {"dim": -1}).shape == ()
    assert build("aten.hardswish.default", [()]).shape == ()
    assert build("aten.maximum.default", [(), (3, 1)]).shape == (3, 1)


@pytest.mark.parametrize("op,shapes,attrs,match", [
    ("aten.gelu.default", [(3,)], {"approximate": "erf"}, "attribute 'approximate' = \"erf\""),
    ("aten.clamp.default", [(3,)], {}, "'min' and 'max' are both None"),
    ("aten.clamp.default", [(3,)], {"min": None, "max": None}, "'min' and 'max' are both None"),
    ("aten._softmax.default", [(3, 4)], {"dim": 2},
     "attribute 'dim' = 2 is out of range for rank 2"),
    ("aten._log_softmax.default", [(3, 4)], {"dim": -3}, "attribute 'dim' = -3"),
    ("aten._softmax.default", [(3, 4)], {"dim": 1, "half_to_float": True}, "half_to_float"),
    ("aten._softmax.default", [(3, 4)], {}, "missing attribute 'dim'"),
    ("aten.add.Scalar", [(3,)], {}, "missing attribute 'other'"),
    ("aten.pow.Tensor_Scalar", [(3,)], {"exponent": "two"}, "attribute 'exponent'"),
    ("aten.mul.Tensor", [(2, 3), (4, 3)], {}, r"shapes \[2, 3\] and \[4, 3\] do not broadcast"),
    ("aten.sub.Tensor", [(2, 3), (2,)], {"alpha": 2}, "do not broadcast"),
])
def test_bad_attributes_and_shapes_raise(op, shapes, attrs, match):
    with pytest.raises(ValueError, match=r"node 'n' \(" + op.replace(".", r"\.") + r"\).*" + match):
        build(op, shapes, attrs)


def test_integer_inputs_are_rejected():
    g = cortexm.Graph()
    x = g.add_input("x", [3], "int8")
    with pytest.raises(ValueError, match=r"node 'n'.*int8\[3\], expected float32"):
        g.call("aten.sigmoid.default", [x], name="n")
    with pytest.raises(ValueError, match=r"node 'n'.*expected float32"):
        g.call("aten.gelu.default", [x], name="n")
    with pytest.raises(ValueError, match=r"node 'n'.*expected float32"):
        g.call("aten.maximum.default", [x, x], name="n")
