import numpy as np
import pytest

import cortexm
from numpy_reference.common import quantize_multiplier
from numpy_reference.transpose_conv import transpose_conv2d

ops = cortexm.ops


def random_case(rng):
    n, h, w = (int(v) for v in rng.integers(1, 6, size=3))
    c_in, c_out = (int(v) for v in rng.integers(1, 8, size=2))
    kh, kw = (int(v) for v in rng.integers(1, 5, size=2))
    sh, sw = (int(v) for v in rng.integers(1, 4, size=2))
    pad = (int(rng.integers(0, kh)), int(rng.integers(0, kw)), int(rng.integers(0, kh)),
           int(rng.integers(0, kw)))
    out_pad = (int(rng.integers(0, sh)), int(rng.integers(0, sw)))
    return n, h, w, c_in, c_out, kh, kw, (sh, sw), pad, out_pad


def test_randomized_awkward_cases():
    rng = np.random.default_rng(17)
    done = 0
    while done < 80:
        n, h, w, c_in, c_out, kh, kw, stride, pad, out_pad = random_case(rng)
        if (h - 1) * stride[0] + kh - pad[0] - pad[2] + out_pad[0] < 1 or \
                (w - 1) * stride[1] + kw - pad[1] - pad[3] + out_pad[1] < 1:
            continue
        x = rng.integers(-128, 128, size=(n, h, w, c_in), dtype=np.int8)
        wt = rng.integers(-127, 128, size=(c_out, kh, kw, c_in), dtype=np.int8)
        bias = rng.integers(-5000, 5000, size=c_out, dtype=np.int32) if rng.random() < 0.7 else None
        qs = [quantize_multiplier(float(s)) for s in rng.uniform(1e-5, 4e-3, size=c_out)]
        mults, shifts = [q[0] for q in qs], [q[1] for q in qs]
        in_off, out_off = int(rng.integers(-127, 129)), int(rng.integers(-128, 128))
        lo = int(rng.integers(-128, 100))
        hi = int(rng.integers(lo, 128))
        got = ops.quantized_transpose_conv2d(x, wt, bias, stride, pad, out_pad, in_off, out_off,
                                             mults, shifts, lo, hi)
        want = transpose_conv2d(x, wt, bias, stride, pad, out_pad, in_off, out_off, mults, shifts,
                                lo, hi)
        assert got.shape == want.shape
        assert np.array_equal(got, want)
        done += 1


def test_matches_torch_conv_transpose():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x = rng.integers(-128, 128, size=(1, 5, 4, 3), dtype=np.int8)
    w = rng.integers(-127, 128, size=(4, 3, 3, 3), dtype=np.int8)  # OHWI
    s_in, s_w, s_out = 0.05, 0.01, 0.2
    mult, shift = quantize_multiplier(s_in * s_w / s_out)
    got = ops.quantized_transpose_conv2d(x, w, None, (2, 2), (1, 1), (1, 1), 0, 0, [mult] * 4,
                                         [shift] * 4)
    xt = torch.tensor(x.astype(np.float32) * s_in).permute(0, 3, 1, 2)
    wt = torch.tensor(w.astype(np.float32) * s_w).permute(3, 0, 1, 2)  # [C_in, C_out, KH, KW]
    real = torch.nn.functional.conv_transpose2d(xt, wt, stride=2, padding=1, output_padding=1)
    real = np.clip(real.permute(0, 2, 3, 1).numpy() / s_out, -128, 127)
    assert got.shape == real.shape
    assert np.max(np.abs(real - got)) <= 0.5 + 1e-3


def test_bad_arguments_raise_value_error():
    x = np.zeros((1, 3, 3, 2), np.int8)
    w = np.zeros((2, 3, 3, 2), np.int8)
    args = dict(input_offset=0, output_offset=0, requantize_multipliers=[1 << 30] * 2,
                requantize_shifts=[0, 0])
    with pytest.raises(ValueError, match="output_padding"):
        ops.quantized_transpose_conv2d(x, w, None, (2, 2), (0, 0), (2, 0), **args)
    with pytest.raises(ValueError, match=r"weight.shape\[3\]"):
        ops.quantized_transpose_conv2d(x, w[..., :1], None, (2, 2), (0, 0), (0, 0), **args)
