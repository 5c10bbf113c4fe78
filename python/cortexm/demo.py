"""`make demo`: the int8 kernels on real layer shapes, checked against float math.

Each layer gets float activations and weights, quantized the way a deployed model would be
(per-tensor activations, per-channel symmetric weights, int32 bias). The cortex_m kernel's int8
output is compared with the float layer's output quantized once: agreement within 1 LSB is what
CMSIS-NN's requantization promises, and the table says how close each layer came.
"""

import time

import numpy as np

from . import ops, quantize_multiplier

# (name, kind, N, H, W, C_in, C_out or depth multiplier, KH, KW, stride, pad (t, l, b, r))
LAYERS = [
    ("mobilenet_v2 stem 3x3/2", "conv", 1, 96, 96, 3, 32, 3, 3, 2, (0, 0, 1, 1)),
    ("mobilenet_v2 block3 expand 1x1", "conv", 1, 24, 24, 24, 144, 1, 1, 1, (0, 0, 0, 0)),
    ("mobilenet_v2 block3 depthwise 3x3", "depthwise", 1, 24, 24, 144, 1, 3, 3, 1, (1, 1, 1, 1)),
    ("mobilenet_v2 block3 project 1x1", "conv", 1, 24, 24, 144, 24, 1, 1, 1, (0, 0, 0, 0)),
    ("ds_cnn conv 10x4/2", "conv", 1, 49, 10, 1, 64, 10, 4, 2, (4, 1, 5, 1)),
    ("ds_cnn depthwise 3x3", "depthwise", 1, 25, 5, 64, 1, 3, 3, 1, (1, 1, 1, 1)),
    ("wav2letter conv1d k7 (as 1x7)", "conv", 1, 1, 50, 250, 250, 1, 7, 1, (0, 3, 0, 3)),
    ("mobilenet_v2 classifier 1280->1000", "linear", 1, 1, 1, 1280, 1000, 1, 1, 1, (0, 0, 0, 0)),
]


def _qparams(x):
    lo, hi = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    scale = max(hi - lo, 1e-8) / 255.0
    zero_point = int(np.clip(np.round(-128 - lo / scale), -128, 127))
    return scale, zero_point


def _quantize(x, scale, zero_point):
    return np.clip(np.round(x / scale) + zero_point, -128, 127).astype(np.int8)


def _float_conv(x, w, stride, pad, groups):
    """NHWC float convolution by explicit patches (w: [C_out, KH, KW, C_in/groups])."""
    n, h, wd, c = x.shape
    c_out, kh, kw, cg = w.shape
    xp = np.pad(x, ((0, 0), (pad[0], pad[2]), (pad[1], pad[3]), (0, 0)))
    oh = (h + pad[0] + pad[2] - kh) // stride + 1
    ow = (wd + pad[1] + pad[3] - kw) // stride + 1
    out = np.zeros((n, oh, ow, c_out), np.float64)
    per_group = c_out // groups
    for ky in range(kh):
        for kx in range(kw):
            patch = xp[:, ky:ky + stride * oh:stride, kx:kx + stride * ow:stride, :]
            for g in range(groups):
                xs = patch[..., g * cg:(g + 1) * cg]
                ws = w[g * per_group:(g + 1) * per_group, ky, kx, :]
                out[..., g * per_group:(g + 1) * per_group] += xs @ ws.T
    return out


