"""Ten kinds of model written as a user would (not from the zoo), each exported, quantized int8,
lowered and planned with no float op, and run on QEMU's Cortex-M55 bit-exact with the host."""
import shutil

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import cortexm

QEMU_TOOLS = ("qemu-system-arm", "arm-none-eabi-g++", "cmake", "ninja")


class CRNN(nn.Module):
    """Conv front end over a spectrogram, a GRU over time, a classifier on the last step."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d((2, 1)))
        self.gru = nn.GRU(8 * 5, 16, batch_first=True)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):  # [1, 1, 10, 12]: 10 bins, 12 frames
        y = self.conv(x)  # [1, 8, 5, 12]
        y = y.flatten(1, 2).transpose(1, 2)  # [1, 12, 40]
        out, _ = self.gru(y)
        return self.fc(out[:, -1])


class TCN(nn.Module):
    """Dilated causal 1-D convolutions (left padding) with residuals."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Conv1d(8, 8, 3, dilation=d) for d in (1, 2, 4))
        self.inp, self.out = nn.Conv1d(4, 8, 1), nn.Conv1d(8, 2, 1)

    def forward(self, x):  # [1, 4, 32]
        y = self.inp(x)
        for conv in self.blocks:
            y = y + F.relu(conv(F.pad(y, (2 * conv.dilation[0], 0))))
        return self.out(y)


class UNet(nn.Module):
    """Two levels: max pool down, nearest upsampling up, a skip by concatenation."""

    def __init__(self):
        super().__init__()
        self.down1, self.down2 = nn.Conv2d(1, 8, 3, padding=1), nn.Conv2d(8, 16, 3, padding=1)
        self.up = nn.Conv2d(16 + 8, 8, 3, padding=1)
        self.head = nn.Conv2d(8, 1, 1)

    def forward(self, x):  # [1, 1, 16, 16]
        d1 = F.relu(self.down1(x))
        d2 = F.relu(self.down2(F.max_pool2d(d1, 2)))
        u = F.interpolate(d2, scale_factor=2, mode="nearest")
        return self.head(F.relu(self.up(torch.cat([u, d1], 1))))


class MBConv(nn.Module):
    """An inverted residual with squeeze-and-excitation (EfficientNet's block)."""

    def __init__(self, c=8, expand=4):
        super().__init__()
        e = c * expand
        self.expand = nn.Sequential(nn.Conv2d(c, e, 1), nn.BatchNorm2d(e), nn.SiLU())
        self.dw = nn.Sequential(nn.Conv2d(e, e, 3, padding=1, groups=e), nn.BatchNorm2d(e), nn.SiLU())
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(e, 8, 1), nn.SiLU(), nn.Conv2d(8, e, 1), nn.Sigmoid())
        self.project = nn.Sequential(nn.Conv2d(e, c, 1), nn.BatchNorm2d(c))

    def forward(self, x):  # [1, 8, 12, 12]
        y = self.dw(self.expand(x))
        return x + self.project(y * self.se(y))


class KeywordTransformer(nn.Module):
    """Frames embedded, a learned class token before them, a position embedding, one encoder
    layer, the class token's output classified."""

    def __init__(self, frames=10, features=12, d=16):
        super().__init__()
        self.embed = nn.Linear(features, d)
        self.token = nn.Parameter(torch.randn(1, 1, d))
        self.position = nn.Parameter(torch.randn(1, frames + 1, d) * 0.1)
        self.encoder = nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True)
        self.head = nn.Linear(d, 5)

    def forward(self, x):  # [1, 10, 12]
        y = torch.cat([self.token.expand(x.shape[0], -1, -1), self.embed(x)], 1) + self.position
        return self.head(self.encoder(y)[:, 0])


class ConvTransposeAutoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                 nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.dec = nn.Sequential(nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                 nn.ConvTranspose2d(8, 1, 4, stride=2, padding=1))

    def forward(self, x):  # [1, 1, 16, 16]
        return self.dec(self.enc(x))


class MLPAnomaly(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 8), nn.ReLU(),
                                 nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 64))

    def forward(self, x):  # [1, 64]
        return self.net(x)


