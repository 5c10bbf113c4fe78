"""silero_vad's quantization error, measured: |p - p_float| of the speech probability, for the
fake-quantized and the lowered graph of several quantizer settings, on
  - calibration-distribution inputs (one streaming step each: `--eval` samples, seed 1; the tail
    over `--tail` samples), calibrated on `--calibration` samples (seed 0);
  - real speech streamed chunk by chunk with each graph's own state fed back (espeak-ng speech in
    noise, as tests/py/test_models_torch.py; skipped without espeak-ng and sox);
and two floors no activation choice can go under: int8 weights with float activations, and the
float model's own movement when its input is dithered by one int16 LSB.

    PYTHONPATH=python .venv/bin/python scripts/silero_vad_error.py [--calibration 16] [--eval 64] [--tail 512]

--streams adds 12 held-out streams (three sentences, espeak-ng's default voice, noise seeds 0-3; the
first is the real-speech clip above): the mean over streams of each stream's max, the worst, and how
many exceed 0.02. One clip's max is set by a chunk or two at a speech onset, so it moves with
details (a noise seed, GPTQ's damping) that the streams' spread shows.

--regions adds the attribution of the int8 error: the default-quantized graph with the quantize /
dequantize pairs of every activation removed except those of one region. --weights adds the error
of each weight alone rounded to int8 (per channel, to nearest) in the float model.
"""

from __future__ import annotations

import argparse
import copy

import numpy as np
import torch

import cortexm
from cortexm.aot import DATA_MOVEMENT
from cortexm.models import silero_vad

Q = "quantized_decomposed.quantize_per_tensor.default"
DQ = "quantized_decomposed.dequantize_per_tensor.default"
FRONT_END = ("x", "convolution", "sqrt")  # waveform, STFT output, magnitude

SETTINGS = {
    "int8 (default)": dict(),
    "int16 front end": dict(int16_activations=FRONT_END, fuse_magnitude=True),
    "16x8 (activation_dtype='int16')": dict(activation_dtype="int16", fuse_magnitude=True),
    "16x8, GPTQ weights": dict(activation_dtype="int16", fuse_magnitude=True, weight_rounding="gptq"),
    "auto (precision='auto')": dict(precision="auto", state_feedback=silero_vad.STATE_FEEDBACK),
}

HELD_OUT_TEXTS = (silero_vad.SPEECH_TEXT,
                  "A gentle breeze carried the smell of fresh bread down the street.",
                  "Turn the volume down before the meeting starts.")
NOISE_SEEDS = (0, 1, 2, 3)

REGIONS = {
    "input x": ["x"],
    "STFT conv output": ["convolution"],
    "power (mul, mul_1, add)": ["mul", "mul_1", "add"],
    "magnitude (sqrt)": ["sqrt"],
    "encoder conv outputs": ["relu", "relu_1", "relu_2", "relu_3"],
    "LSTM state input": ["state"],
    "LSTM gate linears and sum": ["linear", "linear_1", "add_1"],
    "LSTM gate activations": ["sigmoid", "sigmoid_1", "tanh", "sigmoid_2"],
    "LSTM c and h": ["mul_2", "mul_3", "add_2", "tanh_1", "mul_4"],
    "new state (cat)": ["cat"],
    "decoder conv and sigmoid": ["convolution_5", "sigmoid_3"],
}


def only_activations(qgraph, keep: set):
    """qgraph with the Q/DQ pairs of activations outside keep (and of their sharing followers)
    bypassed: their readers read the float value. Weights stay quantized."""
    g = qgraph.copy()
    for q in [n for n in g.nodes if n.op == Q]:
        source = q.inputs[0]
        if source.producer is not None and source.producer.op == DQ:  # a requantize: keep its source's fate
            continue
        if source.name in keep:
            continue
        for dq in [u for u in q.outputs[0].users if u.op == DQ]:
            g.replace_all_uses(dq.outputs[0], source)
    g.dead_code_elimination()
    return g


