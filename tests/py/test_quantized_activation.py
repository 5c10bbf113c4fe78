import numpy as np
import pytest

import cortexm

ops = cortexm.ops


@pytest.mark.parametrize("shape", [(), (1,), (7,), (2, 3, 5, 7), (1001,)])
def test_table_lookup(shape):
    rng = np.random.default_rng(len(shape))
    table = rng.integers(-128, 128, size=256, dtype=np.int8)
    x = rng.integers(-128, 128, size=shape, dtype=np.int8)
    got = ops.quantized_activation(x, table)
    assert got.shape == x.shape and got.dtype == np.int8
    assert np.array_equal(got, table[x.astype(np.int64) + 128])


def test_non_contiguous_input():
    table = np.arange(256, dtype=np.int64).astype(np.uint8).view(np.int8)[::-1].copy()
    x = np.arange(-128, 128, dtype=np.int8).reshape(16, 16)[:, ::3]
    assert np.array_equal(ops.quantized_activation(x, table), table[x.astype(np.int64) + 128])


def test_bad_table():
    x = np.zeros(4, np.int8)
    with pytest.raises(ValueError, match="256 entries"):
        ops.quantized_activation(x, np.zeros(255, np.int8))
    with pytest.raises(ValueError, match="dtype"):
        ops.quantized_activation(x, np.zeros(256, np.uint8))
