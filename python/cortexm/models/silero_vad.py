"""Silero VAD (v5 architecture, as shipped in the silero-vad package) 16 kHz branch, written as an
eager module and loaded with the REAL weights from the package's TorchScript file.

forward(x, state) -> (prob, new_state), one streaming step, exactly the JIT model's
``_model.forward`` (the 16 kHz ``VADRNNJIT``):
  x (B, 576) = 64 samples of context (the previous chunk's tail) + 512 new samples at 16 kHz
  state (2, B, 128) = LSTM (h, c) from the previous step (zeros at stream start)
  ReflectionPad1d((0, 64)) on x, unsqueeze(1)                      -> (B, 1, 640)
  STFT as Conv1d(1, 258, 256, stride 128, no bias) [forward_basis_buffer] -> (B, 258, 4)
  magnitude sqrt(real^2 + imag^2) of channels [:129] and [129:]   -> (B, 129, 4)
  encoder: Conv1d 129->128 (k3,p1), 128->64 (k3,s2,p1), 64->64 (k3,s2,p1), 64->128 (k3,p1), ReLU each -> (B, 128, 1)
  squeeze(-1); LSTMCell(128, 128) on (state[0], state[1]); new_state = stack([h, c])
  decoder: Dropout(0.1) (identity in eval), ReLU, Conv1d(128, 1, 1), Sigmoid on h.unsqueeze(-1)
  squeeze(1), mean over time (one step), unsqueeze(1)                -> prob (B, 1)

Differences from the JIT wrapper (``VADRNNJITMerge.forward(chunk, sr)``), all outside the network:
that wrapper keeps ``_context`` (last 64 samples of the previous 576-sample input, zeros at start)
and ``_state`` (empty at start == zeros) as hidden attributes, validates/resamples its input and
dispatches on the sample rate; here context and state are explicit inputs and outputs (see
``stream``). The STFT phase that the JIT computes and discards is not computed. The reflect pad is
applied before the unsqueeze, as in the JIT.
"""

from __future__ import annotations

import copy
import importlib.util
import shutil
import subprocess
import tempfile
import warnings
import wave
from pathlib import Path

import numpy as np

import torch
from torch import nn

from . import _common, _data

SAMPLE_RATE = 16000
CHUNK = 512
CONTEXT = 64
HIDDEN = 128
STATE_FEEDBACK = {1: 1}  # output 1, the new LSTM state, is input 1 at the next chunk
PIP_COMMAND = ".venv/bin/python -m pip install --no-deps silero-vad"


