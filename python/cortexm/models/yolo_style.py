"""A small YOLOv8-style detector at 160x160 (not a published checkpoint; the blocks follow
ultralytics' YOLOv8 definitions).

Backbone: Conv(3x3, s2) blocks (Conv2d without bias + BN(eps=1e-3, momentum=0.03) + SiLU) and C2f
blocks (1x1 conv, chunk into two halves, a chain of bottlenecks on the second half, concat of all
branches, 1x1 conv), SPPF (1x1 conv, three chained MaxPool2d(5, 1, 2), concat, 1x1 conv).
Neck: PAN-FPN with nearest x2 upsampling + concat going down, stride-2 convs + concat going up.
Head: at strides 8, 16 and 32 (20x20, 10x10, 5x5 for a 160x160 input) two 3x3 Conv blocks + a 1x1
Conv2d for the box distribution (4 x reg_max = 64 channels) and the same for the class logits,
concatenated: each output is (1, 64 + num_classes, H, W). DFL decoding / NMS are left out (they are
post-processing, not network layers).

Input (1, 3, 160, 160) in [0, 1] (ultralytics divides by 255, no mean/std).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from . import _common, _data

NUM_CLASSES = 20
REG_MAX = 16
RESOLUTION = 160
STRIDES = (8, 16, 32)
WIDTHS = (16, 32, 64, 128, 192)  # P1..P5 channels
DEPTHS = (1, 2, 2, 1)  # bottlenecks in the backbone C2f blocks at P2..P5


class Conv(nn.Module):
    """Conv2d(bias=False) + BN + SiLU (ultralytics Conv)."""

    def __init__(self, c1: int, c2: int, k: int = 1, s: int = 1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2, eps=1e-3, momentum=0.03)
        self.act = nn.SiLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c: int, shortcut: bool):
        super().__init__()
        self.cv1 = Conv(c, c, 3)
        self.cv2 = Conv(c, c, 3)
        self.add = shortcut

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C2f(nn.Module):
    """CSP bottleneck with 2 convolutions: split in halves, n bottlenecks, concat everything."""

    def __init__(self, c1: int, c2: int, n: int = 1, shortcut: bool = False):
        super().__init__()
        self.c = c2 // 2
        self.cv1 = Conv(c1, 2 * self.c, 1)
        self.cv2 = Conv((2 + n) * self.c, c2, 1)
        self.m = nn.ModuleList(Bottleneck(self.c, shortcut) for _ in range(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = list(self.cv1(x).chunk(2, 1))
        for m in self.m:
            y.append(m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class SPPF(nn.Module):
    def __init__(self, c1: int, c2: int, k: int = 5):
        super().__init__()
        c_ = c1 // 2
        self.cv1 = Conv(c1, c_, 1)
        self.cv2 = Conv(4 * c_, c2, 1)
        self.m = nn.MaxPool2d(kernel_size=k, stride=1, padding=k // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = [self.cv1(x)]
        for _ in range(3):
            y.append(self.m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class Detect(nn.Module):
    """Decoupled head: per scale, box branch (4 * reg_max) and class branch (nc), concatenated."""

    def __init__(self, nc: int, channels: tuple[int, ...], reg_max: int = REG_MAX):
        super().__init__()
        self.nc, self.reg_max = nc, reg_max
        c2 = max(16, channels[0] // 4, 4 * reg_max)
        c3 = max(channels[0], min(nc, 100))
        self.cv2 = nn.ModuleList(nn.Sequential(Conv(x, c2, 3), Conv(c2, c2, 3), nn.Conv2d(c2, 4 * reg_max, 1))
                                 for x in channels)
        self.cv3 = nn.ModuleList(nn.Sequential(Conv(x, c3, 3), Conv(c3, c3, 3), nn.Conv2d(c3, nc, 1))
                                 for x in channels)

    def forward(self, feats: list[torch.Tensor]) -> tuple[torch.Tensor, ...]:
        return tuple(torch.cat((box(x), cls(x)), 1) for x, box, cls in zip(feats, self.cv2, self.cv3))


class YoloStyle(nn.Module):
    def __init__(self, nc: int = NUM_CLASSES, widths=WIDTHS, depths=DEPTHS):
        super().__init__()
        w1, w2, w3, w4, w5 = widths
        self.stem = Conv(3, w1, 3, 2)  # P1/2
        self.down2, self.c2f2 = Conv(w1, w2, 3, 2), C2f(w2, w2, depths[0], True)  # P2/4
        self.down3, self.c2f3 = Conv(w2, w3, 3, 2), C2f(w3, w3, depths[1], True)  # P3/8
        self.down4, self.c2f4 = Conv(w3, w4, 3, 2), C2f(w4, w4, depths[2], True)  # P4/16
        self.down5, self.c2f5 = Conv(w4, w5, 3, 2), C2f(w5, w5, depths[3], True)  # P5/32
        self.sppf = SPPF(w5, w5, 5)
        self.upsample = nn.Upsample(scale_factor=2.0, mode="nearest")
        self.top_down4 = C2f(w5 + w4, w4, 1)
        self.top_down3 = C2f(w4 + w3, w3, 1)  # P3 out
        self.bottom_up4_conv, self.bottom_up4 = Conv(w3, w3, 3, 2), C2f(w3 + w4, w4, 1)  # P4 out
        self.bottom_up5_conv, self.bottom_up5 = Conv(w4, w4, 3, 2), C2f(w4 + w5, w5, 1)  # P5 out
        self.detect = Detect(nc, (w3, w4, w5))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        x = self.c2f2(self.down2(self.stem(x)))
        p3 = self.c2f3(self.down3(x))
        p4 = self.c2f4(self.down4(p3))
        p5 = self.sppf(self.c2f5(self.down5(p4)))
        t4 = self.top_down4(torch.cat((self.upsample(p5), p4), 1))
        n3 = self.top_down3(torch.cat((self.upsample(t4), p3), 1))
        n4 = self.bottom_up4(torch.cat((self.bottom_up4_conv(n3), t4), 1))
        n5 = self.bottom_up5(torch.cat((self.bottom_up5_conv(n4), p5), 1))
        return self.detect([n3, n4, n5])


def _init(model: nn.Module, g: torch.Generator) -> None:
    """PyTorch default conv init (as ultralytics), randomised BN affine, and ultralytics' Detect
    bias prior: box logits 1.0, class logits log(5 / nc / (640 / stride)^2)."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            _common.torch_default_(m, g)
    _common.randomize_batchnorm_affine(model, g)
    det = model.detect
    for box, cls, s in zip(det.cv2, det.cv3, STRIDES):
        box[-1].bias.fill_(1.0)
        cls[-1].bias.fill_(math.log(5 / det.nc / (640 / s) ** 2))


def _sample(g: torch.Generator) -> tuple:
    return (_data.natural_images(g, 1, 3, RESOLUTION, RESOLUTION),)


def build() -> _common.ModelBundle:
    return _common.build(YoloStyle, _init, _sample, bn_samples=16, bn_batch=8)
