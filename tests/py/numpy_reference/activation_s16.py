"""TFLite's int16 lookup table: LUTPopulate<int16_t> (513 entries over the whole int16 input range,
midpoint correction) in float64, and lut_lookup's interpolation between the entries around x."""

import numpy as np

TABLE_SIZE = 513


def _round_away(v):
    """std::round: halves away from zero."""
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def lut_populate_s16(fn, in_scale, out_scale, out_min=-32768, out_max=32767):
    """The 513-entry table of fn (float64 -> float64) for symmetric int16 input and output.
    Entry i is fn at -32768 s_in + i * step, step = 65535 s_in / 512, less half the error of
    interpolating the segment's midpoint; the last entry is fn at 32767 s_in. Non-finite fn values
    saturate (+-inf) or count as 0 (NaN, as quantize does)."""
    in_min, in_max = in_scale * -32768.0, in_scale * 32767.0
    out_lo, out_hi = out_scale * -32768.0, out_scale * 32767.0
    step = (in_max - in_min) / 512
    inv = 65536.0 / (out_hi - out_lo)

    def f(x):
        with np.errstate(all="ignore"):
            y = np.asarray(fn(np.asarray(x, np.float64)), np.float64)
        return np.clip(np.nan_to_num(y, nan=0.0, posinf=1e30, neginf=-1e30), -1e30, 1e30)

    i = np.arange(512, dtype=np.float64)
    val = f(in_min + i * step)
    mid = f(in_min + i * step + step / 2)
    nxt = f(in_min + (i + 1) * step)
    sample = _round_away(val * inv)
    interp = _round_away((nxt * inv + _round_away(val * inv)) / 2)
    bias = _round_away((interp - _round_away(mid * inv)) / 2)
    table = np.empty(TABLE_SIZE, np.float64)
    table[:512] = sample - bias
    table[512] = _round_away(f(in_max) * inv)
    return np.clip(table, out_min, out_max).astype(np.int16)


def lut_lookup_s16(x, table):
    """Entry (x + 32768) // 128 and the next, interpolated at (x + 32768) % 128 / 128, half up."""
    u = x.astype(np.int64) + 32768
    lo = table.astype(np.int64)[u // 128]
    hi = table.astype(np.int64)[u // 128 + 1]
    return (lo + np.floor_divide((hi - lo) * (u % 128) + 64, 128)).astype(np.int16)
