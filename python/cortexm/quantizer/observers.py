"""Observers and quantization parameters, in numpy with PyTorch's float32 arithmetic.

An observer sees every calibration tensor of one activation and then gives its qparams:
- MinMaxObserver: running min / max (torch.ao MinMaxObserver).
- MovingAverageMinMaxObserver: min / max averaged over batches, averaging constant 0.01.
- HistogramObserver: a 2048-bin running histogram and the range that minimises the L2 quantization
  error over it (torch.ao HistogramObserver: the same histogram merging and non-linear search).

Activations are int8 per-tensor affine in [-128, 127] (range widened to include 0) or int16
symmetric (zero point 0) in [-32768, 32767], with PyTorch's formulas for scale and zero point. A
constant-zero activation gets scale = float32 eps (1.19e-7), so scale is always > 0. Weights are
int8 symmetric in [-127, 127]; biases int32 with scale = input scale x weight scale.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

F32 = np.float32
EPS = float(np.finfo(np.float32).eps)
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

# dtype -> (quant_min, quant_max, symmetric)
ACTIVATION_RANGES = {"int8": (-128, 127, False), "int16": (-32768, 32767, True)}
WEIGHT_QMIN, WEIGHT_QMAX = -127, 127
WEIGHT16_QMIN, WEIGHT16_QMAX = -32767, 32767  # int16_weights (16x16 layers)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True)
class QParams:
    """Per-tensor quantization parameters of one activation."""

    scale: float
    zero_point: int
    quant_min: int
    quant_max: int
    dtype: str

    def attrs(self) -> dict:
        """Attributes of quantized_decomposed.{quantize,dequantize}_per_tensor."""
        return {"scale": self.scale, "zero_point": self.zero_point, "quant_min": self.quant_min,
                "quant_max": self.quant_max, "dtype": self.dtype}

    def as_value_qparams(self) -> dict:
        return {"scales": [self.scale], "zero_points": [self.zero_point], "axis": -1,
                "quant_min": self.quant_min, "quant_max": self.quant_max}


def qparams_from_min_max(min_val: float, max_val: float, dtype: str = "int8") -> QParams:
    """PyTorch's _calculate_qparams (per-tensor affine or symmetric) in float32."""
    qmin, qmax, symmetric = ACTIVATION_RANGES[dtype]
    min_neg = F32(min(F32(min_val), F32(0)))
    max_pos = F32(max(F32(max_val), F32(0)))
    if symmetric:
        amax = F32(max(-min_neg, max_pos))
        scale = F32(max(F32(amax / F32((qmax - qmin) / 2)), F32(EPS)))
        return QParams(float(scale), 0, qmin, qmax, dtype)
    scale = F32(max(F32((max_pos - min_neg) / F32(qmax - qmin)), F32(EPS)))
    zero_point = qmin - int(np.rint(F32(min_neg / scale)))
    zero_point = int(min(max(zero_point, qmin), qmax))
    return QParams(float(scale), zero_point, qmin, qmax, dtype)


def quantize_array(x: np.ndarray, scale, zero_point, qmin: int, qmax: int) -> np.ndarray:
    """The graph's quantize arithmetic: clamp(zp + round_half_even(x * (1 / scale))) in float32.
    scale / zero_point may be arrays broadcasting against x. Returns float64 integers."""
    inv = F32(1) / np.asarray(scale, dtype=F32)
    q = np.rint(np.asarray(x, dtype=F32) * inv) + np.asarray(zero_point, dtype=F32)
    return np.clip(q.astype(np.float64), qmin, qmax)


