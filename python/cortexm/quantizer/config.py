"""CortexMQuantizer: the configuration cortexm.quantize follows."""

from __future__ import annotations

import math
import numbers

from .observers import ACTIVATION_RANGES, OBSERVERS, Observer

WEIGHT_ROUNDINGS = ("nearest", "gptq")
PRECISIONS = {"int8": "int8", "16x8": "int16", "auto": None}  # precision -> activation_dtype
# TFLite's fixed output (scale, zero point) of the bounded ops, per kind and activation dtype (None:
# observed), registered by the family modules of cortexm.ops.
FIXED_QPARAMS: dict[tuple[str, str], tuple[float, int] | None] = {}


def register_fixed_qparams(kind: str, int8: tuple[float, int] | None, int16: tuple[float, int] | None) -> None:
    FIXED_QPARAMS[(kind, "int8")] = int8
    FIXED_QPARAMS[(kind, "int16")] = int16


def _names(names, option: str, kind: str) -> frozenset:
    """A collection of value names as a frozenset (read once: a generator counts); TypeError for one
    string, a non-string or what is not a collection."""
    if isinstance(names, (str, bytes)):
        raise TypeError(f"{option} must be a collection of {kind} names, not one string")
    try:
        names = list(names)
    except TypeError:
        raise TypeError(f"{option} must be a collection of {kind} names, got {type(names).__name__}") from None
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{option} holds {name!r}, not a {kind} name")
    return frozenset(names)


