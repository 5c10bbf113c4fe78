"""Spoken-digit keyword spotting: the DS-CNN of ``ds_cnn`` with ten classes ("zero" ... "nine"),
trained by scripts/train_kws_digits.py on words espeak-ng synthesizes (many voices, speeds,
pitches, positions and noise levels); its float weights ship with the package (kws_digits.npz).

Input (1, 1, 49, 10): the MLPerf Tiny KWS MFCCs of one second of 16 kHz audio (``features``, in
numpy). Output (1, 10) probabilities in the order of ``WORDS``. ``speak`` synthesizes a word
with espeak-ng (installed by the project's set-up; ``apt-get install espeak-ng``).

The calibration inputs are features of held-in training words shipped with the weights, so
quantizing this model needs neither espeak-ng nor the training data.
"""

from __future__ import annotations

import io
import math
import shutil
import subprocess
import wave
from pathlib import Path

import numpy as np
import torch

from . import _common
from .ds_cnn import DSCNN, INPUT_HW

WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
SAMPLE_RATE = 16000
SPEEDS = (80, 450)  # the words per minute espeak-ng speaks (its documented range)
WEIGHTS = Path(__file__).with_name("kws_digits.npz")

# espeak-ng's English accents ("en" is British English); a voice is an accent plus a variant
# (``en-us+f3``). "en-gb" is left out: it ignores variants.
ACCENTS = ("en", "en-us", "en-gb-scotland", "en-gb-x-gbclan", "en-gb-x-rp", "en-gb-x-gbcwmd",
           "en-029", "en-us-nyc")


def _espeak() -> str:
    path = shutil.which("espeak-ng")
    if path is None:
        raise RuntimeError("speech synthesis needs espeak-ng: apt-get install espeak-ng")
    return path


def variants() -> list[str]:
    """espeak-ng's voice variants (``m3``, ``f2``, ``croak``, ...), sorted."""
    out = subprocess.run([_espeak(), "--voices=variant"], check=True, capture_output=True, text=True).stdout
    files = [line.split()[4] for line in out.splitlines()[1:] if len(line.split()) >= 5]
    return sorted({f.split("/")[-1] for f in files if f.startswith("!v/")})


def _resample(audio: np.ndarray, rate: int, new_rate: int) -> np.ndarray:
    """Band-limited resampling through the spectrum (the clip is short: one FFT is cheap)."""
    if rate == new_rate:
        return audio
    n_new = int(round(len(audio) * new_rate / rate))
    spectrum = np.fft.rfft(audio)
    keep = min(len(spectrum), n_new // 2 + 1)
    out = np.fft.irfft(spectrum[:keep], n=n_new) * (n_new / len(audio))
    return out.astype(np.float32)


def speak(text: str, voice: str = "en-us", speed: int = 150, pitch: int = 50) -> np.ndarray:
    """``text`` spoken by espeak-ng's ``voice`` at ``speed`` words per minute (SPEEDS) and ``pitch``
    (0-99): float32 samples in [-1, 1) at 16 kHz. ValueError for a speed or pitch out of range or a
    voice espeak-ng does not have."""
    if not SPEEDS[0] <= speed <= SPEEDS[1]:
        raise ValueError(f"speed {speed!r}: espeak-ng speaks {SPEEDS[0]} to {SPEEDS[1]} words per minute")
    if not 0 <= pitch <= 99:
        raise ValueError(f"pitch {pitch!r}: espeak-ng's pitch is 0 to 99")
    done = subprocess.run([_espeak(), "-v", voice, "-s", str(int(speed)), "-p", str(int(pitch)), "--stdout",
                           text], capture_output=True)
    if done.returncode != 0 or len(done.stdout) <= 44:  # a WAV header and no sound
        said = done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}, no sound"
        raise ValueError(f"espeak-ng cannot say {text!r} with voice {voice!r} ({said}); `espeak-ng --voices` "
                         f"lists the voices, `espeak-ng --voices=variant` the variants")
    wav = done.stdout
    with wave.open(io.BytesIO(wav)) as w:
        if w.getsampwidth() != 2 or w.getnchannels() != 1:
            raise RuntimeError(f"espeak-ng wrote {w.getnchannels()} channels of {8 * w.getsampwidth()}-bit samples")
        rate = w.getframerate()
        # espeak-ng writes a streaming header (frame count 0xffffffff): read what is there.
        data = wav[44:] if w.getnframes() >= 0x7FFFFFFF else w.readframes(w.getnframes())
    audio = np.frombuffer(data[: len(data) // 2 * 2], dtype="<i2").astype(np.float32) / 32768.0
    return _resample(audio, rate, SAMPLE_RATE)


def trim(audio: np.ndarray, threshold: float = 0.01) -> np.ndarray:
    """audio without its leading and trailing near-silence."""
    loud = np.flatnonzero(np.abs(audio) > threshold)
    return audio[loud[0]:loud[-1] + 1] if len(loud) else audio[:0]


def one_second(audio: np.ndarray, offset: int | None = None) -> np.ndarray:
    """A 1 s clip holding ``audio`` (trimmed) starting at ``offset`` samples (None: centred); a
    word longer than a second keeps its middle second."""
    word = trim(audio)
    if len(word) >= SAMPLE_RATE:
        start = (len(word) - SAMPLE_RATE) // 2
        return word[start:start + SAMPLE_RATE].astype(np.float32)
    room = SAMPLE_RATE - len(word)
    offset = room // 2 if offset is None else min(max(int(offset), 0), room)
    clip = np.zeros(SAMPLE_RATE, dtype=np.float32)
    clip[offset:offset + len(word)] = word
    return clip


def _mel_filterbank(n_fft: int, sr: int, n_mels: int, fmin: float, fmax: float) -> np.ndarray:
    """(n_mels, n_fft // 2 + 1) HTK-scale triangular filters, unnormalised."""
    def hz_to_mel(hz):
        return 2595.0 * np.log10(1.0 + np.asarray(hz, dtype=np.float64) / 700.0)

    freqs = np.linspace(0, sr / 2, n_fft // 2 + 1)
    hz = 700.0 * (10.0 ** (np.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n_mels + 2) / 2595.0) - 1.0)
    lo, mid, hi = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    return np.maximum(np.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)), 0.0)


