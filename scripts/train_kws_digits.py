#!/usr/bin/env python3
"""Trains cortexm.models.kws_digits (DS-CNN, ten spoken digits) on words espeak-ng synthesizes and
reports its held-out accuracy as float, int8 fake-quant, lowered graph, host program and QEMU M55.

    python scripts/train_kws_digits.py                # train, write the weights, evaluate
    python scripts/train_kws_digits.py --evaluate     # evaluate the shipped weights only

Speech: every digit from espeak-ng's English accents x voice variants, at random speeds and
pitches. Every fourth variant (sorted by name) is held out: the held-out set is spoken by voices
the model never heard. Training clips are augmented each epoch (position in the second, gain,
white / pink / hum noise at 0-35 dB SNR); held-out clips get one fixed draw of the same.
Seeded throughout; the synthesized speech is cached in build/kws_digits/.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import io
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import cortexm  # noqa: E402
from cortexm.atomic_write import write_file_atomically  # noqa: E402
from cortexm.models import kws_digits as kws  # noqa: E402

SPEEDS = (110, 230)
PITCHES = (15, 85)


def voice_split() -> tuple[list[str], list[str]]:
    """(training variants, held-out variants): every fourth variant by name is held out."""
    names = kws.variants()
    return [v for i, v in enumerate(names) if i % 4 != 3], [v for i, v in enumerate(names) if i % 4 == 3]


def specs(variants: list[str], per_variant: int, seed: int) -> list[tuple]:
    """(label, voice, speed, pitch) for every word x variant, per_variant random draws each."""
    rng = np.random.default_rng(seed)
    out = []
    for label in range(len(kws.WORDS)):
        for variant in variants:
            for _ in range(per_variant):
                accent = kws.ACCENTS[rng.integers(len(kws.ACCENTS))]
                out.append((label, f"{accent}+{variant}", int(rng.integers(*SPEEDS)), int(rng.integers(*PITCHES))))
    return out


def synthesize(items: list[tuple], cache: Path) -> list[np.ndarray]:
    """The trimmed audio of each spec, from the cache when it holds this exact list."""
    key = hashlib.sha256(json.dumps(items).encode()).hexdigest()[:16]
    path = cache / f"speech-{key}.npz"
    if path.exists():
        with np.load(path) as data:
            audio, ends = data["audio"], data["ends"]
        return np.split(audio, ends[:-1])
    started = time.time()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        clips = list(pool.map(lambda s: kws.trim(kws.speak(kws.WORDS[s[0]], s[1], s[2], s[3])), items))
    print(f"synthesized {len(items)} words in {time.time() - started:.0f} s", flush=True)
    cache.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    np.savez(buf, audio=np.concatenate(clips), ends=np.cumsum([len(c) for c in clips]))
    write_file_atomically(path, buf.getvalue())
    return clips


def noise(rng: np.random.Generator, n: int) -> np.ndarray:
    kind = rng.integers(3)
    if kind == 0:
        return rng.standard_normal(n)
    if kind == 1:  # pink: 1/f power
        spectrum = np.fft.rfft(rng.standard_normal(n))
        spectrum /= np.sqrt(np.maximum(np.arange(len(spectrum)), 1))
        return np.fft.irfft(spectrum, n=n)
    t = np.arange(n) / kws.SAMPLE_RATE  # mains hum with harmonics
    f0 = 50.0 if rng.integers(2) else 60.0
    return sum(np.sin(2 * np.pi * f0 * k * t + rng.uniform(0, 6.3)) / k for k in range(1, 6))


def augmented(word: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One training / evaluation clip of word: placed at random in the second, scaled, with noise."""
    room = max(kws.SAMPLE_RATE - len(word), 0)
    clip = kws.one_second(word, int(rng.integers(room + 1))).astype(np.float64)
    clip *= rng.uniform(0.2, 1.0) / max(np.abs(clip).max(), 1e-6)
    speech_rms = np.sqrt(np.mean(clip[np.abs(clip) > 0] ** 2)) if np.any(clip) else 0.0
    n = noise(rng, kws.SAMPLE_RATE)
    n *= speech_rms / np.sqrt(np.mean(n ** 2)) * 10 ** (-rng.uniform(0, 35) / 20)
    return np.clip(clip + n, -1, 1).astype(np.float32)


