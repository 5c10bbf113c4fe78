"""Synthetic, realistic-looking inputs for calibration: images, audio and audio features.

Nothing is downloaded; every function draws from an explicit ``torch.Generator``.
"""

from __future__ import annotations

import functools
import math

import torch
import torch.nn.functional as F

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def _u(g: torch.Generator, lo: float, hi: float) -> float:
    return lo + (hi - lo) * torch.rand((), generator=g).item()


def _log_u(g: torch.Generator, lo: float, hi: float) -> float:
    return math.exp(_u(g, math.log(lo), math.log(hi)))


def _choice(g: torch.Generator, weights: dict[str, float]) -> str:
    names = list(weights)
    w = torch.tensor([weights[k] for k in names], dtype=torch.float32)
    return names[int(torch.multinomial(w, 1, generator=g))]


# --------------------------------------------------------------------------------------------
# Images


def natural_images(g: torch.Generator, n: int, channels: int, height: int, width: int) -> torch.Tensor:
    """(n, C, H, W) 8-bit-like images in [0, 1]: 1/f-ish smooth fields with correlated colour,
    a few flat-coloured rectangles and ellipses (edges), sensor noise, quantised to 1/255."""
    out = torch.empty(n, channels, height, width)
    ys = torch.linspace(0, 1, height).view(height, 1)
    xs = torch.linspace(0, 1, width).view(1, width)
    base = (min(height, 64), min(width, 64))
    for i in range(n):
        luma = torch.zeros(1, 1, *base)
        chroma = torch.zeros(1, channels, *base)
        for octave in (2, 4, 8, 16, 32):
            s = min(octave, *base)
            amp = 1.0 / octave**0.9
            field = torch.randn(1, 1 + channels, s, s, generator=g)
            field = F.interpolate(field, size=base, mode="bicubic", align_corners=False)
            luma += amp * field[:, :1]
            chroma += 0.35 * amp * field[:, 1:]
        img = F.interpolate(luma + chroma, size=(height, width), mode="bilinear", align_corners=False)
        img = (img - img.mean()) / (img.std() + 1e-6)
        img = 0.5 + _u(g, 0.12, 0.3) * img + _u(g, -0.15, 0.15)
        for _ in range(int(torch.randint(0, 6, (), generator=g))):
            colour = torch.rand(channels, 1, 1, generator=g)
            cy, cx = _u(g, 0, 1), _u(g, 0, 1)
            ry, rx = _u(g, 0.04, 0.35), _u(g, 0.04, 0.35)
            if torch.rand((), generator=g) < 0.5:
                mask = ((ys - cy).abs() < ry) & ((xs - cx).abs() < rx)
            else:
                mask = ((ys - cy) / ry) ** 2 + ((xs - cx) / rx) ** 2 < 1
            alpha = _u(g, 0.6, 1.0)
            img[0] = torch.where(mask, (1 - alpha) * img[0] + alpha * colour, img[0])
        img = img * _u(g, 0.6, 1.3)  # exposure
        img = img + _u(g, 0.0, 0.03) * torch.randn(img.shape, generator=g)
        out[i] = (img[0].clamp(0, 1) * 255).round() / 255
    return out


def imagenet_normalize(x: torch.Tensor) -> torch.Tensor:
    mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
    return (x - mean) / std


# --------------------------------------------------------------------------------------------
# Audio

DEFAULT_AUDIO_MIX = {"speech": 0.3, "speech_in_noise": 0.2, "tones": 0.15, "noise": 0.2, "silence": 0.15}
MACHINE_AUDIO_MIX = {"machine": 0.7, "tones": 0.1, "noise": 0.2}


def _formant_gain(freqs: torch.Tensor, formants: list[tuple[float, float]]) -> torch.Tensor:
    """|H(f)| of a cascade of second-order resonators (unit gain at DC)."""
    gain = torch.ones_like(freqs)
    for fc, bw in formants:
        r = freqs / fc
        gain = gain / torch.sqrt((1 - r**2) ** 2 + (freqs * bw / fc**2) ** 2)
    return gain


