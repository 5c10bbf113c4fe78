"""MLPerf Tiny visual wake words reference model: MobileNetV1 (Howard et al. 2017) with alpha 0.25
at 96x96, 2 classes (person / no person), ported layer for layer from mlcommons/tiny
benchmark/training/visual_wake_words/vww_model.py (EEMBC mobilenet_v1_eembc).

Input (1, 3, 96, 96) in [0, 1]. Conv2D(8, 3x3, stride 2) + BN + ReLU, then 13 depthwise-separable
layers [DepthwiseConv2D(3x3, stride s) + BN + ReLU, Conv2D(c, 1x1) + BN + ReLU] with
c = 16, 32, 32, 64, 64, 128 x 6, 256, 256 and s = 2 where c first doubles (except the 16), then
AveragePooling2D(3) over the 3x3 map, Flatten, Dense(2, softmax). Output (1, 2) probabilities.

As in the Keras reference: plain ReLU (not ReLU6), every conv has a bias, BN eps=1e-3, he_normal
init, and the stride-2 layers use Keras 'same' padding (0 before, 1 after on even inputs), i.e. an
explicit ZeroPad2d((0, 1, 0, 1)) in front of an unpadded conv.
"""

from __future__ import annotations

import torch
from torch import nn

from . import _common, _data

NUM_CLASSES = 2
ALPHA = 0.25
# (pointwise output channels at alpha=1, depthwise stride) for the 13 depthwise-separable layers
LAYERS = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
          (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)]


def _bn(c: int) -> nn.BatchNorm2d:
    return nn.BatchNorm2d(c, eps=1e-3, momentum=0.01)


class MobileNetV1(nn.Module):
    def __init__(self, num_classes: int = NUM_CLASSES, alpha: float = ALPHA, input_hw=(96, 96)):
        super().__init__()
        ch = int(32 * alpha)
        conv, hw = _common.conv2d_same(3, ch, 3, 2, input_hw)
        layers: list[nn.Module] = [nn.Sequential(conv, _bn(ch), nn.ReLU())]
        for out, stride in LAYERS:
            out = int(out * alpha)
            dw, hw = _common.conv2d_same(ch, ch, 3, stride, hw, groups=ch)
            pw, hw = _common.conv2d_same(ch, out, 1, 1, hw)
            layers.append(nn.Sequential(dw, _bn(ch), nn.ReLU(), pw, _bn(out), nn.ReLU()))
            ch = out
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AvgPool2d(hw)
        self.fc = nn.Linear(ch, num_classes)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.avgpool(self.features(x))
        return self.softmax(self.fc(torch.flatten(x, 1)))


def _init(model: nn.Module, g: torch.Generator) -> None:
    # The reference sets he_normal on the convs; its Dense keeps Keras' default glorot_uniform.
    _common.keras_init_(model, g, _common.keras_he_normal_, _common.keras_glorot_uniform_)


def _sample(g: torch.Generator) -> tuple:
    """One 96x96 RGB image scaled to [0, 1] (the reference rescales by 1/255)."""
    return (_data.natural_images(g, 1, 3, 96, 96),)


def build() -> _common.ModelBundle:
    return _common.build(MobileNetV1, _init, _sample, bn_samples=32, bn_batch=16)
