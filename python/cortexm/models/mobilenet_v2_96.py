"""MobileNetV2 (torchvision definition, width 1.0, 1000 classes) at 96x96 input: the same network
as ``mobilenet_v2``; only the example/calibration inputs are (1, 3, 96, 96)."""

from __future__ import annotations

from . import _common, mobilenet_v2


def build() -> _common.ModelBundle:
    return mobilenet_v2.build(resolution=96)