_WIN, _HOP, _N_FFT, _N_MELS, _N_MFCC = 480, 320, 512, 40, 10
_WINDOW = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(_WIN) / _WIN)  # periodic Hann
_MEL = _mel_filterbank(_N_FFT, SAMPLE_RATE, _N_MELS, 20.0, 4000.0)
_DCT = (np.cos(math.pi * np.arange(_N_MFCC)[:, None] * (2 * np.arange(_N_MELS) + 1) / (2 * _N_MELS))
        * math.sqrt(2.0 / _N_MELS))


def features(clip: np.ndarray) -> np.ndarray:
    """The model's input for a 1 s, 16 kHz clip (``one_second``): |STFT| (30 ms Hann window, 20 ms
    hop, 512-point FFT) -> 40 HTK mel bins 20-4000 Hz -> log(x + 1e-6) -> DCT-II -> 10 MFCCs,
    as MLPerf Tiny's KWS front end. Returns float32 (1, 1, 49, 10)."""
    clip = np.asarray(clip, dtype=np.float64)
    if clip.shape != (SAMPLE_RATE,):
        raise ValueError(f"clip: shape {clip.shape}: must be ({SAMPLE_RATE},) (one second at 16 kHz)")
    starts = np.arange(0, SAMPLE_RATE - _WIN + 1, _HOP)
    frames = clip[starts[:, None] + np.arange(_WIN)] * _WINDOW
    mel = np.abs(np.fft.rfft(frames, n=_N_FFT)) @ _MEL.T
    mfcc = np.log(mel + 1e-6) @ _DCT.T
    return mfcc.astype(np.float32).reshape(1, 1, *INPUT_HW)


def load_weights(path: Path = WEIGHTS) -> tuple[DSCNN, np.ndarray]:
    """The trained model (eval mode) and the shipped calibration features (n, 1, 49, 10)."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: the trained weights are missing; make them with "
                                "scripts/train_kws_digits.py")
    with np.load(path) as data, torch.random.fork_rng(devices=[]):  # init draws, then overwritten
        model = DSCNN(num_classes=len(WORDS))
        state = {k[len("param."):]: torch.from_numpy(data[k].copy()) for k in data.files if k.startswith("param.")}
        model.load_state_dict(state)
        calibration = data["calibration"].astype(np.float32)
    return model.eval(), calibration


def build() -> _common.ModelBundle:
    model, calibration = load_weights()

    def sample(g: torch.Generator) -> tuple:
        i = int(torch.randint(len(calibration), (), generator=g))
        return (torch.from_numpy(calibration[i:i + 1].copy()),)

    return _common.finish(model, sample)
