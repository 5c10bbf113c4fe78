"""MobileNetV3-Small (torchvision definition, 1000 classes) at 96x96 input: the same network as
``mobilenet_v3_small``; only the example/calibration inputs are (1, 3, 96, 96)."""

from __future__ import annotations

from . import _common, mobilenet_v3_small


def build() -> _common.ModelBundle:
    return mobilenet_v3_small.build(resolution=96)
