"""MobileNetV3-Small (Howard et al. 2019) exactly as torchvision.models.mobilenet_v3_small (width
1.0, 1000 classes): hardswish, squeeze-excitation with ReLU + hardsigmoid, BN(eps=1e-3,
momentum=0.01), 576-channel last conv, adaptive avg pool, Linear(576, 1024) + hardswish + Dropout(0.2)
+ Linear(1024, 1000).

Module names match torchvision's, so a torchvision state dict loads with ``load_state_dict``.
"""

from __future__ import annotations

from functools import partial

import torch
from torch import nn

from . import _common
from .mobilenet_v2 import ConvBNActivation, imagenet_sample, init_torchvision_, make_divisible

NUM_CLASSES = 1000


class SqueezeExcitation(nn.Module):
    """torchvision.ops.SqueezeExcitation with hardsigmoid gating."""

    def __init__(self, input_channels: int, squeeze_channels: int):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = nn.ReLU()
        self.scale_activation = nn.Hardsigmoid()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = self.avgpool(x)
        scale = self.activation(self.fc1(scale))
        scale = self.scale_activation(self.fc2(scale))
        return scale * x


class InvertedResidual(nn.Module):
    def __init__(self, inp, kernel, expanded, out, use_se, activation, stride, norm_layer):
        super().__init__()
        act = nn.Hardswish if activation == "HS" else nn.ReLU
        self.use_res_connect = stride == 1 and inp == out
        layers: list[nn.Module] = []
        if expanded != inp:
            layers.append(ConvBNActivation(inp, expanded, 1, norm_layer=norm_layer, activation_layer=act))
        layers.append(ConvBNActivation(expanded, expanded, kernel, stride, groups=expanded, norm_layer=norm_layer,
                                       activation_layer=act))
        if use_se:
            layers.append(SqueezeExcitation(expanded, make_divisible(expanded // 4, 8)))
        layers.append(ConvBNActivation(expanded, out, 1, norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.out_channels = out
        self._is_cn = stride > 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.block(x)
        if self.use_res_connect:
            result = result + x
        return result


class MobileNetV3Small(nn.Module):
    # input, kernel, expanded, out, SE, activation, stride (dilation is 1 throughout)
    SETTINGS = [
        (16, 3, 16, 16, True, "RE", 2),
        (16, 3, 72, 24, False, "RE", 2),
        (24, 3, 88, 24, False, "RE", 1),
        (24, 5, 96, 40, True, "HS", 2),
        (40, 5, 240, 40, True, "HS", 1),
        (40, 5, 240, 40, True, "HS", 1),
        (40, 5, 120, 48, True, "HS", 1),
        (48, 5, 144, 48, True, "HS", 1),
        (48, 5, 288, 96, True, "HS", 2),
        (96, 5, 576, 96, True, "HS", 1),
        (96, 5, 576, 96, True, "HS", 1),
    ]
    LAST_CHANNEL = 1024

    def __init__(self, num_classes: int = NUM_CLASSES, dropout: float = 0.2):
        super().__init__()
        norm_layer = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        layers: list[nn.Module] = [
            ConvBNActivation(3, self.SETTINGS[0][0], 3, 2, norm_layer=norm_layer, activation_layer=nn.Hardswish)]
        for cnf in self.SETTINGS:
            layers.append(InvertedResidual(*cnf, norm_layer=norm_layer))
        last_in = self.SETTINGS[-1][3]
        last_out = 6 * last_in
        layers.append(ConvBNActivation(last_in, last_out, 1, norm_layer=norm_layer, activation_layer=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(
            nn.Linear(last_out, self.LAST_CHANNEL),
            nn.Hardswish(inplace=True),
            nn.Dropout(p=dropout, inplace=True),
            nn.Linear(self.LAST_CHANNEL, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


def build(resolution: int = 224) -> _common.ModelBundle:
    return _common.build(MobileNetV3Small, init_torchvision_, partial(imagenet_sample, resolution=resolution),
                         bn_samples=16, bn_batch=8)