class STFT(nn.Module):
    """Silero's learned-basis STFT magnitude: reflect pad, Conv1d with the Fourier basis, |.|."""

    def __init__(self, filter_length: int = 256, hop_length: int = 128, pad: int = CONTEXT):
        super().__init__()
        self.cutoff = filter_length // 2 + 1
        self.padding = nn.ReflectionPad1d((0, pad))
        self.conv = nn.Conv1d(1, 2 * self.cutoff, filter_length, stride=hop_length, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.padding(x).unsqueeze(1)
        x = self.conv(x)
        real, imag = x[:, :self.cutoff, :], x[:, self.cutoff:, :]
        return torch.sqrt(real * real + imag * imag)


class SileroVadBlock(nn.Module):
    def __init__(self, in_ch: int, out_ch: int, stride: int):
        super().__init__()
        self.reparam_conv = nn.Conv1d(in_ch, out_ch, 3, stride=stride, padding=1)
        self.activation = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.activation(self.reparam_conv(x))


class Decoder(nn.Module):
    def __init__(self, hidden: int = HIDDEN):
        super().__init__()
        self.rnn = nn.LSTMCell(hidden, hidden)
        self.decoder = nn.Sequential(nn.Dropout(0.1), nn.ReLU(), nn.Conv1d(hidden, 1, 1), nn.Sigmoid())

    def forward(self, x: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = x.squeeze(-1)
        h, c = self.rnn(x, (state[0], state[1]))
        new_state = torch.stack([h, c])
        return self.decoder(h.unsqueeze(-1)), new_state


class SileroVAD16k(nn.Module):
    def __init__(self):
        super().__init__()
        self.stft = STFT()
        self.encoder = nn.Sequential(
            SileroVadBlock(129, 128, 1), SileroVadBlock(128, 64, 2),
            SileroVadBlock(64, 64, 2), SileroVadBlock(64, 128, 1))
        self.decoder = Decoder()

    def forward(self, x: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.encoder(self.stft(x))
        x, new_state = self.decoder(x, state)
        out = torch.mean(x.squeeze(1), dim=1).unsqueeze(1)
        return out, new_state


# --------------------------------------------------------------------------------------------
# Real weights from the silero-vad package


def jit_path() -> Path:
    """The TorchScript file shipped in the installed silero-vad package (found without importing it)."""
    spec = importlib.util.find_spec("silero_vad")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"silero_vad needs the silero-vad package for its real weights: {PIP_COMMAND}")
    for root in spec.submodule_search_locations:
        path = Path(root) / "data" / "silero_vad.jit"
        if path.is_file():
            return path
    raise RuntimeError(f"silero-vad is installed but data/silero_vad.jit was not found in "
                       f"{list(spec.submodule_search_locations)}; reinstall it: {PIP_COMMAND}")


def load_jit() -> torch.jit.ScriptModule:
    """The package's TorchScript model (both sample rates, stateful wrapper), on CPU, eval mode."""
    path = jit_path()
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*torch\.jit\.load.*", category=DeprecationWarning)
            model = torch.jit.load(str(path), map_location="cpu")
    except Exception as exc:  # corrupt file, incompatible TorchScript version, ...
        raise RuntimeError(f"could not load {path} ({exc}); reinstall silero-vad: {PIP_COMMAND}") from exc
    model.eval()
    return model


def jit_state_dict_16k(jit_model: torch.jit.ScriptModule) -> dict[str, torch.Tensor]:
    """The 16 kHz branch's tensors renamed to this module's names."""
    out = {}
    for key, value in jit_model.state_dict().items():
        if not key.startswith("_model."):
            continue  # the 8 kHz branch (_model_8k.*)
        name = key[len("_model."):]
        if name == "stft.forward_basis_buffer":
            name = "stft.conv.weight"
        out[name] = value.detach().clone()
    return out


def load_pretrained() -> SileroVAD16k:
    with torch.random.fork_rng(devices=[]):  # the constructors' throw-away init must not touch the global RNG
        model = SileroVAD16k()
    model.load_state_dict(jit_state_dict_16k(load_jit()), strict=True)
    return model.eval()


# --------------------------------------------------------------------------------------------
# Streaming and calibration


def initial_state(batch: int = 1) -> torch.Tensor:
    return torch.zeros(2, batch, HIDDEN)


@torch.no_grad()
def stream(model: nn.Module, audio: torch.Tensor, state: torch.Tensor | None = None,
           context: torch.Tensor | None = None):
    """Run ``model`` over a (L,) or (B, L) 16 kHz waveform in 512-sample chunks the way the JIT
    wrapper does (a trailing partial chunk is dropped). Returns (probs (B, n_chunks), state, context)."""
    audio = audio.unsqueeze(0) if audio.dim() == 1 else audio
    b = audio.shape[0]
    state = initial_state(b) if state is None else state
    context = torch.zeros(b, CONTEXT) if context is None else context
    probs = []
    for i in range(audio.shape[1] // CHUNK):
        x = torch.cat([context, audio[:, i * CHUNK:(i + 1) * CHUNK]], dim=1)
        p, state = model(x, state)
        probs.append(p)
        context = x[:, -CONTEXT:]
    probs_t = torch.cat(probs, dim=1) if probs else torch.zeros(b, 0)
    return probs_t, state, context


def stream_graph(graph, audio: np.ndarray) -> np.ndarray:
    """``stream`` for a cortexm graph (float, quantized or lowered) of this model: (L,) audio in
    512-sample chunks, the graph's own new state fed back. Returns the (n_chunks,) probabilities."""
    state = np.zeros((2, 1, HIDDEN), np.float32)
    context = np.zeros((1, CONTEXT), np.float32)
    probs = []
    for i in range(len(audio) // CHUNK):
        x = np.concatenate([context, np.asarray(audio[None, i * CHUNK:(i + 1) * CHUNK], np.float32)], axis=1)
        p, state = graph.run(x, state)
        probs.append(float(np.asarray(p).reshape(-1)[0]))
        state = np.asarray(state, np.float32)
        context = x[:, -CONTEXT:]
    return np.array(probs)


SPEECH_TEXT = ("The quick brown fox jumps over the lazy dog. "
               "Voice activity detection should find this sentence.")


def espeak_speech(text: str = SPEECH_TEXT) -> np.ndarray:
    """Real synthesized speech: espeak-ng, resampled to 16 kHz 16-bit mono by sox, leading and
    trailing silence trimmed, peak 0.5; the same samples on every call (sox -R seeds its dither:
    unseeded, one-LSB differences moved a quantized stream's max |p - p_float| by 0.002).
    RuntimeError when the tools are missing."""
    missing = [tool for tool in ("espeak-ng", "sox") if shutil.which(tool) is None]
    if missing:
        raise RuntimeError(f"{' and '.join(missing)} not on PATH (apt-get install espeak-ng sox)")
    with tempfile.TemporaryDirectory() as d:
        raw, wav16 = Path(d) / "espeak.wav", Path(d) / "speech16k.wav"
        subprocess.run(["espeak-ng", "-w", str(raw), text], check=True, capture_output=True)
        subprocess.run(["sox", "-R", str(raw), "-r", str(SAMPLE_RATE), "-c", "1", "-b", "16", str(wav16)],
                       check=True, capture_output=True)
        with wave.open(str(wav16)) as w:
            if (w.getframerate(), w.getnchannels(), w.getsampwidth()) != (SAMPLE_RATE, 1, 2):
                raise RuntimeError(f"sox wrote {w.getframerate()} Hz, {w.getnchannels()} channels, "
                                   f"{8 * w.getsampwidth()} bits")
            speech = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768
    voiced = np.nonzero(np.abs(speech) > 0.02)[0]
    if len(voiced) == 0:
        raise RuntimeError("espeak-ng produced no audible speech")
    speech = speech[voiced[0]:voiced[-1] + 1]
    return speech / np.abs(speech).max() * 0.5


def speech_in_noise(speech: np.ndarray, noise_std: float = 0.01, seed: int = 0) -> tuple[np.ndarray, float, float]:
    """1 s digital silence, 1.5 s white noise, the speech in that noise, 1.5 s noise: the clip
    and the speech's start and end in seconds."""
    rng = np.random.default_rng(seed)
    silence = np.zeros(SAMPLE_RATE, np.float32)
    before = rng.standard_normal(int(1.5 * SAMPLE_RATE)).astype(np.float32) * noise_std
    noisy = speech + rng.standard_normal(len(speech)).astype(np.float32) * noise_std
    after = rng.standard_normal(int(1.5 * SAMPLE_RATE)).astype(np.float32) * noise_std
    start = (len(silence) + len(before)) / SAMPLE_RATE
    return np.concatenate([silence, before, noisy, after]), start, start + len(speech) / SAMPLE_RATE


def _sampler(runner: nn.Module):
    def sample(g: torch.Generator) -> tuple:
        """One streaming step's inputs: a chunk of synthetic audio after 0-7 earlier chunks of the
        same stream (the earlier part possibly of another kind: onsets/offsets), with the context
        and LSTM state those earlier chunks produced."""
        before = int(torch.randint(0, 8, (), generator=g))
        split = int(torch.randint(0, before + 1, (), generator=g))
        lengths = [n * CHUNK for n in (split, before + 1 - split) if n > 0]
        audio = torch.cat([_data.audio_clip(g, n) for n in lengths])
        _, state, context = stream(runner, audio[: before * CHUNK])
        return torch.cat([context, audio[before * CHUNK:].unsqueeze(0)], dim=1), state

    return sample


def build() -> _common.ModelBundle:
    model = load_pretrained()
    runner = copy.deepcopy(model)  # calibration keeps working if the returned model is mutated
    return _common.finish(model, _sampler(runner))
