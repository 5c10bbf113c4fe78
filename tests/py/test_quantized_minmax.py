import numpy as np
import pytest

import cortexm
from numpy_reference.minmax import maximum, minimum, minmax_params

ops = cortexm.ops


def run(op, ref, a, b, scales, zps, act=(-128, 127)):
    (ma, sa), (mb, sb), (mo, so) = minmax_params(*scales)
    got = op(a, zps[0], ma, sa, b, zps[1], mb, sb, zps[2], mo, so, activation_min=act[0],
             activation_max=act[1])
    return got, ref(a, zps[0], ma, sa, b, zps[1], mb, sb, zps[2], mo, so, *act)


@pytest.mark.parametrize("op,ref,pick", [(ops.quantized_maximum, maximum, np.maximum),
                                         (ops.quantized_minimum, minimum, np.minimum)])
def test_randomized_awkward_cases(op, ref, pick):
    rng = np.random.default_rng(11)
    for _ in range(150):
        rank = rng.integers(1, 5)
        dims = rng.integers(1, 7, size=rank)
        shape_a = tuple(int(d) if rng.random() > 0.3 else 1 for d in dims)
        shape_b = tuple(int(d) if rng.random() > 0.3 else 1 for d in dims)[rng.integers(0, 2):]
        a = rng.integers(-128, 128, size=shape_a, dtype=np.int8)
        b = rng.integers(-128, 128, size=shape_b, dtype=np.int8)
        sa, sb = (float(s) for s in rng.uniform(1e-4, 0.1, size=2))
        so = max(sa, sb) * float(rng.uniform(0.3, 3.0))
        zps = tuple(int(z) for z in rng.integers(-128, 128, size=3))
        lo = int(rng.integers(-128, 100))
        hi = int(rng.integers(lo, 128))
        got, want = run(op, ref, a, b, (sa, sb, so), zps, (lo, hi))
        assert got.shape == np.broadcast_shapes(shape_a, shape_b)
        assert np.array_equal(got, want)
        real = pick(sa * (a.astype(np.float64) - zps[0]), sb * (b.astype(np.float64) - zps[1]))
        assert np.all(np.abs(np.clip(real / so + zps[2], lo, hi) - got) <= 0.5 + 1e-3)


def test_equal_qparams_are_raw_max_and_min():
    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, size=(5, 33), dtype=np.int8)
    b = rng.integers(-128, 128, size=(33,), dtype=np.int8)
    hi, _ = run(ops.quantized_maximum, maximum, a, b, (0.05, 0.05, 0.05), (7, 7, 7))
    lo, _ = run(ops.quantized_minimum, minimum, a, b, (0.05, 0.05, 0.05), (7, 7, 7))
    assert np.array_equal(hi, np.maximum(a, b))
    assert np.array_equal(lo, np.minimum(a, b))


def test_bad_params_raise_value_error():
    a = np.zeros(4, np.int8)
    with pytest.raises(ValueError, match="self_zero_point = 128"):
        ops.quantized_maximum(a, 128, 1 << 30, 0, a, 0, 1 << 30, 0, 0, 1 << 30, 0)
    with pytest.raises(ValueError, match="broadcast"):
        ops.quantized_minimum(a, 0, 1 << 30, 0, np.zeros(3, np.int8), 0, 1 << 30, 0, 0, 1 << 30, 0)