def float_weights(qgraph, model, prefixes: tuple):
    """qgraph with the int8 weights of the model's parameters named with one of prefixes replaced by
    their float values (activations stay quantized): what higher-precision weights there would give."""
    params = {k: v.detach().numpy() for k, v in model.named_parameters()}
    g = qgraph.copy()
    for n in list(g.nodes):
        name = n.name[:-len("_int8_dq")]
        if n.op == "quantized_decomposed.dequantize_per_channel.default" and n.name.endswith("_int8_dq") \
                and name in params and name.startswith(prefixes):
            const = g.add_constant(f"{name}_float", params[name].reshape(n.outputs[0].shape).astype(np.float32))
            g.replace_all_uses(n.outputs[0], const)
    g.dead_code_elimination()
    return g


def step_probs(graph, samples) -> np.ndarray:
    return np.array([float(np.asarray(graph.run(*[t.numpy() for t in s])[0]).reshape(-1)[0]) for s in samples])


class Bench:
    def __init__(self, args):
        self.model, example, self.calibration = cortexm.models.get("silero_vad")
        self.graph = cortexm.export(self.model, example)
        self.samples = list(self.calibration(max(args.eval, args.tail), seed=1))
        self.eval, self.tail = args.eval, args.tail
        with torch.no_grad():
            self.reference = np.array([self.model(*s)[0].item() for s in self.samples])
        try:
            audio, _, _ = silero_vad.speech_in_noise(silero_vad.espeak_speech())
        except RuntimeError as e:
            print(f"real speech skipped: {e}")
            audio = None
        self.audio = audio
        if audio is not None:
            probs, _, _ = silero_vad.stream(self.model, torch.from_numpy(audio))
            self.stream_reference = probs[0].numpy()
        self.streams = []  # (audio, float probabilities) of the held-out streams
        if args.streams and audio is not None:
            for text in HELD_OUT_TEXTS:
                speech = silero_vad.espeak_speech(text)
                for seed in NOISE_SEEDS:
                    clip = silero_vad.speech_in_noise(speech, seed=seed)[0]
                    self.streams.append((clip, silero_vad.stream(self.model, torch.from_numpy(clip))[0][0].numpy()))

    def step_stats(self, e: np.ndarray) -> str:
        """|p - p_float| per step: max / mean over the first `eval`, p99 / share > 0.02 / max over `tail`."""
        head, tail = e[:self.eval], e[:self.tail]
        return (f"{head.max():.4f} / {head.mean():.4f} | {np.quantile(tail, 0.99):.4f} / "
                f"{(tail > 0.02).mean():6.1%} / {tail.max():.4f}")

    def row(self, probs: np.ndarray, stream: np.ndarray | None) -> str:
        text = self.step_stats(np.abs(probs - self.reference))
        if stream is not None:
            s = np.abs(stream - self.stream_reference)
            flips = int(((stream > 0.5) != (self.stream_reference > 0.5)).sum())
            text += f" | {s.max():.4f} / {s.mean():.4f} / {flips:3d}"
        return text

    def measure(self, graph) -> str:
        stream = None if self.audio is None else silero_vad.stream_graph(graph, self.audio)
        text = self.row(step_probs(graph, self.samples), stream)
        if self.streams:
            worst = np.array([np.abs(silero_vad.stream_graph(graph, clip) - ref).max() for clip, ref in self.streams])
            text += f" | {worst.mean():.4f} / {worst.max():.4f} / {int((worst > 0.02).sum())}"
        return text


def dithered_float(bench: Bench, draws: int = 8) -> str:
    """The float model's largest movement over `draws` dithers of its input by N(0, 2^-15)."""
    g = torch.Generator().manual_seed(5)
    x = torch.cat([s[0] for s in bench.samples])
    state = torch.cat([s[1] for s in bench.samples], dim=1)
    worst = np.zeros(len(bench.samples))
    with torch.no_grad():
        for _ in range(draws):
            p = bench.model(x + torch.randn(x.shape, generator=g) / 32768, state)[0].numpy().reshape(-1)
            worst = np.maximum(worst, np.abs(p - bench.reference))
    return bench.step_stats(worst)


