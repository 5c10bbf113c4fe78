"""MLPerf Tiny anomaly detection reference model: the DCASE 2020 task 2 fully-connected autoencoder,
ported from mlcommons/tiny benchmark/training/anomaly_detection/keras_model.py.

Input (1, 640): 5 consecutive frames of 128 log-mel energies (dB), frame-major. Dense(128) x 4,
Dense(8), Dense(128) x 4, each followed by BN(eps=1e-3) + ReLU, then Dense(640) (linear output, the
reconstruction). Output (1, 640).
"""

from __future__ import annotations

import torch
from torch import nn

from . import _common, _data

N_MELS, FRAMES = 128, 5
INPUT_DIM = N_MELS * FRAMES
HIDDEN = [128, 128, 128, 128, 8, 128, 128, 128, 128]


class DeepAutoencoder(nn.Module):
    def __init__(self, input_dim: int = INPUT_DIM, hidden=tuple(HIDDEN)):
        super().__init__()
        layers: list[nn.Module] = []
        prev = input_dim
        for width in hidden:
            layers += [nn.Linear(prev, width), nn.BatchNorm1d(width, eps=1e-3, momentum=0.01), nn.ReLU()]
            prev = width
        layers.append(nn.Linear(prev, input_dim))
        self.layers = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


def _init(model: nn.Module, g: torch.Generator) -> None:
    _common.keras_init_(model, g, _common.keras_glorot_uniform_, _common.keras_glorot_uniform_)


def _sample(g: torch.Generator) -> tuple:
    """5 random consecutive log-mel frames of 0.25 s of synthetic machine-like audio."""
    audio = _data.audio_clip(g, 4000, mix=_data.MACHINE_AUDIO_MIX)
    log_mel = _data.dcase_log_mel(audio)  # (8, 128)
    start = int(torch.randint(0, log_mel.shape[0] - FRAMES + 1, (), generator=g))
    return (log_mel[start:start + FRAMES].reshape(1, INPUT_DIM),)


def build() -> _common.ModelBundle:
    return _common.build(DeepAutoencoder, _init, _sample, bn_samples=256, bn_batch=64)
