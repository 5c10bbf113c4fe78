"""Calibration: run the float graph on every sample and feed the observers."""

from __future__ import annotations

import warnings

import numpy as np

from ..escape import printable
from ..progress import bar
from .annotator import Annotation


class CalibrationWarning(UserWarning):
    """The calibration set is smaller than the measured rule asks for its precision."""


# The fewest calibration samples per precision before quantize warns. Measured on five zoo models
# (scripts/calibration_size.py, docs/accuracy.md "How many calibration samples"): below 32, int8's
# output SQNR fell up to 11 dB short of what 256 samples gave (ds_cnn: 17.6 dB at 16, 28.8 at 32);
# 16x8, which keeps more of each range, fell up to 8 dB short below 128 (deep_autoencoder).
MIN_CALIBRATION_SAMPLES = {"int8": 32, "16x8": 128, "auto": 128}


def warn_if_few_samples(count: int, precision: str) -> None:
    need = MIN_CALIBRATION_SAMPLES[precision]
    if count < need:
        warnings.warn(CalibrationWarning(
            f"calibration has {count} samples: with fewer than {need}, {precision} output accuracy fell short of "
            f"what 256 samples gave on the zoo models (docs/accuracy.md, 'How many calibration samples'); give at "
            f"least {need} samples of your real inputs"), stacklevel=3)


def _to_numpy(x, where: str) -> np.ndarray:
    if hasattr(x, "detach") and hasattr(x, "numpy"):  # a torch tensor, without importing torch
        x = x.detach().cpu().numpy()
    if not isinstance(x, np.ndarray):
        raise ValueError(f"{where} is a {type(x).__name__}, expected a numpy array or a torch tensor")
    return np.ascontiguousarray(x)


def sample_arrays(sample, graph_inputs: list, index: int) -> list:
    """One calibration sample as arrays checked against the graph's inputs (count, shape, dtype,
    finite values)."""
    if not isinstance(sample, (tuple, list)):
        sample = (sample,)
    if len(sample) != len(graph_inputs):
        raise ValueError(f"calibration sample {index} has {len(sample)} inputs, the graph takes "
                         f"{len(graph_inputs)} ({', '.join(v.name for v in graph_inputs)}): give each sample as "
                         "a tuple of one array per graph input, as the example inputs")
    arrays = []
    for i, (x, v) in enumerate(zip(sample, graph_inputs)):
        where = f"calibration sample {index}, input {i} ('{printable(v.name)}')"
        a = _to_numpy(x, where)
        if tuple(a.shape) != tuple(v.shape) or a.dtype.name != v.dtype:
            raise ValueError(f"{where} is {a.dtype.name}{list(a.shape)}, the graph expects "
                             f"{v.dtype}{list(v.shape)}: give samples of the example inputs' shapes and dtypes "
                             "(the batch size included)")
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise ValueError(f"{where} has {int(np.isnan(a).sum())} NaN and {int(np.isinf(a).sum())} "
                             "inf values; calibration data must be finite")
        arrays.append(a)
    return arrays


def calibrate(graph, annotation: Annotation, calibration, progress: bool = True, watchers=None) -> int:
    """Runs graph on every calibration sample, feeding the observed groups and, for each value named
    in watchers (value name -> [objects with update(array)]), its watchers. Returns the sample count."""
    observed = annotation.observed_groups()
    watchers = watchers or {}
    inputs = graph.inputs
    by_node = {}  # node id -> [(output index, [observers and watchers])]
    for node in annotation.view.nodes:
        hits = [(i, ([observed[o.name].observer] if o.name in observed else []) + watchers.get(o.name, []))
                for i, o in enumerate(node.outputs)]
        hits = [(i, sinks) for i, sinks in hits if sinks]
        if hits:
            by_node[node.id] = hits

    def observe(node, outputs):
        for i, sinks in by_node.get(node.id, ()):
            x = outputs[i]
            if not np.isfinite(x).all():
                raise ValueError(f"calibration sample {count}: node '{node.name}' ({node.op}) output {i} "
                                 "has NaN or inf values: the float model makes them on this sample; keep the "
                                 "op's inputs in its domain (clamp before log / sqrt / division) or drop the "
                                 "sample")
            for sink in sinks:
                try:
                    sink.update(x)
                except ValueError as e:
                    raise ValueError(f"calibration sample {count}: node '{printable(node.name)}' ({printable(node.op)}) "
                                     f"output {i}: {e}") from None

    if calibration is None or not hasattr(calibration, "__iter__"):
        raise ValueError(f"calibration must be an iterable of input tuples, got {type(calibration).__name__}: "
                         "give e.g. [(x,) for x in samples], one tuple of the model's inputs per sample")
    count = 0
    for sample in bar(calibration, desc="calibrating", unit="sample", enabled=progress):
        arrays = sample_arrays(sample, inputs, count)
        for k, (v, a) in enumerate(zip(inputs, arrays)):
            sinks = ([observed[v.name].observer] if v.name in observed else []) + watchers.get(v.name, [])
            for sink in sinks:
                try:
                    sink.update(a)
                except ValueError as e:
                    raise ValueError(f"calibration sample {count}, input {k} ('{printable(v.name)}'): {e}") from None
        graph.run(*arrays, observe=observe)
        count += 1
    if count == 0:
        raise ValueError("calibration is empty: quantize needs at least one input sample; give e.g. "
                         "[(x,) for x in samples], one tuple of the model's inputs per sample")
    return count
