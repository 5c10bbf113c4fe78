"""Fixed-point helpers shared by the numpy references (CMSIS-NN / TFLite arithmetic)."""

import numpy as np


def wrap_int32(x):
    x = np.asarray(x, dtype=np.int64)
    return ((x + (1 << 31)) % (1 << 32)) - (1 << 31)


def requantize(acc, multiplier, shift):
    """acc * multiplier * 2**(shift - 31): left shift, doubling high multiply, rounding right shift."""
    acc = np.asarray(acc, dtype=np.int64)
    multiplier = np.asarray(multiplier, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    shifted = wrap_int32(acc << left)
    high = (shifted * multiplier + (1 << 30)) >> 31  # floor division: rounds halves up
    mask = (np.int64(1) << right) - 1
    remainder = high & mask
    quotient = high >> right
    threshold = (mask >> 1) + (quotient < 0)
    return quotient + (remainder > threshold)


def quantize_multiplier(scale):
    """TFLite QuantizeMultiplier, in Python floats."""
    if scale == 0:
        return 0, 0
    fraction, exponent = np.frexp(scale)
    q = int(np.floor(abs(fraction) * (1 << 31) + 0.5))  # halves away from zero (fraction > 0)
    if q == 1 << 31:
        q //= 2
        exponent += 1
    if exponent < -31:
        return 0, 0
    if exponent > 30:
        return (1 << 31) - 1, 30
    return q, int(exponent)


def reduce_multiplier(multiplier):
    """CMSIS-NN's REDUCE_MULTIPLIER: the 16-bit multiplier of the 16x8 kernels."""
    multiplier = np.asarray(multiplier, dtype=np.int64)
    return np.where(multiplier < 0x7FFF0000, (multiplier + (1 << 15)) >> 16, 0x7FFF)


def requantize_s64(acc, reduced_multiplier, shift):
    """arm_nn_requantize_s64: (acc * reduced) >> (14 - shift) truncated to 32 bits, then (+1) >> 1."""
    acc = np.asarray(acc, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    doubled = wrap_int32((acc * np.asarray(reduced_multiplier, np.int64)) >> (14 - shift))
    return (doubled + 1) >> 1