def feature_set(words: list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    return np.concatenate([kws.features(augmented(w, rng)) for w in words])


def train(x_words, y, epochs: int, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = kws.DSCNN(num_classes=len(kws.WORDS))
    model.softmax = nn.Identity()  # logits while training
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-3)
    steps = epochs * ((len(y) + 63) // 64)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    labels = torch.tensor(y)
    for epoch in range(epochs):
        x = torch.from_numpy(feature_set(x_words, rng))
        order = torch.randperm(len(y))
        model.train()
        correct, total_loss = 0, 0.0
        for start in range(0, len(y), 64):
            idx = order[start:start + 64]
            logits = model(x[idx])
            loss = nn.functional.cross_entropy(logits, labels[idx], label_smoothing=0.05)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total_loss += loss.item() * len(idx)
            correct += int((logits.argmax(1) == labels[idx]).sum())
        print(f"epoch {epoch + 1:2d}: loss {total_loss / len(y):.3f}, training accuracy {correct / len(y):.3f}",
              flush=True)
    model.softmax = nn.Softmax(dim=1)
    return model.eval()


def save(model: nn.Module, calibration: np.ndarray, path: Path) -> None:
    buf = io.BytesIO()
    arrays = {f"param.{k}": v.detach().numpy() for k, v in model.state_dict().items()}
    np.savez_compressed(buf, calibration=calibration.astype(np.float16), **arrays)
    write_file_atomically(path, buf.getvalue())
    print(f"wrote {path} ({path.stat().st_size} bytes)")


def accuracy(predictions, y) -> float:
    return float(np.mean(np.asarray(predictions) == np.asarray(y)))


def evaluate(model: nn.Module, x: np.ndarray, y: list[int], qemu_cpu: str | None) -> dict:
    """Held-out accuracy at every stage of the pipeline (int8 with the shipped calibration)."""
    _, calibration = kws.load_weights()
    cal = [(torch.from_numpy(calibration[i:i + 1].astype(np.float32)),) for i in range(len(calibration))]
    cases = [(x[i:i + 1],) for i in range(len(x))]
    with torch.no_grad():
        result = {"float": accuracy(model(torch.from_numpy(x)).argmax(1).numpy(), y)}
    graph = cortexm.export(model, cal[0])
    qgraph = cortexm.quantize(graph, cal, progress=False)
    result["int8 fake-quant"] = accuracy([int(np.argmax(qgraph.run(*c))) for c in cases], y)
    lowered = cortexm.lower(qgraph, target="cortex-m55+int8")
    lowered_out = [np.asarray(lowered.run(*c)) for c in cases]
    result["lowered graph"] = accuracy([int(np.argmax(o)) for o in lowered_out], y)
    program = cortexm.to_program(lowered)
    host = program.run_batch(cases)
    result["host program"] = accuracy([int(np.argmax(o)) for o in host], y)
    if qemu_cpu:
        target = cortexm.qemu.run_cases(program, cases, cpu=qemu_cpu)
        result[f"QEMU {qemu_cpu}"] = accuracy([int(np.argmax(o)) for o in target], y)
        result["QEMU outputs identical with the host"] = all(np.array_equal(a, b) for a, b in zip(host, target))
    return result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=kws.WEIGHTS, help="weights file to write")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--per-variant", type=int, default=3, help="training words per digit and voice variant")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--evaluate", action="store_true", help="evaluate the weights file only")
    p.add_argument("--qemu", default="cortex-m55", help="core to evaluate on under QEMU ('' skips it)")
    p.add_argument("--cache", type=Path, default=ROOT / "build" / "kws_digits")
    args = p.parse_args(argv)
    torch.set_num_threads(1)  # small convolutions: one thread is as fast, and far faster on a busy machine

    train_variants, test_variants = voice_split()
    test_items = specs(test_variants, 2, seed=args.seed + 1)
    test_words = synthesize(test_items, args.cache)
    x_test = feature_set(test_words, np.random.default_rng(args.seed + 2))
    y_test = [s[0] for s in test_items]
    if args.evaluate:
        model, _ = kws.load_weights(args.out)
    else:
        train_items = specs(train_variants, args.per_variant, seed=args.seed)
        train_words = synthesize(train_items, args.cache)
        print(f"{len(train_items)} training words ({len(train_variants)} variants), {len(test_items)} held-out "
              f"words ({len(test_variants)} other variants)", flush=True)
        started = time.time()
        model = train(train_words, [s[0] for s in train_items], args.epochs, args.seed)
        print(f"trained in {time.time() - started:.0f} s")
        calibration = feature_set(train_words[::len(train_words) // 64][:64], np.random.default_rng(args.seed + 3))
        save(model, calibration, args.out)
    result = evaluate(model, x_test, y_test, args.qemu or None)
    print(f"held-out accuracy over {len(y_test)} words spoken by {len(test_variants)} unseen voice variants:")
    for stage, value in result.items():
        print(f"  {stage:38s} {value if isinstance(value, bool) else f'{100 * value:.1f} %'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
