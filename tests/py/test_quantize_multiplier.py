import math

import numpy as np
import pytest

import cortexm
from numpy_reference.common import quantize_multiplier as reference


@pytest.mark.parametrize("scale", [0.0, 0.5, 1.0, 0.75, 1e-3, 3.14159, 2.0 ** -32, 2.0 ** -33,
                                   2.0 ** 40, math.nextafter(1.0, 0.0), 0.0078125 * 0.0123 / 0.05])
def test_matches_tflite_convention(scale):
    assert cortexm.quantize_multiplier(scale) == reference(scale)


def test_random_scales_reconstruct():
    rng = np.random.default_rng(0)
    for scale in rng.uniform(1e-6, 4.0, size=2000):
        m, s = cortexm.quantize_multiplier(float(scale))
        assert (m, s) == reference(float(scale))
        assert abs(m * 2.0 ** (s - 31) / scale - 1) < 1e-9


@pytest.mark.parametrize("scale", [-1.0, float("nan"), float("inf")])
def test_rejects_bad_scale(scale):
    with pytest.raises(ValueError, match="scale"):
        cortexm.quantize_multiplier(scale)
