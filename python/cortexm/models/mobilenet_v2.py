"""MobileNetV2 (Sandler et al. 2018) exactly as torchvision.models.mobilenet_v2 (width 1.0, 1000
classes): ReLU6, inverted residuals, 1280-channel head, global average pool, Dropout(0.2) + Linear.

Module names match torchvision's, so a torchvision state dict loads with ``load_state_dict``.
Init follows torchvision (kaiming-normal fan_out convs, N(0, 0.01) linear); biases and BN affine
parameters are randomised and BN running stats come from calibration images (see _common).
"""

from __future__ import annotations

from functools import partial

import torch
from torch import nn

from . import _common, _data

NUM_CLASSES = 1000


def make_divisible(v: float, divisor: int, min_value: int | None = None) -> int:
    """torchvision's _make_divisible: round to the nearest multiple, never dropping more than 10%."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class ConvBNActivation(nn.Sequential):
    """torchvision.ops.Conv2dNormActivation: Conv2d(bias=False) -> BN -> activation."""

    def __init__(self, in_ch, out_ch, kernel_size=3, stride=1, groups=1, norm_layer=nn.BatchNorm2d,
                 activation_layer=nn.ReLU6, dilation=1):
        padding = (kernel_size - 1) // 2 * dilation
        layers = [nn.Conv2d(in_ch, out_ch, kernel_size, stride, padding, dilation=dilation, groups=groups,
                            bias=False),
                  norm_layer(out_ch)]
        if activation_layer is not None:
            layers.append(activation_layer(inplace=True))
        super().__init__(*layers)
        self.out_channels = out_ch


class InvertedResidual(nn.Module):
    def __init__(self, inp: int, oup: int, stride: int, expand_ratio: int):
        super().__init__()
        assert stride in (1, 2)
        hidden = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers: list[nn.Module] = []
        if expand_ratio != 1:
            layers.append(ConvBNActivation(inp, hidden, kernel_size=1))
        layers += [
            ConvBNActivation(hidden, hidden, stride=stride, groups=hidden),
            nn.Conv2d(hidden, oup, 1, 1, 0, bias=False),
            nn.BatchNorm2d(oup),
        ]
        self.conv = nn.Sequential(*layers)
        self.out_channels = oup

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class MobileNetV2(nn.Module):
    # t (expansion), c (channels), n (repeats), s (first stride)
    SETTINGS = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2],
                [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]]

    def __init__(self, num_classes: int = NUM_CLASSES, width_mult: float = 1.0, round_nearest: int = 8,
                 dropout: float = 0.2):
        super().__init__()
        input_channel = make_divisible(32 * width_mult, round_nearest)
        self.last_channel = make_divisible(1280 * max(1.0, width_mult), round_nearest)
        features: list[nn.Module] = [ConvBNActivation(3, input_channel, stride=2)]
        for t, c, n, s in self.SETTINGS:
            output_channel = make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                features.append(InvertedResidual(input_channel, output_channel, s if i == 0 else 1, t))
                input_channel = output_channel
        features.append(ConvBNActivation(input_channel, self.last_channel, kernel_size=1))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout), nn.Linear(self.last_channel, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
        x = torch.flatten(x, 1)
        return self.classifier(x)


def init_torchvision_(model: nn.Module, g: torch.Generator) -> None:
    """torchvision's MobileNet init (weights), plus randomised biases and BN affine parameters."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", generator=g)
            _common.default_bias_(m.bias, m.weight, g)
        elif isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0, 0.01, generator=g)
            _common.default_bias_(m.bias, m.weight, g)
    _common.randomize_batchnorm_affine(model, g)


def imagenet_sample(g: torch.Generator, resolution: int) -> tuple:
    """One ImageNet-normalised (1, 3, R, R) image, as torchvision's preprocessing produces."""
    return (_data.imagenet_normalize(_data.natural_images(g, 1, 3, resolution, resolution)),)


def build(resolution: int = 224) -> _common.ModelBundle:
    return _common.build(MobileNetV2, init_torchvision_, partial(imagenet_sample, resolution=resolution),
                         bn_samples=16, bn_batch=8)
