"""Signal-to-quantization-noise ratio of a quantized result against its float reference."""

import numpy as np


def sqnr_db(reference, quantized) -> float:
    """10 log10(sum ref^2 / sum (ref - q)^2) in dB; each side an array or a list of arrays
    (concatenated, raveled)."""
    def flat(x):
        parts = x if isinstance(x, (list, tuple)) else [x]
        return np.concatenate([np.asarray(p, np.float64).ravel() for p in parts])

    ref, out = flat(reference), flat(quantized)
    return float(10 * np.log10((ref ** 2).sum() / max(((ref - out) ** 2).sum(), 1e-30)))