def quantize_weight(w: np.ndarray, axis: int | None, dtype: str = "int8") -> tuple[np.ndarray, np.ndarray]:
    """int8 symmetric [-127, 127] weights (dtype 'int16': [-32767, 32767], scale max|w| / 32767):
    per channel along axis, or per tensor (axis None), rounded to nearest. Returns (int data,
    float32 scales (one per channel, or one)). An all-zero channel gets eps."""
    qmin, qmax = (WEIGHT16_QMIN, WEIGHT16_QMAX) if dtype == "int16" else (WEIGHT_QMIN, WEIGHT_QMAX)
    w = np.asarray(w, dtype=F32)
    if axis is None:
        amax = np.abs(w).max(keepdims=True).reshape(1) if w.size else np.zeros(1, F32)
        bshape = (1,) * w.ndim
    else:
        moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
        amax = np.abs(moved).max(axis=1) if moved.shape[1] else np.zeros(w.shape[axis], F32)
        bshape = [1] * w.ndim
        bshape[axis] = w.shape[axis]
    scales = np.maximum(amax.astype(F32) / F32((qmax - qmin) / 2), F32(EPS)).astype(F32)
    q = quantize_array(w, scales.reshape(bshape), 0, qmin, qmax)
    return q.astype(np.int16 if dtype == "int16" else np.int8), scales


