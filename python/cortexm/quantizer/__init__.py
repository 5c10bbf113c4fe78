"""cortexm.quantizer: post-training int8 quantization of a cortexm graph.

    qgraph = cortexm.quantize(graph, calibration)        # calibration: iterable of input tuples
    print(cortexm.quantization_report(qgraph))

quantize() annotates the graph with the patterns the op families of cortexm/ops/ register (patterns.py
holds the registry), runs the calibration samples through the interpreter to feed the observers
(observers.py), and returns a new graph in convert_pt2e form (convert.py). The input graph is left
as it was.

Modules: config (CortexMQuantizer), observers, patterns, annotator, calibrate, gptq, convert, auto
(precision='auto'), report, reciprocal_division (x / y as x * reciprocal(y)).
"""

from __future__ import annotations

from . import auto, gptq
from .annotator import annotate
from .calibrate import CalibrationWarning, calibrate, warn_if_few_samples
from .config import CortexMQuantizer
from .convert import convert
from .reciprocal_division import divisions_as_reciprocals
from ..qdq import is_quantized
from .report import QDQ_OPS, PrecisionChoice, QuantizationReport, ReportRow, quantization_report

__all__ = ["CalibrationWarning", "CortexMQuantizer", "QuantizationReport", "ReportRow", "is_quantized",
           "quantization_report", "quantize"]


def quantize(graph, calibration, quantizer: CortexMQuantizer | None = None, *, progress: bool = True,
             precision: str | None = None, lowering=None):
    """A new graph with int8 (or int16) activations and int8 weights, fake-quantized in convert_pt2e
    form: it still runs in graph.run, float in and float out.

    calibration: an iterable of samples, each a tuple of numpy arrays / torch tensors matching the
    graph's inputs (a single array counts as a 1-tuple). Raises ValueError for an empty calibration,
    NaN / inf in it, inputs that do not match the graph's shapes or dtypes, and graphs that are
    already quantized. An activation that is zero on every sample gets scale = float32 eps (and
    zero point -128), so every scale stays > 0. progress: a tqdm bar on a terminal.
    precision: 'int8', '16x8' or 'auto' (CortexMQuantizer(precision=...); with a quantizer, it must
    say the same). 'auto' calibrates once and searches for the fewest int16 groups meeting the
    quantizer's target (auto.py); quantization_report(qgraph).precision describes the choice.
    lowering: what 'auto' lowers its candidates with (auto.Lowering); cortexm.quantize passes
    cortexm.auto_precision's, the quantizer itself imports nothing above it.
    """
    if quantizer is None:
        quantizer = CortexMQuantizer(precision=precision)
    if not isinstance(quantizer, CortexMQuantizer):
        raise TypeError(f"quantizer must be a CortexMQuantizer, got {type(quantizer).__name__}")
    if precision is not None and precision != quantizer.precision:
        raise ValueError(f"precision={precision!r} but the quantizer's precision is {quantizer.precision!r}")
    if is_quantized(graph):
        raise ValueError("the graph is already quantized (it has quantize / dequantize ops); "
                         "lower it as it is instead of quantizing it again")
    graph = divisions_as_reciprocals(graph)
    if quantizer.precision == "auto":
        if lowering is None:
            raise ValueError("precision='auto' lowers its candidate graphs: call cortexm.quantize(graph, calibration, "
                             "precision='auto'), or pass lowering=cortexm.auto_precision.LOWERING")
        return auto.quantize_auto(graph, calibration, quantizer, progress, lowering)
    annotation = annotate(graph, quantizer)
    statistics = gptq.collect(annotation) if quantizer.weight_rounding == "gptq" else {}
    watchers = {}
    for stats, (node, index) in statistics.values():
        watchers.setdefault(node.inputs[index].name, []).append(stats)
    warn_if_few_samples(calibrate(graph, annotation, calibration, progress, watchers), quantizer.precision)
    return convert(graph, annotation, quantizer, {use: stats for use, (stats, _) in statistics.items()},
                   progress=progress)