def _index(value) -> bool:
    """An int >= 0 that is not a bool (True would pass for output 1)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _finite_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


class CortexMQuantizer:
    """How cortexm.quantize quantizes a graph.

    activation_observer: 'histogram' (default; L2-optimal range like PyTorch's HistogramObserver),
        'minmax' or 'moving_average_minmax' (averaging constant 0.01).
    per_channel: weights of conv1d / conv2d / depthwise / linear / addmm get one scale per output
        channel (axis 0 of the weight) when True, one scale per tensor when False.
    activation_dtype: 'int8' (affine, [-128, 127]) or 'int16' (symmetric, zero point 0).
    int16_activations: names of activation values of the float graph quantized int16 whatever
        activation_dtype says, for a front end whose dynamic range int8 cannot hold (silero's
        waveform, STFT output and magnitude). The values reading them with the same qparams
        (slices, pads) follow. Each name must be a value with its own qparams: a graph input or a
        quantized op's output that does not share another value's qparams.
    int16_weights: names of weight constants of the float graph (the constant values, e.g. silero's
        'encoder.0.reparam_conv.weight', 'decoder.rnn.weight_ih') quantized symmetric int16
        ([-32767, 32767], scale max|w| / 32767, per channel along the weight's output axis as int8
        weights are, or per tensor with per_channel=False), rounded to nearest (GPTQ rounds only
        int8 weights), their biases int64. Each must be the weight of a conv1d / conv2d / depthwise
        / linear / addmm whose input activation is int16: such a layer is 16x16 (int16 x int16 into
        64-bit sums, twice the weight bytes of 16x8) and lowers to quantized_conv2d_s16w16 /
        quantized_linear_s16w16. Checked when the graph is converted (ValueError naming the weight,
        the op and why).
    fuse_magnitude: sqrt(a * a + b * b), each intermediate read once, is one match: the power
        a^2 + b^2 is not quantized (it spans twice the dynamic range of a and b). Off by default:
        cortexm.lower has no kernel for the fused magnitude yet, so such a graph lowers with a float
        region.
    weight_rounding: 'nearest' (default) or 'gptq': conv / linear / addmm weights rounded by GPTQ
        against the calibration inputs of each op (same scales, different integers; see gptq.py).
        Calibration then also accumulates each op's input second moments (columns^2 floats per
        weight). A weight whose op saw fewer input vectors than it has columns (channels x kernel
        taps) rounds to nearest: give GPTQ more calibration samples than the observers need.
    precision: 'int8' (activation_dtype='int8'), '16x8' (activation_dtype='int16') or 'auto': the
        fewest activation groups in int16 (and GPTQ weights when they help) that meet the target
        (auto.py). Given, it sets activation_dtype (a different explicit activation_dtype is an
        error); auto decides int16_activations, fuse_magnitude and weight_rounding itself.
    target_sqnr_db: auto keeps all int8 when its output SQNR against float on the evaluation
        samples (the lowest over the graph's outputs) reaches this.
    tolerance_db: otherwise auto promotes the fewest groups that keep every output's SQNR within
        this of its SQNR in the all-16x8 graph (a state_feedback output: see there).
    state_feedback: {output index: input index} of a recurrent graph's state: the output the
        caller feeds back as that input at the next step (silero_vad: {1: 1}). In int8 and 16x8 the two
        share one scale and zero point (one observer over both), so a program with integer I/O
        takes its state output back byte for byte. An error there is
        carried into every later step, which one step's SQNR does not show (silero: int8 LSTM
        weights cost its state 0.49 dB on one step and doubled the worst streamed |p - p_float|), so
        auto keeps such an output at the SQNR of its best reach (all int16, int16 weights where
        they help): only what does not feed the state (a readout) can be demoted.
    min_gain_db: auto keeps a model all int8 when 16x8 everywhere gains less than this over int8
        on every output (the int8 activations are then not what limits its accuracy: random-weight
        mobilenet_v2_96 goes from 6 to 13 dB).
    metric, metric_target: auto's target instead of the SQNR: metric(qgraph) -> float, higher is
        better, met at >= metric_target (e.g. accuracy over held-out samples).
    evaluation: samples auto scores on (default: the first calibration samples that hold 256
        values of every output, at least 16: all 256 of silero's one-probability steps).
    cost_target: the target auto lowers to for the arena cost it reports.
    count_instructions: auto also runs the int8, auto and 16x8 programs for cost_target on its core
        under QEMU (cortexm.qemu: qemu-system-arm and the Arm toolchain, scripts/setup.sh) on the
        first evaluation sample and reports their executed instructions (not cycles).
    """

    def __init__(self, activation_observer: str = "histogram", per_channel: bool = True,
                 activation_dtype: str | None = None, int16_activations=(), fuse_magnitude: bool = False,
                 weight_rounding: str = "nearest", *, precision: str | None = None,
                 int16_weights=(), target_sqnr_db: float = 30.0, min_gain_db: float = 10.0, tolerance_db: float = 0.5, metric=None, metric_target=None,
                 evaluation=None, cost_target: str = "cortex-m55+int8", state_feedback=None,
                 count_instructions: bool = False):
        if precision is not None and precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {list(PRECISIONS)}, got {precision!r}")
        if precision is not None and activation_dtype is not None and PRECISIONS[precision] != activation_dtype:
            raise ValueError(f"precision={precision!r} conflicts with activation_dtype={activation_dtype!r}")
        if precision == "auto" and (int16_activations or int16_weights or weight_rounding != "nearest"):
            raise ValueError("precision='auto' chooses int16_activations, int16_weights and weight_rounding itself")
        if metric is not None and metric_target is None:
            raise ValueError("metric needs metric_target (the score the quantized graph must reach)")
        if metric is not None and not callable(metric):
            raise TypeError(f"metric must be callable(qgraph) -> float, got {type(metric).__name__}")
        if metric_target is not None and not _finite_number(metric_target):
            raise ValueError(f"metric_target must be a finite number, got {metric_target!r}")
        if not all(math.isfinite(v) for v in (target_sqnr_db, min_gain_db, tolerance_db)) or tolerance_db < 0:
            raise ValueError(f"target_sqnr_db, min_gain_db and tolerance_db must be finite (tolerance_db >= 0), "
                             f"got {target_sqnr_db}, {min_gain_db}, {tolerance_db}")
        self.precision = precision or ("16x8" if activation_dtype == "int16" else "int8")
        self.target_sqnr_db = float(target_sqnr_db)
        self.min_gain_db = float(min_gain_db)
        self.tolerance_db = float(tolerance_db)
        self.metric, self.metric_target = metric, metric_target
        self.evaluation = None if evaluation is None else list(evaluation)
        if self.evaluation is not None and not self.evaluation:
            raise ValueError("evaluation=[] holds no sample: give at least one input tuple to score on, "
                             "or None (the first calibration samples)")
        self.cost_target = cost_target
        self.count_instructions = bool(count_instructions)
        self.state_feedback = dict(state_feedback or {})
        for output, input_ in self.state_feedback.items():
            if not (_index(output) and _index(input_)):
                raise ValueError(f"state_feedback maps output indices to input indices (ints >= 0), "
                                 f"got {output!r}: {input_!r}")
        activation_dtype = activation_dtype or PRECISIONS[precision or "int8"] or "int8"
        if activation_observer not in OBSERVERS:
            raise ValueError(f"activation_observer must be one of {sorted(OBSERVERS)}, "
                             f"got {activation_observer!r}")
        if activation_dtype not in ACTIVATION_RANGES:
            raise ValueError(f"activation_dtype must be one of {sorted(ACTIVATION_RANGES)}, "
                             f"got {activation_dtype!r}")
        self.activation_observer = activation_observer
        self.per_channel = bool(per_channel)
        self.activation_dtype = activation_dtype
        self.int16_activations = _names(int16_activations, "int16_activations", "value")
        self.int16_weights = _names(int16_weights, "int16_weights", "weight")
        self.fuse_magnitude = bool(fuse_magnitude)
        if weight_rounding not in WEIGHT_ROUNDINGS:
            raise ValueError(f"weight_rounding must be one of {list(WEIGHT_ROUNDINGS)}, got {weight_rounding!r}")
        self.weight_rounding = weight_rounding

    def dtype_of(self, value_name: str) -> str:
        """The activation dtype of the value named value_name."""
        return "int16" if value_name in self.int16_activations else self.activation_dtype

    def make_observer(self, dtype: str | None = None) -> Observer:
        return OBSERVERS[self.activation_observer](dtype or self.activation_dtype)

    def fixed_qparams(self, kind: str, value_name: str) -> tuple[float, int] | None:
        """TFLite's fixed (scale, zero point) of a bounded op's output in the dtype of value_name:
        softmax and sigmoid [0, 1), tanh [-1, 1), int8 log_softmax [-16, 0]; None (observed) for
        int16 log_softmax. An observed range would clip where calibration never reached the bound
        (a sigmoid seen up to 0.988 reads every p above it as 0.988)."""
        return FIXED_QPARAMS[(kind, self.dtype_of(value_name))]

    def __repr__(self) -> str:
        extra = ""
        if self.precision == "auto":
            extra += f", precision='auto', target_sqnr_db={self.target_sqnr_db}"
        if self.int16_activations:
            extra += f", int16_activations={sorted(self.int16_activations)!r}"
        if self.int16_weights:
            extra += f", int16_weights={sorted(self.int16_weights)!r}"
        if self.fuse_magnitude:
            extra += ", fuse_magnitude=True"
        if self.weight_rounding != "nearest":
            extra += f", weight_rounding={self.weight_rounding!r}"
        return (f"CortexMQuantizer(activation_observer={self.activation_observer!r}, "
                f"per_channel={self.per_channel}, activation_dtype={self.activation_dtype!r}{extra})")
