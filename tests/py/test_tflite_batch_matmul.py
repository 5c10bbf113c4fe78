"""from_tflite against TFLite Micro for int8 BATCH_MATMUL with a constant rhs (adj_x / adj_y):
randomized single-operator files, byte for byte, no float op left; two activations are refused
where TFLite Micro's float32 scale product gives another multiplier than cortexm's double one."""

from __future__ import annotations

import numpy as np
import pytest

import cortexm
from cortexm.tflite import schema as S
from test_tflite_import import CASES, check, log_uniform, zero_point
from tflite_compare import needs_tflm
from tflite_writer import ModelBuilder

MODELS = 24


def batch_matmul_model(rng, constant=True):
    b, m_, k, n = (int(rng.integers(1, 4)), int(rng.integers(1, 9)), int(rng.integers(1, 33)), int(rng.integers(1, 9)))
    adj_x, adj_y = bool(rng.random() < 0.3), bool(rng.random() < 0.5)
    m = ModelBuilder()
    s_a, s_b = log_uniform(rng, 1e-3, 0.1), log_uniform(rng, 1e-3, 0.1)
    a = m.tensor([b, k, m_] if adj_x else [b, m_, k], "INT8", s_a, zero_point(rng))
    shape_b = [b, n, k] if adj_y else [b, k, n]
    rhs = m.tensor(shape_b, "INT8", s_b, zero_point(rng),
                   data=rng.integers(-128, 128, shape_b).astype(np.int8) if constant else None)
    out = m.tensor([b, m_, n], "INT8", np.float32(s_a * s_b * 128 * np.sqrt(k) * log_uniform(rng, 0.1, 2.0)),
                   zero_point(rng))
    m.operator("BATCH_MATMUL", [a, rhs], [out], S.OPTIONS_BATCH_MATMUL,
               {S.BATCH_MATMUL_ADJ_X: ("B", int(adj_x)), S.BATCH_MATMUL_ADJ_Y: ("B", int(adj_y))})
    return m.build([a] if constant else [a, rhs], [out])


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_batch_matmul_matches_tflm(seed):
    assert check(batch_matmul_model(np.random.default_rng(2700 + seed)), seed) == CASES


def test_two_activations_with_tflms_float32_multiplier_are_refused():
    with pytest.raises(NotImplementedError, match="float32\\(s_lhs \\* s_rhs\\) / s_out differs"):
        cortexm.from_tflite(batch_matmul_model(np.random.default_rng(2701), constant=False))
