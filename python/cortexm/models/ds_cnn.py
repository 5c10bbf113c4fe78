"""MLPerf Tiny keyword spotting reference model: DS-CNN (Zhang et al., "Hello Edge", 2017), ported
layer for layer from mlcommons/tiny benchmark/training/keyword_spotting/keras_model.py ('ds_cnn').

Input (1, 1, 49, 10): 49 frames x 10 MFCCs (NCHW). Conv2D(64, (10, 4), stride 2, 'same') + BN + ReLU
+ Dropout(0.2); 4 x [DepthwiseConv2D(3x3, 'same') + BN + ReLU, Conv2D(64, 1x1) + BN + ReLU];
Dropout(0.4); AveragePooling2D((24, 5)); Flatten; Dense(12, softmax). Output (1, 12) probabilities.

Faithful details kept from the Keras model: every conv has a bias (Keras default) and is followed by
BN(eps=1e-3); the first conv's 'same' padding is asymmetric (4 rows above, 5 below, 1 column each
side), expressed as an explicit ZeroPad2d; the 25x5 feature map is average-pooled with a (24, 5)
window (int(49/2) = 24), so the last row is ignored exactly as in the reference.
"""

from __future__ import annotations

import torch
from torch import nn

from . import _common, _data

NUM_CLASSES = 12
FILTERS = 64
INPUT_HW = (49, 10)


def _bn(c: int) -> nn.BatchNorm2d:
    return nn.BatchNorm2d(c, eps=1e-3, momentum=0.01)


class DSCNN(nn.Module):
    def __init__(self, num_classes: int = NUM_CLASSES, filters: int = FILTERS, input_hw=INPUT_HW):
        super().__init__()
        conv1, hw = _common.conv2d_same(1, filters, (10, 4), 2, input_hw)
        self.conv1 = conv1
        self.bn1 = _bn(filters)
        self.relu1 = nn.ReLU()
        self.dropout1 = nn.Dropout(0.2)
        blocks = []
        for _ in range(4):
            dw, _hw = _common.conv2d_same(filters, filters, 3, 1, hw, groups=filters)
            pw, _hw = _common.conv2d_same(filters, filters, 1, 1, hw)
            blocks.append(nn.Sequential(dw, _bn(filters), nn.ReLU(), pw, _bn(filters), nn.ReLU()))
        self.blocks = nn.Sequential(*blocks)
        self.dropout2 = nn.Dropout(0.4)
        self.avgpool = nn.AvgPool2d((input_hw[0] // 2, input_hw[1] // 2))
        self.fc = nn.Linear(filters, num_classes)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.dropout1(self.relu1(self.bn1(self.conv1(x))))
        x = self.dropout2(self.blocks(x))
        x = torch.flatten(self.avgpool(x), 1)
        return self.softmax(self.fc(x))


def _init(model: nn.Module, g: torch.Generator) -> None:
    _common.keras_init_(model, g, _common.keras_glorot_uniform_, _common.keras_glorot_uniform_)


def _sample(g: torch.Generator) -> tuple:
    """MFCCs of one second of synthetic 16 kHz audio (speech-like, tones, noise, near-silence)."""
    return (_data.kws_mfcc(_data.audio_clip(g, 16000)).view(1, 1, *INPUT_HW),)


def build() -> _common.ModelBundle:
    return _common.build(DSCNN, _init, _sample, bn_samples=32, bn_batch=32)