class PatchAttention(nn.Module):
    """MobileViT's idea: local conv, then attention across the 2x2 patches' pixels, folded back."""

    def __init__(self, c=8):
        super().__init__()
        self.local = nn.Conv2d(3, c, 3, padding=1)
        self.attn = nn.MultiheadAttention(c, 2, batch_first=True)
        self.norm = nn.LayerNorm(c)
        self.fuse = nn.Conv2d(2 * c, c, 1)

    def forward(self, x):  # [1, 3, 8, 8]
        y = F.relu(self.local(x))
        b, c, h, w = y.shape
        t = y.reshape(b, c, h // 2, 2, w // 2, 2).permute(0, 3, 5, 2, 4, 1).reshape(b * 4, (h // 2) * (w // 2), c)
        t = t + self.attn(self.norm(t), self.norm(t), self.norm(t), need_weights=False)[0]
        z = t.reshape(b, 2, 2, h // 2, w // 2, c).permute(0, 5, 3, 1, 4, 2).reshape(b, c, h, w)
        return self.fuse(torch.cat([y, z], 1))


class NormDenoiser(nn.Module):
    """GroupNorm and InstanceNorm between convolutions (a denoiser's building blocks)."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Conv2d(1, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1)
        self.c = nn.Conv2d(8, 1, 3, padding=1)
        self.gn, self.inorm = nn.GroupNorm(2, 8), nn.InstanceNorm2d(8, affine=True)

    def forward(self, x):  # [1, 1, 12, 12]
        y = F.relu(self.gn(self.a(x)))
        return x - self.c(F.relu(self.inorm(self.b(y))))


class StreamingGRUCell(nn.Module):
    """One step of a stream: state in, state out."""

    def __init__(self):
        super().__init__()
        self.cell, self.head = nn.GRUCell(10, 16), nn.Linear(16, 3)

    def forward(self, x, h):  # [1, 10], [1, 16]
        h = self.cell(x, h)
        return self.head(h), h


MODELS = {
    "crnn_gru": (CRNN, [(1, 1, 10, 12)]),
    "dilated_causal_tcn": (TCN, [(1, 4, 32)]),
    "unet_nearest_skips": (UNet, [(1, 1, 16, 16)]),
    "mbconv_se": (MBConv, [(1, 8, 12, 12)]),
    "keyword_transformer": (KeywordTransformer, [(1, 10, 12)]),
    "conv_transpose_autoencoder": (ConvTransposeAutoencoder, [(1, 1, 16, 16)]),
    "mlp_anomaly": (MLPAnomaly, [(1, 64)]),
    "patch_attention": (PatchAttention, [(1, 3, 8, 8)]),
    "group_norm_denoiser": (NormDenoiser, [(1, 1, 12, 12)]),
    "streaming_gru_cell": (StreamingGRUCell, [(1, 10), (1, 16)]),
}


def _batchnorm_statistics(model):
    """Running statistics a trained model would have, so BatchNorm folds into something nontrivial."""
    g = torch.Generator().manual_seed(5)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)


def _samples(shapes, n, seed):
    g = torch.Generator().manual_seed(seed)
    return [tuple(torch.randn(*s, generator=g) for s in shapes) for _ in range(n)]


@pytest.fixture(scope="module", params=sorted(MODELS))
def deployed(request):
    torch.manual_seed(0)
    cls, shapes = MODELS[request.param]
    model = cls().eval()
    _batchnorm_statistics(model)
    graph = cortexm.export(model, _samples(shapes, 1, 0)[0])
    qgraph = cortexm.quantize(graph, _samples(shapes, 32, 1), progress=False)
    program = cortexm.to_program(cortexm.lower(qgraph, "cortex-m55+int8"))
    return request.param, qgraph, program, shapes


def test_deploys_fully_int8(deployed):
    name, qgraph, program, _ = deployed
    report = cortexm.quantization_report(qgraph)
    assert program.float_ops == 0 and not report.float, f"{name}: {[r.node for r in report.float]}"


@pytest.mark.skipif(not all(shutil.which(t) for t in QEMU_TOOLS), reason="needs qemu-system-arm and the Arm toolchain")
def test_bit_exact_on_qemu_m55(deployed):
    name, _, program, shapes = deployed
    inputs = [x.numpy() for x in _samples(shapes, 1, 2)[0]]
    host = program.run(*inputs)
    core = cortexm.run_on_qemu(program, inputs, cpu="cortex-m55")
    for want, got in zip(host if isinstance(host, tuple) else (host,), core if isinstance(core, tuple) else (core,)):
        np.testing.assert_array_equal(got, want, err_msg=name)
