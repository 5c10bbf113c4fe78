"""from_tflite against TFLite Micro for TRANSPOSE, STRIDED_SLICE (positive strides, begin / end /
shrink masks, negative indices) and MAXIMUM / MINIMUM (int8, broadcasting): randomized
single-operator files, byte for byte, no float op left."""

from __future__ import annotations

import numpy as np
import pytest

import cortexm
from cortexm.tflite import schema as S
from test_tflite_import import CASES, check, log_uniform, zero_point
from test_tflite_import_more import random_shape
from tflite_compare import needs_tflm
from tflite_writer import ModelBuilder

MODELS = 16


def transpose_model(rng):
    rank = int(rng.choice([2, 3, 4, 5]))
    shape = [int(rng.integers(1, 6)) for _ in range(rank)]
    perm = rng.permutation(rank).tolist()
    m = ModelBuilder()
    s, zp = log_uniform(rng, 1e-3, 1.0), zero_point(rng)
    x = m.tensor(shape, "INT8", s, zp)
    p = m.tensor([rank], "INT32", data=np.array(perm, np.int32))
    out = m.tensor([shape[d] for d in perm], "INT8", s, zp)
    m.operator("TRANSPOSE", [x, p], [out], S.OPTIONS_TRANSPOSE, {})
    return m.build([x], [out])


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_transpose_matches_tflm(seed):
    assert check(transpose_model(np.random.default_rng(2100 + seed)), seed) == CASES


def _tflite_slice(n, b, e, stride, begin_bit, end_bit, shrink_bit):
    """TFLite's StridedSlice start / stop for a positive stride (to build the expected shape)."""
    start = b + n if b < 0 else b
    start = 0 if begin_bit else min(max(start, 0), n)
    if shrink_bit:
        return start, start + 1
    stop = e + n if e < 0 else e
    stop = n if end_bit else min(max(stop, 0), n)
    return start, stop


def strided_slice_model(rng):
    rank = int(rng.choice([1, 2, 3, 4]))
    shape = [int(rng.integers(1, 9)) for _ in range(rank)]
    while True:
        begin = [int(rng.integers(-n, n + 1)) for n in shape]
        end = [int(rng.integers(-n - 1, n + 2)) for n in shape]
        strides = [int(rng.integers(1, 4)) for _ in shape]
        begin_mask, end_mask = int(rng.integers(0, 1 << rank)), int(rng.integers(0, 1 << rank))
        shrink = int(rng.integers(0, 1 << rank)) if rng.random() < 0.3 else 0
        out_shape, ok = [], True
        for d, n in enumerate(shape):
            if shrink >> d & 1:
                start = 0 if begin_mask >> d & 1 else (begin[d] + n if begin[d] < 0 else begin[d])
                ok &= 0 <= start < n
                continue
            start, stop = _tflite_slice(n, begin[d], end[d], strides[d], begin_mask >> d & 1, end_mask >> d & 1, 0)
            size = -(-(stop - start) // strides[d]) if stop > start else 0
            ok &= size > 0
            out_shape.append(size)
        if ok and out_shape:
            break
    m = ModelBuilder()
    s, zp = log_uniform(rng, 1e-3, 1.0), zero_point(rng)
    x = m.tensor(shape, "INT8", s, zp)
    tb, te, ts = (m.tensor([rank], "INT32", data=np.array(v, np.int32)) for v in (begin, end, strides))
    out = m.tensor(out_shape, "INT8", s, zp)
    m.operator("STRIDED_SLICE", [x, tb, te, ts], [out], S.OPTIONS_STRIDED_SLICE,
               {S.STRIDED_SLICE_BEGIN_MASK: ("i", begin_mask), S.STRIDED_SLICE_END_MASK: ("i", end_mask),
                S.STRIDED_SLICE_SHRINK_AXIS_MASK: ("i", shrink)})
    return m.build([x], [out])


@needs_tflm
@pytest.mark.parametrize("seed", range(2 * MODELS))
def test_strided_slice_matches_tflm(seed):
    assert check(strided_slice_model(np.random.default_rng(2200 + seed)), seed) == CASES


def test_strided_slice_negative_stride_is_refused():
    m = ModelBuilder()
    x = m.tensor([1, 6], "INT8", 0.1, 0)
    tb, te, ts = (m.tensor([2], "INT32", data=np.array(v, np.int32)) for v in ([0, 5], [1, 0], [1, -1]))
    out = m.tensor([1, 5], "INT8", 0.1, 0)
    m.operator("STRIDED_SLICE", [x, tb, te, ts], [out], S.OPTIONS_STRIDED_SLICE, {})
    with pytest.raises(NotImplementedError, match="stride -1 on dim 1"):
        cortexm.from_tflite(m.build([x], [out]))


def minmax_model(rng, builtin):
    rank = int(rng.choice([2, 3, 4]))
    shape = random_shape(rng, rank)
    other = [n if rng.random() < 0.7 else 1 for n in shape]
    if rng.random() < 0.5:
        shape, other = other, shape
    out_shape = [max(a, b) for a, b in zip(shape, other)]
    m = ModelBuilder()
    s, zp = log_uniform(rng, 1e-3, 1.0), zero_point(rng)
    a = m.tensor(shape, "INT8", s, zp)
    if rng.random() < 0.25:
        b = m.tensor(other, "INT8", s, zp, data=rng.integers(-128, 128, other).astype(np.int8))
        inputs = [a]
    else:
        b = m.tensor(other, "INT8", s, zp)
        inputs = [a, b]
    out = m.tensor(out_shape, "INT8", s, zp)
    m.operator(builtin, [a, b], [out], S.OPTIONS_MAXIMUM_MINIMUM, {})
    return m.build(inputs, [out])


@needs_tflm
@pytest.mark.parametrize("builtin", ["MAXIMUM", "MINIMUM"])
@pytest.mark.parametrize("seed", range(MODELS))
def test_maximum_minimum_match_tflm(builtin, seed):
    model = minmax_model(np.random.default_rng(2300 + seed + (100 if builtin == "MINIMUM" else 0)), builtin)
    assert check(model, seed) == CASES


def test_maximum_with_different_qparams_is_refused():
    m = ModelBuilder()
    a, b = m.tensor([1, 4], "INT8", 0.1, 0), m.tensor([1, 4], "INT8", 0.2, 0)
    out = m.tensor([1, 4], "INT8", 0.1, 0)
    m.operator("MAXIMUM", [a, b], [out], S.OPTIONS_MAXIMUM_MINIMUM, {})
    with pytest.raises(NotImplementedError, match="compares the integers unscaled"):
        cortexm.from_tflite(m.build([a, b], [out]))
