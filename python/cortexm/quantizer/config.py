"""CortexMQuantizer: the configuration cortexm.quantize follows."""

from __future__ import annotations

from .observers import ACTIVATION_RANGES, OBSERVERS, Observer


class CortexMQuantizer:
    """How cortexm.quantize quantizes a graph.

    activation_observer: 'histogram' (default; L2-optimal range like PyTorch's HistogramObserver),
        'minmax' or 'moving_average_minmax' (averaging constant 0.01).
    per_channel: weights of conv1d / conv2d / depthwise / linear / addmm get one scale per output
        channel (axis 0 of the weight) when True, one scale per tensor when False.
    activation_dtype: 'int8' (affine, [-128, 127]) or 'int16' (symmetric, zero point 0).
    """

    def __init__(self, activation_observer: str = "histogram", per_channel: bool = True,
                 activation_dtype: str = "int8"):
        if activation_observer not in OBSERVERS:
            raise ValueError(f"activation_observer must be one of {sorted(OBSERVERS)}, "
                             f"got {activation_observer!r}")
        if activation_dtype not in ACTIVATION_RANGES:
            raise ValueError(f"activation_dtype must be one of {sorted(ACTIVATION_RANGES)}, "
                             f"got {activation_dtype!r}")
        self.activation_observer = activation_observer
        self.per_channel = bool(per_channel)
        self.activation_dtype = activation_dtype

    def make_observer(self) -> Observer:
        return OBSERVERS[self.activation_observer](self.activation_dtype)

    def softmax_qparams(self) -> tuple[float, int]:
        """Fixed (scale, zero point) of a softmax output: [0, 1) over the whole range."""
        return (1 / 256, -128) if self.activation_dtype == "int8" else (1 / 32768, 0)

    def log_softmax_qparams(self) -> tuple[float, int] | None:
        """Fixed (scale, zero point) of a log_softmax output: TFLite's int8 (16/256, 127), i.e.
        [-16, 0]; None (observed) for int16."""
        return (16 / 256, 127) if self.activation_dtype == "int8" else None

    def __repr__(self) -> str:
        return (f"CortexMQuantizer(activation_observer={self.activation_observer!r}, "
                f"per_channel={self.per_channel}, activation_dtype={self.activation_dtype!r})")