def run_layer(rng, name, kind, n, h, w, c_in, c_out, kh, kw, stride, pad):
    x = rng.standard_normal((n, h, w, c_in)).astype(np.float32)
    if kind == "depthwise":
        out_channels = c_in * c_out
        wf = rng.standard_normal((out_channels, kh, kw, 1)).astype(np.float32) / np.sqrt(kh * kw)
    elif kind == "linear":
        out_channels = c_out
        wf = rng.standard_normal((c_out, c_in)).astype(np.float32) / np.sqrt(c_in)
    else:
        out_channels = c_out
        wf = rng.standard_normal((c_out, kh, kw, c_in)).astype(np.float32) / np.sqrt(kh * kw * c_in)
    bf = rng.standard_normal(out_channels).astype(np.float32) * 0.1

    s_in, zp_in = _qparams(x)
    w_axes = tuple(range(1, wf.ndim))
    s_w = np.maximum(np.abs(wf).max(axis=w_axes), 1e-8) / 127.0
    wq = np.clip(np.round(wf / s_w.reshape((-1,) + (1,) * (wf.ndim - 1))), -127, 127).astype(np.int8)
    bq = np.round(bf / (s_in * s_w)).astype(np.int32)
    xq = _quantize(x, s_in, zp_in)

    # The float layer on the dequantized operands; the output scale comes from its range.
    xd = (xq.astype(np.float64) - zp_in) * s_in
    wd = wq.astype(np.float64) * s_w.reshape((-1,) + (1,) * (wf.ndim - 1))
    if kind == "linear":
        ref = xd.reshape(n, c_in) @ wd.T + bq * s_in * s_w
    elif kind == "depthwise":
        ref = _float_conv(xd, wd, stride, pad, c_in) + bq * s_in * s_w
    else:
        ref = _float_conv(xd, wd, stride, pad, 1) + bq * s_in * s_w
    s_out, zp_out = _qparams(ref)
    multipliers, shifts = zip(*(quantize_multiplier(s_in * float(sw) / s_out) for sw in s_w))

    start = time.perf_counter()
    if kind == "linear":
        got = ops.quantized_linear(xq.reshape(n, c_in), wq, bq, input_offset=-zp_in, filter_offset=0,
                                   output_offset=zp_out, requantize_multipliers=list(multipliers),
                                   requantize_shifts=list(shifts), activation_min=-128,
                                   activation_max=127)
    elif kind == "depthwise":
        got = ops.quantized_depthwise_conv2d(
            xq, wq.transpose(3, 1, 2, 0).copy(), bq, stride=(stride, stride), padding=pad,
            dilation=(1, 1), depth_multiplier=c_out, input_offset=-zp_in, output_offset=zp_out,
            requantize_multipliers=list(multipliers), requantize_shifts=list(shifts),
            activation_min=-128, activation_max=127)
    else:
        got = ops.quantized_conv2d(xq, wq, bq, stride=(stride, stride), padding=pad, dilation=(1, 1),
                                   input_offset=-zp_in, output_offset=zp_out,
                                   requantize_multipliers=list(multipliers),
                                   requantize_shifts=list(shifts), activation_min=-128,
                                   activation_max=127)
    seconds = time.perf_counter() - start
    exact = np.clip(ref / s_out + zp_out, -128, 127).reshape(got.shape)
    lsb = np.abs(got.astype(np.float64) - exact)
    macs = got.size * (c_in if kind == "linear" else kh * kw * (1 if kind == "depthwise" else c_in))
    return got.shape, macs, seconds, float(lsb.max()), float(np.mean(lsb <= 1.0))


def main():
    rng = np.random.default_rng(2024)
    print("cortexm int8 kernels on real layer shapes (CMSIS-NN arithmetic, host build)")
    print("error: |int8 result - float layer output / output scale| in output LSB\n")
    header = f"{'layer':36} {'output (NHWC)':18} {'MACs':>10} {'GMAC/s':>7} {'max LSB':>8} {'<=1 LSB':>8}"
    print(header)
    print("-" * len(header))
    worst = 0.0
    for layer in LAYERS:
        shape, macs, seconds, max_lsb, within = run_layer(rng, *layer)
        worst = max(worst, 1.0 - within)
        print(f"{layer[0]:36} {str(tuple(shape)):18} {macs:>10} {macs / seconds / 1e9:>7.2f} "
              f"{max_lsb:>8.2f} {within:>8.2%}")
    print(f"\nevery layer within 1 LSB of float math for {1.0 - worst:.2%} or more of its outputs")
    if worst > 0.01:
        raise SystemExit("demo: a layer strayed more than 1 LSB on over 1% of its outputs")


if __name__ == "__main__":
    main()