def quantize_bias(b: np.ndarray, input_scale: float, weight_scales: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int32 bias with scale = input scale x weight scale (per channel), zero point 0.
    Returns (int32 data, float32 scales)."""
    scales = (F32(input_scale) * np.asarray(weight_scales, dtype=F32)).astype(F32)
    q = quantize_array(b, scales, 0, INT32_MIN, INT32_MAX)
    return q.astype(np.int32), scales


def quantize_bias_int64(b: np.ndarray, input_scale: float, weight_scales: np.ndarray,
                        name: str = "bias") -> tuple[np.ndarray, np.ndarray]:
    """int64 bias of an int16-weight op: scale = input scale x weight scale (per channel, 2^8 finer
    than with int8 weights, so an int32 could overflow), zero point 0, rounded half to even in
    float64 (float32 would lose the low bits of values beyond 2^24). Returns (int64 data, float32
    scales). ValueError when a value does not fit int64 (a bias far outside any real model's)."""
    scales = (F32(input_scale) * np.asarray(weight_scales, dtype=F32)).astype(F32)
    q = np.rint(np.asarray(b, dtype=np.float64) / scales.astype(np.float64))
    if not np.all(np.isfinite(q)) or np.abs(q).max(initial=0.0) >= 2.0**63:
        raise ValueError(f"{name}: values up to {np.abs(np.asarray(b)).max()} do not fit int64 at scales "
                         f"down to {scales.min()}")
    return q.astype(np.int64), scales


class Observer:
    """Sees float32 arrays (update) and gives qparams (qparams) for one activation."""

    name = "observer"

    def __init__(self, dtype: str = "int8"):
        if dtype not in ACTIVATION_RANGES:
            raise ValueError(f"activation dtype must be one of {sorted(ACTIVATION_RANGES)}, got {dtype!r}")
        self.dtype = dtype
        self.min_val = float("inf")
        self.max_val = float("-inf")

    @property
    def observed(self) -> bool:
        return self.min_val <= self.max_val

    def update(self, x: np.ndarray) -> None:
        raise NotImplementedError

    def range(self) -> tuple[float, float]:
        """The (min, max) the qparams are computed from."""
        return self.min_val, self.max_val

    def qparams(self) -> QParams:
        if not self.observed:
            raise ValueError(f"{self.name} observer has seen no data")
        return qparams_from_min_max(*self.range(), dtype=self.dtype)


def _min_max(x: np.ndarray) -> tuple[np.float32, np.float32]:
    x = np.asarray(x, dtype=F32)
    return x.min(), x.max()


def _too_wide(lo, hi, what: str) -> str:
    return (f"values from {float(lo):.6g} to {float(hi):.6g} {what}: scale the model's inputs (or this "
            f"activation) into a range float32 quantization can hold")


def _check_span(lo, hi) -> None:
    """ValueError when the int8 / int16 range [min(lo, 0), max(hi, 0)] overflows float32 (its scale
    would be inf)."""
    with np.errstate(over="ignore"):
        span = F32(max(F32(hi), F32(0))) - F32(min(F32(lo), F32(0)))
    if not np.isfinite(span):
        raise ValueError(_too_wide(lo, hi, "span more than float32 holds"))


class MinMaxObserver(Observer):
    name = "minmax"

    def update(self, x: np.ndarray) -> None:
        if np.size(x) == 0:
            return
        lo, hi = _min_max(x)
        _check_span(min(F32(self.min_val), lo), max(F32(self.max_val), hi))
        self.min_val = float(min(F32(self.min_val), lo))
        self.max_val = float(max(F32(self.max_val), hi))


class MovingAverageMinMaxObserver(Observer):
    name = "moving_average_minmax"

    def __init__(self, dtype: str = "int8", averaging_constant: float = 0.01):
        super().__init__(dtype)
        self.averaging_constant = averaging_constant

    def update(self, x: np.ndarray) -> None:
        if np.size(x) == 0:
            return
        lo, hi = _min_max(x)
        _check_span(lo, hi)  # then so is the average of such ranges
        if not self.observed:
            self.min_val, self.max_val = float(lo), float(hi)
            return
        c = F32(self.averaging_constant)
        self.min_val = float(F32(self.min_val) + c * (lo - F32(self.min_val)))
        self.max_val = float(F32(self.max_val) + c * (hi - F32(self.max_val)))


def _linspace_f32(start, end, steps: int) -> np.ndarray:
    """torch.linspace in float32: the first half counts up from start, the second down from end."""
    start, end = F32(start), F32(end)
    step = F32((end - start) / F32(steps - 1))
    idx = np.arange(steps)
    up = start + step * idx.astype(F32)
    down = end - step * (steps - 1 - idx).astype(F32)
    return np.where(idx < steps // 2, up, down).astype(F32)


def _histc(x: np.ndarray, bins: int, lo, hi) -> np.ndarray:
    """torch.histc on float32 data: bin = trunc((x - lo) * bins / (hi - lo)); the last bin is closed."""
    lo, hi = float(lo), float(hi)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    left, right = F32(lo), F32(hi)
    x = np.asarray(x, dtype=F32).ravel()
    x = x[(x >= left) & (x <= right)]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        scaled = ((x - left) * F32(bins)) / F32(right - left)
    if not np.isfinite(scaled).all():
        raise ValueError(_too_wide(lo, hi, f"cannot be split into {bins} histogram bins in float32"))
    pos = scaled.astype(np.int64)
    pos[pos == bins] = bins - 1
    return np.bincount(pos, minlength=bins).astype(F32)


class HistogramObserver(Observer):
    """torch.ao.quantization.HistogramObserver in numpy (L2 norm, non-linear search)."""

    name = "histogram"

    def __init__(self, dtype: str = "int8", bins: int = 2048, upsample_rate: int = 16):
        super().__init__(dtype)
        self.bins = bins
        self.upsample_rate = upsample_rate
        self.histogram = np.zeros(bins, F32)
        self.dst_nbins = 2 ** (8 if dtype == "int8" else 16)

    def update(self, x: np.ndarray) -> None:
        x = np.asarray(x, dtype=F32).ravel()
        if x.size == 0:
            return
        x = x[np.isfinite(x)]  # torch ignores inf; calibration rejects NaN / inf before here
        if x.size == 0:
            return
        x_min, x_max = x.min(), x.max()
        if not self.observed:
            self.min_val, self.max_val = float(x_min), float(x_max)
            self.histogram = _histc(x, self.bins, x_min, x_max)
            return
        cur_min, cur_max = F32(self.min_val), F32(self.max_val)
        new_min, new_max = min(cur_min, x_min), max(cur_max, x_max)
        update = _histc(x, self.bins, new_min, new_max)
        if new_min == cur_min and new_max == cur_max:
            self.histogram = (self.histogram + update).astype(F32)
            return
        self.histogram = self._combine(self.histogram, cur_min, cur_max, update, new_min, new_max)
        self.min_val, self.max_val = float(new_min), float(new_max)

    def _combine(self, orig, orig_min, orig_max, update, new_min, new_max) -> np.ndarray:
        if orig_min == orig_max:
            moved = _histc(np.array([orig_min], F32), self.bins, new_min, new_max) * F32(orig.sum())
            return (moved + update).astype(F32)
        return (update + self._upscale(orig, orig_min, orig_max, new_min, new_max)).astype(F32)

    def _upscale(self, hist, orig_min, orig_max, new_min, new_max) -> np.ndarray:
        """The old histogram re-binned into [new_min, new_max] through 16x finer sub-bins."""
        fine_bins = self.bins * self.upsample_rate
        fine = np.repeat(hist, self.upsample_rate) / F32(self.upsample_rate)
        bin_size = F32(F32(orig_max - orig_min) / F32(fine_bins))
        mids = _linspace_f32(orig_min, orig_max, fine_bins + 1)[:-1] + F32(0.5) * bin_size
        edges = _linspace_f32(new_min, new_max, self.bins + 1)
        bucket = np.clip(np.searchsorted(edges, mids, side="right") - 1, 0, self.bins - 1)
        return np.bincount(bucket, weights=fine, minlength=self.bins).astype(F32)

    def _quantization_error(self, start_bin: int, end_bin: int) -> float:
        """L2 error of quantizing the histogram with [start_bin, end_bin] as the range."""
        bin_width = (self.max_val - self.min_val) / self.bins
        dst_width = bin_width * (end_bin - start_bin + 1) / self.dst_nbins
        if dst_width == 0.0:
            return 0.0
        dw = F32(dst_width)
        src_begin = (np.arange(self.bins) - start_bin).astype(F32) * F32(bin_width)
        src_end = src_begin + F32(bin_width)
        top = F32(self.dst_nbins - 1)
        dst_of_begin = np.clip(np.floor_divide(src_begin, dw), F32(0), top)
        dst_of_end = np.clip(np.floor_divide(src_end, dw), F32(0), top)
        density = self.histogram / F32(bin_width)
        half = F32(dst_width / 2)

        def norm(begin, end):
            return density * ((end * end * end - begin * begin * begin) / F32(3))

        total = norm(src_begin - (dst_of_begin + F32(0.5)) * dw, half)
        total = total + (dst_of_end - dst_of_begin - F32(1)) * norm(-half, half)
        total = total + norm(F32(-dst_width / 2), src_end - (dst_of_end * dw + half))
        return float(total.astype(F32).sum(dtype=F32))

    def _search(self) -> tuple[float, float]:
        """PyTorch's _non_linear_param_search: trim the quantile with the larger bin gain while the
        quantization error keeps falling."""
        if self.min_val == self.max_val:
            return self.min_val, self.max_val
        csum = np.cumsum(self.histogram, dtype=F32)
        cs = csum.tolist()
        total = float(self.histogram.sum(dtype=F32))
        step = 1e-5
        alpha, beta = 0.0, 1.0
        start, end = 0, self.bins - 1
        norm_min = float("inf")
        while alpha < beta:
            next_alpha, next_beta = alpha + step, beta - step
            # first bin in [start, end] with csum >= next_alpha * total (capped at end)
            l = min(end, max(start, bisect.bisect_left(cs, float(F32(next_alpha * total)))))
            # last bin in [start, end] with csum <= next_beta * total (at least start)
            r = max(start, min(end, bisect.bisect_right(cs, float(F32(next_beta * total))) - 1))
            next_start, next_end = start, end
            if l - start > end - r:
                next_start, alpha = l, next_alpha
            else:
                next_end, beta = r, next_beta
            if next_start == start and next_end == end:
                continue
            norm = self._quantization_error(next_start, next_end)
            if norm > norm_min:
                break
            norm_min, start, end = norm, next_start, next_end
        width = F32(F32(F32(self.max_val) - F32(self.min_val)) / F32(self.bins))
        return float(F32(self.min_val) + width * F32(start)), float(F32(self.min_val) + width * F32(end + 1))

    def range(self) -> tuple[float, float]:
        return self._search()


OBSERVERS = {cls.name: cls for cls in (HistogramObserver, MinMaxObserver, MovingAverageMinMaxObserver)}
