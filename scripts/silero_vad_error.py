"""silero_vad's int8 error, measured: |p - p_float| of the speech probability over calibration-
distribution inputs, for the fake-quantized and the lowered graph of several quantizer settings,
and which activations the error comes from.

    PYTHONPATH=python .venv/bin/python scripts/silero_vad_error.py [--calibration 16] [--eval 64]

Attribution: the fake-quantized graph with the quantize / dequantize pairs of every activation
removed except those of one region (weights stay int8 everywhere); each row is the error that
region's int8 activations cause alone.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

import cortexm

Q = "quantized_decomposed.quantize_per_tensor.default"
DQ = "quantized_decomposed.dequantize_per_tensor.default"
FRONT_END = ("x", "convolution", "sqrt")  # waveform, STFT output, magnitude

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
    "decoder conv and sigmoid": ["convolution_5", "sigmoid_3"],
}


def only_activations(qgraph, keep: set):
    """qgraph with the Q/DQ pairs of activations outside keep (and of their sharing followers)
    bypassed: their readers read the float value."""
    g = qgraph.copy()
    for q in [n for n in g.nodes if n.op == Q]:
        source = q.inputs[0]
        name = source.name
        if source.producer is not None and source.producer.op == DQ:  # a requantize: keep its source's fate
            continue
        if name in keep:
            continue
        for dq in [u for u in q.outputs[0].users if u.op == DQ]:
            g.replace_all_uses(dq.outputs[0], source)
    g.dead_code_elimination()
    return g


def errors(graph, samples, reference):
    got = np.concatenate([np.asarray(graph.run(*[t.numpy() for t in s])[0]) for s in samples])
    e = np.abs(got - reference)
    return float(e.max()), float(e.mean())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calibration", type=int, default=16, help="calibration samples (seed 0)")
    parser.add_argument("--eval", type=int, default=64, help="evaluation samples (seed 1)")
    args = parser.parse_args()
    model, example, calibration = cortexm.models.get("silero_vad")
    graph = cortexm.export(model, example)
    samples = list(calibration(args.eval, seed=1))
    with torch.no_grad():
        reference = np.concatenate([model(*s)[0].numpy() for s in samples])
    settings = {
        "int8 (default)": cortexm.CortexMQuantizer(),
        "int8, fused magnitude": cortexm.CortexMQuantizer(fuse_magnitude=True),
        "int16 x / STFT / magnitude, fused magnitude": cortexm.CortexMQuantizer(
            int16_activations=FRONT_END, fuse_magnitude=True),
    }
    print(f"|p - p_float| over {args.eval} samples (seed 1), {args.calibration} calibration samples (seed 0)")
    qgraphs = {}
    for label, quantizer in settings.items():
        qgraph = cortexm.quantize(graph, calibration(args.calibration), quantizer, progress=False)
        qgraphs[label] = qgraph
        lowered = cortexm.lower(qgraph, "cortex-m55+int8")
        floats = sorted(op for op in lowered.op_counts() if op.startswith("aten.") and "copy" not in op
                        and op not in ("aten.cat.default", "aten.reflection_pad1d.default"))
        fake, low = errors(qgraph, samples, reference), errors(lowered, samples, reference)
        print(f"  {label}: fake-quantized max {fake[0]:.4f} mean {fake[1]:.4f}; lowered max {low[0]:.4f} "
              f"mean {low[1]:.4f}; float compute ops after lowering: {floats or 'none'}")
    print("int8 activations of one region only (default quantizer; weights int8 everywhere):")
    qgraph = qgraphs["int8 (default)"]
    rows = {"none (weights only)": []} | REGIONS | {"all but x .. sqrt": [
        name for names in list(REGIONS.values())[4:] for name in names]}
    for label, names in rows.items():
        e = errors(only_activations(qgraph, set(names)), samples, reference)
        print(f"  {label:28s} max {e[0]:.4f} mean {e[1]:.4f}")


if __name__ == "__main__":
    main()