def weights_alone(bench: Bench) -> None:
    """Each conv / linear weight of the float model rounded alone to per-channel int8."""
    x = torch.cat([s[0] for s in bench.samples])
    state = torch.cat([s[1] for s in bench.samples], dim=1)
    names = [n for n, p in bench.model.named_parameters() if p.dim() >= 2]
    for name in names:
        model = copy.deepcopy(bench.model)
        w = dict(model.named_parameters())[name]
        with torch.no_grad():
            scale = (w.abs().amax(dim=tuple(range(1, w.dim())), keepdim=True) / 127).clamp_min(1e-30)
            w.copy_(torch.clamp(torch.round(w / scale), -127, 127) * scale)
            p = model(x, state)[0].numpy().reshape(-1)
        print(f"  {name:32s} {bench.step_stats(np.abs(p - bench.reference))}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calibration", type=int, default=16, help="calibration samples (seed 0)")
    parser.add_argument("--eval", type=int, default=64, help="evaluation samples (seed 1)")
    parser.add_argument("--tail", type=int, default=512, help="samples (seed 1) for the tail statistics")
    parser.add_argument("--only", nargs="+", metavar="PREFIX",
                        help="measure only the settings whose label starts with one of these (int8, 16x8, auto, ...)")
    parser.add_argument("--streams", action="store_true",
                        help=f"also stream {len(HELD_OUT_TEXTS) * len(NOISE_SEEDS)} held-out clips (sentences x noise seeds)")
    parser.add_argument("--float-weights", nargs="+", metavar="PREFIX",
                        help="also 16x8 + GPTQ with the weights whose names start with these in float (e.g. encoder)")
    parser.add_argument("--regions", action="store_true", help="attribute the int8 error to regions")
    parser.add_argument("--weights", action="store_true", help="the error of each weight alone in int8")
    args = parser.parse_args()
    bench = Bench(args)
    print(f"|p - p_float|: {args.eval} steps max / mean | {args.tail} steps p99 / share > 0.02 / max"
          f" | real speech stream ({'skipped' if bench.audio is None else f'{len(bench.stream_reference)} chunks'})"
          f" max / mean / decisions at 0.5 that differ"
          + (f" | {len(bench.streams)} held-out streams: mean of max / max / > 0.02" if bench.streams else "")
          + f"; calibrated on {args.calibration} samples")
    qgraphs = {}
    for label, options in SETTINGS.items():
        if args.only and not label.startswith(tuple(args.only)) and label not in ("int8 (default)", "16x8, GPTQ weights"):
            continue
        quantizer = cortexm.CortexMQuantizer(**options)
        qgraph = cortexm.quantize(bench.graph, bench.calibration(args.calibration), quantizer, progress=False)
        qgraphs[label] = qgraph
        lowered = cortexm.lower(qgraph, "cortex-m55+int8")
        floats = sorted(op for op in lowered.op_counts() if op.startswith("aten.") and op not in DATA_MOVEMENT)
        if options.get("precision") == "auto":
            print(cortexm.quantization_report(qgraph).precision)
        print(f"{label}\n  fake-quantized  {bench.measure(qgraph)}\n  lowered         {bench.measure(lowered)}"
              f"\n  float compute ops after lowering: {', '.join(floats) or 'none'}", flush=True)
    print("floors:")
    for label, setting in (("", "int8 (default)"), (" (GPTQ)", "16x8, GPTQ weights")):
        weights_only = only_activations(qgraphs[setting], set())
        print(f"  int8 weights{label}, float activations  {bench.measure(weights_only)}")
    print(f"  float, input dithered by 1 int16 LSB (no stream)  {dithered_float(bench)}", flush=True)
    if args.float_weights:
        graph = float_weights(qgraphs["16x8, GPTQ weights"], bench.model, tuple(args.float_weights))
        print(f"  16x8 + GPTQ, weights {' '.join(args.float_weights)}* float (fake-quantized)  {bench.measure(graph)}",
              flush=True)
    if args.weights:
        print("one weight rounded to int8 (per channel, nearest), everything else float:")
        weights_alone(bench)
    if args.regions:
        print("int8 activations of one region only (default quantizer; weights int8 everywhere):")
        qgraph = qgraphs["int8 (default)"]
        for label, names in REGIONS.items():
            print(f"  {label:28s} {bench.measure(only_activations(qgraph, set(names)))}", flush=True)


if __name__ == "__main__":
    main()
