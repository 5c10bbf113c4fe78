"""MLPerf Tiny image classification reference model: ResNet-8 for CIFAR-10 (EEMBC resnet_v1_eembc),
ported layer for layer from mlcommons/tiny benchmark/training/image_classification/keras_model.py
with the v0.x filter counts 16/32/64.

Input (1, 3, 32, 32) in [0, 1]. Conv2D(16, 3x3) + BN + ReLU; three residual stacks of
[Conv3x3(s) + BN + ReLU, Conv3x3 + BN] added to the identity (stack 1) or to a 1x1 stride-2 Conv2D
shortcut (stacks 2 and 3, no BN on the shortcut), each followed by ReLU; AveragePooling2D(8);
Flatten; Dense(10, softmax). Output (1, 10) probabilities.

All convs have biases (Keras default), BN eps=1e-3, he_normal init. The stride-2 3x3 convs use
Keras 'same' padding, which for even inputs pads 0 above/left and 1 below/right: an explicit
ZeroPad2d((0, 1, 0, 1)) in front of an unpadded conv.
"""

from __future__ import annotations

import torch
from torch import nn

from . import _common, _data

NUM_CLASSES = 10


def _bn(c: int) -> nn.BatchNorm2d:
    return nn.BatchNorm2d(c, eps=1e-3, momentum=0.01)


class ResidualStack(nn.Module):
    def __init__(self, in_ch: int, out_ch: int, stride: int, in_hw: tuple[int, int]):
        super().__init__()
        self.conv1, hw = _common.conv2d_same(in_ch, out_ch, 3, stride, in_hw)
        self.bn1 = _bn(out_ch)
        self.relu1 = nn.ReLU()
        self.conv2, hw = _common.conv2d_same(out_ch, out_ch, 3, 1, hw)
        self.bn2 = _bn(out_ch)
        self.shortcut = None
        if stride != 1 or in_ch != out_ch:
            self.shortcut, _ = _common.conv2d_same(in_ch, out_ch, 1, stride, in_hw)
        self.relu2 = nn.ReLU()
        self.out_hw = hw

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.relu1(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        if self.shortcut is not None:
            x = self.shortcut(x)
        return self.relu2(x + y)


class ResNet8(nn.Module):
    def __init__(self, num_classes: int = NUM_CLASSES, filters: int = 16, input_hw=(32, 32)):
        super().__init__()
        self.conv1, hw = _common.conv2d_same(3, filters, 3, 1, input_hw)
        self.bn1 = _bn(filters)
        self.relu1 = nn.ReLU()
        self.stack1 = ResidualStack(filters, filters, 1, hw)
        self.stack2 = ResidualStack(filters, 2 * filters, 2, self.stack1.out_hw)
        self.stack3 = ResidualStack(2 * filters, 4 * filters, 2, self.stack2.out_hw)
        self.avgpool = nn.AvgPool2d(min(self.stack3.out_hw))
        self.fc = nn.Linear(4 * filters, num_classes)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu1(self.bn1(self.conv1(x)))
        x = self.stack3(self.stack2(self.stack1(x)))
        x = torch.flatten(self.avgpool(x), 1)
        return self.softmax(self.fc(x))


def _init(model: nn.Module, g: torch.Generator) -> None:
    _common.keras_init_(model, g, _common.keras_he_normal_, _common.keras_he_normal_)


def _sample(g: torch.Generator) -> tuple:
    """One CIFAR-like 32x32 RGB image scaled to [0, 1] (the reference divides by 255)."""
    return (_data.natural_images(g, 1, 3, 32, 32),)


def build() -> _common.ModelBundle:
    return _common.build(ResNet8, _init, _sample, bn_samples=64, bn_batch=32)
