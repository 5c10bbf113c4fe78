"""from_tflite against TFLite Micro for SUM (int8, any axes block, keep_dims): randomized
single-operator files, byte for byte, no float op left."""

from __future__ import annotations

import numpy as np
import pytest

from cortexm.tflite import schema as S
from test_tflite_import import CASES, check, log_uniform, zero_point
from test_tflite_import_more import random_shape
from tflite_compare import needs_tflm
from tflite_writer import ModelBuilder

MODELS = 24


def sum_model(rng):
    rank = int(rng.choice([2, 3, 4]))
    shape = random_shape(rng, rank)
    start = int(rng.integers(1, rank))
    stop = int(rng.integers(start + 1, rank + 1))
    axes = list(range(start, stop))
    count = int(np.prod([shape[d] for d in axes]))
    keep = bool(rng.random() < 0.5)
    out_shape = [1 if d in axes else n for d, n in enumerate(shape)] if keep else \
        [n for d, n in enumerate(shape) if d not in axes]
    m = ModelBuilder()
    s = log_uniform(rng, 1e-3, 1.0)
    x = m.tensor(shape, "INT8", s, zero_point(rng))
    a = m.tensor([len(axes)], "INT32", data=np.array(axes if rng.random() < 0.7 else [d - rank for d in axes],
                                                     np.int32))
    # outputs from 1/4 to 4 times the scale a sum of `count` values needs (some saturate)
    out = m.tensor(out_shape, "INT8", s * np.sqrt(count) * log_uniform(rng, 0.25, 4.0), zero_point(rng))
    m.operator("SUM", [x, a], [out], S.OPTIONS_REDUCER, {S.REDUCER_KEEP_DIMS: ("B", int(keep))})
    return m.build([x], [out])


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_sum_matches_tflm(seed):
    assert check(sum_model(np.random.default_rng(2400 + seed)), seed) == CASES
