"""from_tflite against TFLite Micro for RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR (int8, NHWC):
randomized single-operator files, up- and downscaling, byte for byte."""

from __future__ import annotations

import numpy as np
import pytest

import cortexm
from cortexm.tflite import schema as S
from test_tflite_import import CASES, check, log_uniform, zero_point
from tflite_compare import compare, float_ops, needs_tflm
from tflite_writer import ModelBuilder

MODELS = 16


def resize_model(rng, builtin, align=False, half=False):
    h, w, c = (int(rng.integers(1, 9)) for _ in range(3))
    oh, ow = (int(rng.integers(1, 17)) for _ in range(2))
    m = ModelBuilder()
    s, zp = log_uniform(rng, 1e-3, 1.0), zero_point(rng)
    x = m.tensor([1, h, w, c], "INT8", s, zp)
    size = m.tensor([2], "INT32", data=np.array([oh, ow], np.int32))
    out = m.tensor([1, oh, ow, c], "INT8", s, zp)
    if builtin == "RESIZE_NEAREST_NEIGHBOR":
        opts = (S.OPTIONS_RESIZE_NEAREST_NEIGHBOR, {S.RESIZE_NEAREST_ALIGN_CORNERS: ("B", int(align)),
                                                    S.RESIZE_NEAREST_HALF_PIXEL_CENTERS: ("B", int(half))})
    else:
        opts = (S.OPTIONS_RESIZE_BILINEAR, {S.RESIZE_BILINEAR_ALIGN_CORNERS: ("B", int(align)),
                                            S.RESIZE_BILINEAR_HALF_PIXEL_CENTERS: ("B", int(half))})
    m.operator(builtin, [x, size], [out], *opts)
    return m.build([x], [out])


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_resize_nearest_neighbor_matches_tflm(seed):
    assert check(resize_model(np.random.default_rng(2500 + seed), "RESIZE_NEAREST_NEIGHBOR"), seed) == CASES


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_resize_bilinear_matches_tflm(seed):
    align = seed % 2 == 1
    model = resize_model(np.random.default_rng(2600 + seed), "RESIZE_BILINEAR", align=align, half=not align)
    assert check(model, seed) == CASES


def test_legacy_resize_bilinear_is_refused_with_the_reason():
    with pytest.raises(NotImplementedError, match="half_pixel_centers = not align_corners"):
        cortexm.from_tflite(resize_model(np.random.default_rng(0), "RESIZE_BILINEAR"))
