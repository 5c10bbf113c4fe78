"""Wav2Letter (Collobert et al. 2016) as torchaudio.models.Wav2Letter(num_classes=4096,
input_type="waveform", num_features=1): a waveform front end Conv1d(1, 250, 250, stride 160,
padding 45) + ReLU, then the acoustic model Conv1d(250, 250, 48, stride 2, padding 23), 7 x
Conv1d(250, 250, 7, padding 3), Conv1d(250, 2000, 32, padding 16), Conv1d(2000, 2000, 1),
Conv1d(2000, 4096, 1), each followed by ReLU (the last one too, as in torchaudio), and
log_softmax over the class dim: 12 Conv1d + ReLU in all (torchaudio's 11-layer acoustic model plus
the waveform front end). Input (10, 1, 700) -> output (10, 4096, 3).

At 700 samples the time axis is only 4 frames after the front end (2 after the stride-2 conv, 3
after the k=32 conv), so most taps of the k=48/7/32 convs read zero padding and activations shrink
through the stack; the log-probabilities stay close to uniform (-log 4096) with random weights.

Module names match torchaudio's (``acoustic_model.0.0`` is the waveform conv, ``acoustic_model.1.*``
the acoustic stack). Weights: He-normal (fan_in) instead of PyTorch's default kaiming_uniform(a=√5),
which shrinks activations ~2.4x per layer and leaves eleven ReLU layers with a near-constant output;
biases are PyTorch's default uniform.
"""

from __future__ import annotations

import torch
from torch import nn

from . import _common, _data

NUM_CLASSES = 4096
BATCH, LENGTH = 10, 700


class Wav2Letter(nn.Module):
    def __init__(self, num_classes: int = NUM_CLASSES, input_type: str = "waveform", num_features: int = 1):
        super().__init__()
        acoustic_num_features = 250 if input_type == "waveform" else num_features
        layers: list[nn.Module] = [nn.Conv1d(acoustic_num_features, 250, 48, stride=2, padding=23), nn.ReLU(inplace=True)]
        for _ in range(7):
            layers += [nn.Conv1d(250, 250, 7, stride=1, padding=3), nn.ReLU(inplace=True)]
        layers += [
            nn.Conv1d(250, 2000, 32, stride=1, padding=16), nn.ReLU(inplace=True),
            nn.Conv1d(2000, 2000, 1, stride=1, padding=0), nn.ReLU(inplace=True),
            nn.Conv1d(2000, num_classes, 1, stride=1, padding=0), nn.ReLU(inplace=True),
        ]
        acoustic_model = nn.Sequential(*layers)
        if input_type == "waveform":
            waveform_model = nn.Sequential(
                nn.Conv1d(num_features, 250, kernel_size=250, stride=160, padding=45), nn.ReLU(inplace=True))
            self.acoustic_model = nn.Sequential(waveform_model, acoustic_model)
        elif input_type in ("power_spectrum", "mfcc"):
            self.acoustic_model = acoustic_model
        else:
            raise ValueError(f"input_type must be waveform, power_spectrum or mfcc, got {input_type!r}")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.acoustic_model(x)
        return nn.functional.log_softmax(x, dim=1)


def _init(model: nn.Module, g: torch.Generator) -> None:
    for m in model.modules():
        if isinstance(m, nn.Conv1d):
            nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu", generator=g)
            _common.default_bias_(m.bias, m.weight, g)


def _sample(g: torch.Generator) -> tuple:
    return (torch.stack([_data.audio_clip(g, LENGTH) for _ in range(BATCH)]).unsqueeze(1),)


def build() -> _common.ModelBundle:
    return _common.build(Wav2Letter, _init, _sample)