def voiced_speech(g: torch.Generator, length: int, sr: int = 16000) -> torch.Tensor:
    """Source-filter speech-like signal: a glottal harmonic series with vibrato and drift, shaped by
    4 formant resonances that glide between two vowels, syllabic amplitude modulation, aspiration
    and occasional fricative (high-passed noise) bursts."""
    t = torch.arange(length, dtype=torch.float32) / sr
    dur = max(length / sr, 1e-3)
    f0 = _u(g, 85, 250)
    f0_t = f0 * (1 + _u(g, 0, 0.04) * torch.sin(2 * math.pi * _u(g, 3, 7) * t + _u(g, 0, 6.3))
                 + _u(g, -0.2, 0.2) * t / dur)
    phase = 2 * math.pi * torch.cumsum(f0_t, 0) / sr + _u(g, 0, 6.3)
    n_harm = int(5000 // f0)
    k = torch.arange(1, n_harm + 1, dtype=torch.float32)

    def vowel():
        return [(_u(g, 250, 900), _u(g, 60, 150)), (_u(g, 850, 2400), _u(g, 80, 200)),
                (_u(g, 2200, 3200), _u(g, 100, 250)), (_u(g, 3300, 4500), _u(g, 150, 350))]

    va, vb = vowel(), vowel()
    amp_a = _formant_gain(k * f0, va) / k
    amp_b = _formant_gain(k * f0, vb) / k
    mix = (t / dur).clamp(0, 1).view(1, -1)
    phases = torch.rand(n_harm, 1, generator=g, dtype=torch.float32) * 2 * math.pi
    harm = torch.sin(k.view(-1, 1) * phase.view(1, -1) + phases)
    sig = ((amp_a.view(-1, 1) * (1 - mix) + amp_b.view(-1, 1) * mix) * harm).sum(0)
    sig = sig / (sig.abs().max() + 1e-9)
    depth = _u(g, 0.0, 0.9)
    env = (1 - depth) + depth * torch.sin(2 * math.pi * _u(g, 2, 6) * t + _u(g, 0, 6.3)).clamp(min=0) ** 0.7
    sig = sig * env + _u(g, 0.005, 0.05) * torch.randn(length, generator=g, dtype=torch.float32)
    if torch.rand((), generator=g) < 0.3:  # a fricative burst
        noise = torch.randn(length, generator=g, dtype=torch.float32)
        hp = noise - F.avg_pool1d(noise.view(1, 1, -1), 5, 1, 2, count_include_pad=False).view(-1)
        start = int(torch.randint(0, max(1, length), (), generator=g))
        span = int(_u(g, 0.03, 0.15) * sr)
        burst = torch.zeros(length, dtype=torch.float32)
        burst[start:start + span] = 1
        sig = sig + _u(g, 0.1, 0.5) * hp * burst
    return sig.float()


def tones(g: torch.Generator, length: int, sr: int = 16000) -> torch.Tensor:
    """1-4 sinusoids, some as exponential chirps."""
    t = torch.arange(length, dtype=torch.float32) / sr
    dur = max(length / sr, 1e-3)
    sig = torch.zeros(length, dtype=torch.float32)
    for _ in range(int(torch.randint(1, 5, (), generator=g))):
        f_start = _log_u(g, 60, 6000)
        f_end = _log_u(g, 60, 6000) if torch.rand((), generator=g) < 0.4 else f_start
        freq = f_start * (f_end / f_start) ** (t / dur)
        phase = 2 * math.pi * torch.cumsum(freq, 0) / sr + _u(g, 0, 6.3)
        sig += _log_u(g, 0.05, 1.0) * torch.sin(phase)
    return sig.float()


def machine(g: torch.Generator, length: int, sr: int = 16000) -> torch.Tensor:
    """Rotating-machine-like sound: harmonics of a shaft frequency, amplitude-modulated, in
    broadband coloured noise."""
    t = torch.arange(length, dtype=torch.float32) / sr
    f_rot = _log_u(g, 20, 400)
    n = max(1, min(30, int(6000 // f_rot)))
    k = torch.arange(1, n + 1, dtype=torch.float32).view(-1, 1)
    amps = torch.rand(n, 1, generator=g, dtype=torch.float32) ** 2 / k**0.5
    phases = torch.rand(n, 1, generator=g, dtype=torch.float32) * 2 * math.pi
    sig = (amps * torch.sin(2 * math.pi * f_rot * k * t.view(1, -1) + phases)).sum(0)
    sig = sig * (1 + _u(g, 0, 0.5) * torch.sin(2 * math.pi * _u(g, 0.5, 20) * t))
    sig = sig / (sig.abs().max() + 1e-9)
    return (sig + _u(g, 0.05, 1.0) * colored_noise(g, length)).float()


def colored_noise(g: torch.Generator, length: int) -> torch.Tensor:
    """Unit-RMS noise with a 1/f^alpha power spectrum, alpha in [0, 2] (white to brown)."""
    alpha = _u(g, 0.0, 2.0)
    spec = torch.fft.rfft(torch.randn(length, generator=g, dtype=torch.float32))
    f = torch.arange(spec.numel(), dtype=torch.float32).clamp(min=1)
    sig = torch.fft.irfft(spec / f ** (alpha / 2), n=length)
    return (sig / (sig.pow(2).mean().sqrt() + 1e-12)).float()


def audio_clip(g: torch.Generator, length: int, sr: int = 16000, mix: dict[str, float] | None = None) -> torch.Tensor:
    """One (length,) waveform in [-1, 1] of a randomly chosen kind, at a random level."""
    kind = _choice(g, mix or DEFAULT_AUDIO_MIX)
    if kind == "silence":
        return _log_u(g, 1e-4, 3e-3) * colored_noise(g, length)
    if kind == "speech":
        sig = voiced_speech(g, length, sr)
    elif kind == "speech_in_noise":
        sig = voiced_speech(g, length, sr)
        snr_db = _u(g, 0, 30)
        sig = sig / (sig.pow(2).mean().sqrt() + 1e-9) + 10 ** (-snr_db / 20) * colored_noise(g, length)
    elif kind == "tones":
        sig = tones(g, length, sr) + _log_u(g, 1e-3, 0.3) * colored_noise(g, length)
    elif kind == "machine":
        sig = machine(g, length, sr)
    else:
        sig = colored_noise(g, length)
    peak = _log_u(g, 0.01, 0.9)
    return sig / (sig.abs().max() + 1e-9) * peak


# --------------------------------------------------------------------------------------------
# Audio features


def _hz_to_mel(f: torch.Tensor, htk: bool) -> torch.Tensor:
    if htk:
        return 2595.0 * torch.log10(1.0 + f / 700.0)
    f_sp, logstep = 200.0 / 3, math.log(6.4) / 27.0
    return torch.where(f < 1000.0, f / f_sp, 15.0 + torch.log(f.clamp(min=1e-9) / 1000.0) / logstep)


def _mel_to_hz(m: torch.Tensor, htk: bool) -> torch.Tensor:
    if htk:
        return 700.0 * (10 ** (m / 2595.0) - 1.0)
    f_sp, logstep = 200.0 / 3, math.log(6.4) / 27.0
    return torch.where(m < 15.0, f_sp * m, 1000.0 * torch.exp(logstep * (m - 15.0)))


@functools.lru_cache(maxsize=8)
def mel_filterbank(n_fft: int, sr: int, n_mels: int, fmin: float, fmax: float, *, htk: bool,
                   slaney_norm: bool) -> torch.Tensor:
    """(n_mels, n_fft // 2 + 1) triangular filters (HTK or Slaney mel scale, optional area norm)."""
    freqs = torch.linspace(0, sr / 2, n_fft // 2 + 1, dtype=torch.float32)
    mels = torch.linspace(float(_hz_to_mel(torch.tensor(fmin, dtype=torch.float32), htk)),
                          float(_hz_to_mel(torch.tensor(fmax, dtype=torch.float32), htk)),
                          n_mels + 2, dtype=torch.float32)
    hz = _mel_to_hz(mels, htk)
    lo, mid, hi = hz[:-2].view(-1, 1), hz[1:-1].view(-1, 1), hz[2:].view(-1, 1)
    fb = torch.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)).clamp(min=0)
    if slaney_norm:
        fb = fb * (2.0 / (hi - lo))
    return fb.float()  # cached: callers must not modify it in place


def kws_mfcc(audio: torch.Tensor, sr: int = 16000) -> torch.Tensor:
    """MLPerf Tiny KWS features of a 1 s clip: |STFT| (30 ms Hann window, 20 ms hop, 512-point FFT,
    no centering) -> 40 HTK mel bins 20-4000 Hz -> log(x + 1e-6) -> DCT-II scaled as
    tf.signal.mfccs_from_log_mel_spectrograms -> first 10 coefficients. Returns (49, 10)."""
    win, hop, n_fft, n_mels = int(0.03 * sr), int(0.02 * sr), 512, 40
    frames = audio.unfold(0, win, hop) * torch.hann_window(win, periodic=True)
    mag = torch.fft.rfft(frames, n=n_fft).abs()
    mel = mag @ mel_filterbank(n_fft, sr, n_mels, 20.0, 4000.0, htk=True, slaney_norm=False).T
    log_mel = torch.log(mel + 1e-6)
    n = torch.arange(n_mels, dtype=torch.float32)
    kk = torch.arange(10, dtype=torch.float32).view(-1, 1)
    dct = (torch.cos(math.pi * kk * (2 * n + 1) / (2 * n_mels)) * math.sqrt(2.0 / n_mels)).float()
    return log_mel @ dct.T


def dcase_log_mel(audio: torch.Tensor, sr: int = 16000, n_mels: int = 128, n_fft: int = 1024,
                  hop: int = 512) -> torch.Tensor:
    """DCASE 2020 task 2 / MLPerf Tiny AD features: librosa-style power mel spectrogram (centred
    STFT with zero padding, Slaney mel scale and norm) -> 10 * log10(x + eps). Returns (frames, n_mels)."""
    spec = torch.stft(audio, n_fft, hop, window=torch.hann_window(n_fft, periodic=True), center=True,
                      pad_mode="constant", return_complex=True)
    power = spec.abs() ** 2
    mel = mel_filterbank(n_fft, sr, n_mels, 0.0, sr / 2, htk=False, slaney_norm=True) @ power
    return (10.0 * torch.log10(mel + 2.220446049250313e-16)).T
