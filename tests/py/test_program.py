"""Program files: writer, loader and host runtime against the graph interpreter, bit for bit."""

import errno
import os
from pathlib import Path
import shutil
import struct
import subprocess
import sys
import json
import re

import numpy as np
import pytest

import cortexm
from cortexm import _core
from numpy_reference.common import quantize_multiplier

RNG = np.random.default_rng(7)


def rand(shape, dtype):
    if dtype == "float32":
        return RNG.standard_normal(shape).astype(np.float32) * 3
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, size=shape).astype(dtype)


def assert_bit_exact(program, graph, *inputs):
    got = program.run(*inputs)
    want = graph.run(*inputs)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.dtype == b.dtype and a.shape == b.shape, k
        assert a.tobytes() == b.tobytes(), f"output {k} differs"


# --- small graphs, one op (or a short chain) each -------------------------------------------

Q = {"scales": [0.05], "zero_points": [3]}


def g_cat_channels_last():
    g = cortexm.Graph()
    a = g.add_input("a", [1, 3, 4, 5], "int8", qparams=Q)
    b = g.add_input("b", [1, 2, 4, 5], "int8", qparams=Q)
    a_cl = g.call("dim_order_ops._clone_dim_order.default", [a], {"dim_order": [0, 2, 3, 1]})
    b_cl = g.call("dim_order_ops._clone_dim_order.default", [b], {"dim_order": [0, 2, 3, 1]})
    g.outputs = [g.call("aten.cat.default", [a_cl, b_cl], {"dim": 1})]
    return g, [rand((1, 3, 4, 5), "int8"), rand((1, 2, 4, 5), "int8")]


def g_slice_select_split():
    g = cortexm.Graph()
    x = g.add_input("x", [4, 9, 6], "int8")
    s = g.call("aten.slice_copy.Tensor", [x], {"dim": 1, "start": -8, "end": 9, "step": 3})
    t = g.call("aten.select_copy.int", [s], {"dim": -1, "index": -2})
    parts = g.call("aten.split_with_sizes_copy.default", [x], {"split_sizes": [2, 5, 2], "dim": 1})
    g.outputs = [t, *parts]
    return g, [rand((4, 9, 6), "int8")]


def g_permute_view():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3, 4, 5], "float32")
    p = g.call("aten.permute_copy.default", [x], {"dims": [2, 0, -1, 1]})
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": [0, 2, 3, 1]})
    v = g.call("aten.view_copy.default", [cl], {"size": [6, 20]})  # channels-last bytes, logical view
    u = g.call("aten.unsqueeze_copy.default", [v], {"dim": 1})
    sq = g.call("aten.squeeze_copy.dims", [u], {"dim": [1]})
    g.outputs = [p, sq]
    return g, [rand((2, 3, 4, 5), "float32")]


def g_pads():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3, 7], "int8", qparams=Q)
    c = g.call("aten.constant_pad_nd.default", [x], {"pad": [2, -1, -1, 3], "value": -5.0})
    r = g.call("aten.reflection_pad1d.default", [x], {"padding": [3, 2]})
    # the same pads on a permuted (non-contiguous) layout take the strided path
    xp = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": [2, 0, 1]})
    cp = g.call("aten.constant_pad_nd.default", [xp], {"pad": [1, 2, 0, -1], "value": 7.0})
    g.outputs = [c, r, cp]
    return g, [rand((2, 3, 7), "int8")]


def g_upsample():
    g = cortexm.Graph()
    x = g.add_input("x", [1, 3, 5, 4], "int8", qparams=Q)
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": [0, 2, 3, 1]})
    g.outputs = [g.call("aten.upsample_nearest2d.default", [cl], {"output_size": [8, 9]}),  # strided path
                 g.call("aten.upsample_nearest2d.default", [x], {"output_size": [11, 7]})]  # portable
    return g, [rand((1, 3, 5, 4), "int8")]


def g_softmax():
    g = cortexm.Graph()
    x = g.add_input("x", [3, 4, 5], "float32")
    a = g.call("aten._softmax.default", [x], {"dim": 1, "half_to_float": False})
    b = g.call("aten._log_softmax.default", [x], {"dim": -1, "half_to_float": False})
    g.outputs = [a, b]
    return g, [rand((3, 4, 5), "float32")]


def g_unary_and_mean():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3, 4], "float32")
    outs = [g.call(op, [x], {}) for op in ["aten.relu.default", "aten.hardswish.default", "aten.silu.default",
                                           "aten.sigmoid.default", "aten.tanh.default", "aten.abs.default",
                                           "aten.hardsigmoid.default"]]
    outs.append(g.call("aten.sqrt.default", [outs[0]], {}))
    outs.append(g.call("aten.mean.dim", [x], {"dim": [-1, 0], "keepdim": True}))
    outs.append(g.call("aten.mean.dim", [x], {"dim": [], "keepdim": False}))
    g.outputs = outs
    return g, [rand((2, 3, 4), "float32")]


def g_quantize_roundtrip():
    g = cortexm.Graph()
    x = g.add_input("x", [3, 17], "float32")
    attrs8 = {"scale": 0.037, "zero_point": -4, "quant_min": -128, "quant_max": 127, "dtype": "int8"}
    attrs16 = {"scale": 0.0011, "zero_point": 5, "quant_min": -32768, "quant_max": 32767, "dtype": "int16"}
    q8 = g.call("cortex_m.quantize_per_tensor.default", [x], attrs8)
    q16 = g.call("cortex_m.quantize_per_tensor.default", [x], attrs16)
    g.outputs = [g.call("cortex_m.dequantize_per_tensor.default", [q8], attrs8),
                 g.call("cortex_m.dequantize_per_tensor.default", [q16], attrs16), q8]
    return g, [rand((3, 17), "float32")]


def g_cat_and_linear():
    """Data movement on channels-last bytes and an int8 linear with constant weights and bias."""
    g, inputs = g_cat_channels_last()
    c = g.add_input("c", [3, 8], "int8")
    w = g.add_constant("w", rand((4, 8), "int8"))
    b = g.add_constant("b", RNG.integers(-5000, 5000, size=4).astype(np.int32))
    lin = g.call("cortex_m.quantized_linear.default", [c, w, b],
                 {"input_offset": 3, "filter_offset": 0, "output_offset": -2,
                  "requantize_multipliers": [1 << 30, 1 << 29, 3 << 28, 1 << 30],
                  "requantize_shifts": [-7, -6, -8, -7]}, name="fc")
    g.outputs = [*g.outputs, lin]
    return g, [*inputs, rand((3, 8), "int8")]


def g_int8_softmax_and_lut():
    """cortex_m softmax / log_softmax along the innermost-in-memory dim, and a LUT activation."""
    g = cortexm.Graph()
    x = g.add_input("x", [2, 5, 3, 4], "int8", qparams=Q)
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": [0, 2, 3, 1]})
    m, sh, dmin = cortexm.ops.softmax_scaling(0.05)
    sm = g.call("cortex_m.quantized_softmax.default", [cl],
                {"dim": 1, "input_multiplier": m, "input_shift": sh, "diff_min": dmin})  # C innermost
    lm, lsh, ldmin, div, rsh = cortexm.ops.log_softmax_scaling(0.05)
    ls = g.call("cortex_m.quantized_log_softmax.default", [x],
                {"dim": -1, "input_multiplier": lm, "input_shift": lsh, "diff_min": ldmin,
                 "reverse_scaling_divisor": div, "reverse_scaling_right_shift": rsh})
    table = g.add_constant("table", rand((256,), "int8"))
    act = g.call("cortex_m.quantized_activation.default", [cl, table], {})
    g.outputs = [sm, ls, act]
    return g, [rand((2, 5, 3, 4), "int8")]


def requantize_attrs(ratio, input_zp, output_zp, **clamp):
    m, s = quantize_multiplier(ratio / (1 << 20))
    return {"input_zero_point": input_zp, "output_zero_point": output_zp, "output_multiplier": m,
            "output_shift": s, **clamp}


def g_requantize():
    """cortex_m.requantize on contiguous and channels-last bytes, scale ratios below and above 1."""
    g = cortexm.Graph()
    x = g.add_input("x", [2, 5, 3, 7], "int8", qparams=Q)
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": [0, 2, 3, 1]})
    down = g.call("cortex_m.requantize.default", [cl],
                  requantize_attrs(0.37, -128, 127, activation_min=-100, activation_max=90), name="down")
    up = g.call("cortex_m.requantize.default", [x], requantize_attrs(5.3, 127, -128), name="up")
    tiny = g.call("cortex_m.requantize.default", [x], requantize_attrs(1e-6, 3, -5), name="tiny")
    g.outputs = [down, up, tiny]
    return g, [rand((2, 5, 3, 7), "int8")]


def minmax_attrs(sa, za, sb, zb, so, zo):
    twice = 2 * max(sa, sb)
    (ma, sha), (mb, shb), (mo, sho) = (quantize_multiplier(r) for r in
                                       (sa / twice, sb / twice, twice / ((1 << 20) * so)))
    return {"self_zero_point": za, "self_multiplier": ma, "self_shift": sha, "other_zero_point": zb,
            "other_multiplier": mb, "other_shift": shb, "output_zero_point": zo,
            "output_multiplier": mo, "output_shift": sho}


def g_minmax():
    """quantized_maximum / minimum: broadcasting (contiguous) and same-shape channels-last operands."""
    g = cortexm.Graph()
    a = g.add_input("a", [3, 1, 5], "int8")
    b = g.add_input("b", [4, 5], "int8")
    c = g.add_input("c", [2, 3, 4, 5], "int8")
    d = g.add_input("d", [2, 3, 4, 5], "int8")
    mx = g.call("cortex_m.quantized_maximum.default", [a, b],
                minmax_attrs(0.02, -7, 0.13, 100, 0.05, 3), name="max_broadcast")
    mn = g.call("cortex_m.quantized_minimum.default", [b, a],
                {**minmax_attrs(0.13, 100, 0.02, -7, 0.011, -128), "activation_max": 60}, name="min_broadcast")
    c_cl = g.call("dim_order_ops._clone_dim_order.default", [c], {"dim_order": [0, 2, 3, 1]})
    d_cl = g.call("dim_order_ops._clone_dim_order.default", [d], {"dim_order": [0, 2, 3, 1]})
    mx_cl = g.call("cortex_m.quantized_maximum.default", [c_cl, d_cl],
                   minmax_attrs(0.5, 127, 0.5, -128, 0.9, 0), name="max_cl")
    mn_cl = g.call("cortex_m.quantized_minimum.default", [c_cl, d_cl],
                   minmax_attrs(0.03, 0, 0.07, 12, 0.07, 12), name="min_cl")
    g.outputs = [mx, mn, mx_cl, mn_cl]
    return g, [rand((3, 1, 5), "int8"), rand((4, 5), "int8"), rand((2, 3, 4, 5), "int8"),
               rand((2, 3, 4, 5), "int8")]


def add_s16_attrs(sa, sb, so, act=(-32768, 32767)):
    twice_max = 2.0 * max(sa, sb)
    (ma, sha), (mb, shb), (mo, sho) = (quantize_multiplier(sa / twice_max), quantize_multiplier(sb / twice_max),
                                       quantize_multiplier(twice_max / (32768 * so)))
    return {"self_multiplier": ma, "self_shift": sha, "other_multiplier": mb, "other_shift": shb,
            "output_multiplier": mo, "output_shift": sho, "activation_min": act[0], "activation_max": act[1]}


def mul_s16_attrs(sa, sb, so, act=(-32768, 32767)):
    m, s = quantize_multiplier(sa * sb / so)
    return {"output_multiplier": m, "output_shift": s, "activation_min": act[0], "activation_max": act[1]}


def g_binary_s16():
    """quantized_add_s16 / mul_s16: broadcasting (contiguous), a square, channels-last broadcasting."""
    g = cortexm.Graph()
    a = g.add_input("a", [2, 3, 5], "int16")
    b = g.add_input("b", [3, 1], "int16")
    c = g.add_input("c", [2, 4, 3, 5], "int16")
    d = g.add_input("d", [2, 4, 1, 1], "int16")
    total = g.call("cortex_m.quantized_add_s16.default", [a, b], add_s16_attrs(3e-4, 7e-4, 9e-4), name="sum")
    prod = g.call("cortex_m.quantized_mul_s16.default", [total, a], mul_s16_attrs(9e-4, 3e-4, 4e-3, (0, 32767)),
                  name="prod")
    square = g.call("cortex_m.quantized_mul_s16.default", [b, b], mul_s16_attrs(7e-4, 7e-4, 1.6e-2), name="square")
    c_cl = g.call("dim_order_ops._clone_dim_order.default", [c], {"dim_order": [0, 2, 3, 1]})
    d_cl = g.call("dim_order_ops._clone_dim_order.default", [d], {"dim_order": [0, 2, 3, 1]})
    gated = g.call("cortex_m.quantized_mul_s16.default", [c_cl, d_cl], mul_s16_attrs(1e-3, 2e-4, 6e-3), name="gate")
    shifted = g.call("cortex_m.quantized_add_s16.default", [gated, d_cl],
                     add_s16_attrs(6e-3, 2e-4, 6e-3, (-1000, 32767)), name="cl")
    g.outputs = [prod, square, shifted]
    return g, [rand((2, 3, 5), "int16"), rand((3, 1), "int16"), rand((2, 4, 3, 5), "int16"),
               rand((2, 4, 1, 1), "int16")]


def mean_attrs(dims, keepdim, input_zp, output_zp, ratio):
    m, s = quantize_multiplier(ratio)
    return {"dim": dims, "keepdim": keepdim, "input_offset": -input_zp, "output_offset": output_zp,
            "output_multiplier": m, "output_shift": s}


def g_quantized_mean():
    """quantized_mean over blocks of the memory order: NHWC H and W, NHWC C, leading and all dims."""
    g = cortexm.Graph()
    x = g.add_input("x", [2, 6, 5, 7], "int8")
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": [0, 2, 3, 1]})
    hw = g.call("cortex_m.quantized_mean.default", [cl], mean_attrs([2, -1], False, -128, 5, 1.7 / 35), name="hw")
    c = g.call("cortex_m.quantized_mean.default", [cl], mean_attrs([1], True, 127, -128, 0.9 / 6), name="c")
    lead = g.call("cortex_m.quantized_mean.default", [x], mean_attrs([0, 1], True, 3, 0, 0.25 / 12), name="lead")
    every = g.call("cortex_m.quantized_mean.default", [x], mean_attrs([0, 1, 2, 3], False, -3, 7, 3.0 / 420),
                   name="all")
    g.outputs = [hw, c, lead, every]
    return g, [rand((2, 6, 5, 7), "int8")]


def g_batch_matmul():
    """quantized_batch_matmul with extreme offsets and the planner's declared scratch."""
    g = cortexm.Graph()
    a = g.add_input("a", [3, 5, 33], "int8")
    b = g.add_input("b", [3, 4, 33], "int8")
    m, s = quantize_multiplier(0.0021)
    attrs = {"lhs_offset": 128, "rhs_offset": -127, "output_offset": -9, "output_multiplier": m,
             "output_shift": s, "activation_min": -120, "activation_max": 110}
    ab = g.call("cortex_m.quantized_batch_matmul.default", [a, b], attrs, name="ab")
    aa = g.call("cortex_m.quantized_batch_matmul.default", [a, a],
                {**attrs, "lhs_offset": -3, "rhs_offset": -3, "scratch_bytes": 4 * 5}, name="aa")
    g.outputs = [ab, aa]
    return g, [rand((3, 5, 33), "int8"), rand((3, 4, 33), "int8")]


def g_transpose_conv():
    """quantized_transpose_conv2d: uneven stride, padding and output padding, with and without bias."""
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3, 5, 4], "int8")
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": [0, 2, 3, 1]})
    w = g.add_constant("w", RNG.integers(-127, 128, size=(6, 3, 2, 3)).astype(np.int8))  # OHWI
    bias = g.add_constant("bias", RNG.integers(-4000, 4000, size=6).astype(np.int32))
    mults, shifts = zip(*(quantize_multiplier(r) for r in (0.003, 0.0051, 0.0007, 0.012, 0.002, 0.0042)))
    attrs = {"stride": [2, 3], "padding": [1, 0], "output_padding": [1, 2], "input_offset": 128,
             "output_offset": -4, "requantize_multipliers": list(mults), "requantize_shifts": list(shifts)}
    y = g.call("cortex_m.quantized_transpose_conv2d.default", [cl, w, bias], attrs, name="up")
    y_nchw = g.call("dim_order_ops._clone_dim_order.default", [y], {"dim_order": [0, 1, 2, 3]})
    w1 = g.add_constant("w1", RNG.integers(-127, 128, size=(2, 1, 3, 3)).astype(np.int8))
    z = g.call("cortex_m.quantized_transpose_conv2d.default", [cl, w1, None],
               {"stride": [1, 2], "padding": [0, 1], "output_padding": [0, 1], "input_offset": -5,
                "output_offset": 11, "requantize_multipliers": [1 << 30, 3 << 28],
                "requantize_shifts": [-7, -9], "activation_min": -50, "activation_max": 50}, name="no_bias")
    g.outputs = [y_nchw, z]
    return g, [rand((2, 3, 5, 4), "int8")]


def g_convs():
    """quantized_conv2d (grouped, dilated, uneven padding), quantized_depthwise_conv2d (depth
    multiplier 2, strided) and quantized_conv2d_s16 on one channels-last input each."""
    g = cortexm.Graph()
    x = g.add_input("x", [1, 4, 7, 6], "int8")
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": [0, 2, 3, 1]})
    w = g.add_constant("w", RNG.integers(-127, 128, size=(6, 2, 3, 2)).astype(np.int8))  # OHWI, groups 2
    bias = g.add_constant("bias", RNG.integers(-4000, 4000, size=6).astype(np.int32))
    mults, shifts = zip(*(quantize_multiplier(0.001 * (k + 2)) for k in range(8)))
    conv = g.call("cortex_m.quantized_conv2d.default", [cl, w, bias],
                  {"stride": [1, 2], "padding": [1, 0, 0, 1], "dilation": [2, 1], "input_offset": 7,
                   "output_offset": -3, "requantize_multipliers": list(mults[:6]),
                   "requantize_shifts": list(shifts[:6])}, name="conv")
    dw_w = g.add_constant("dw_w", RNG.integers(-127, 128, size=(1, 3, 3, 8)).astype(np.int8))  # IHWO
    dw = g.call("cortex_m.quantized_depthwise_conv2d.default", [cl, dw_w, None],
                {"stride": [2, 2], "padding": [1, 1], "dilation": [1, 1], "depth_multiplier": 2,
                 "input_offset": -12, "output_offset": 5, "requantize_multipliers": list(mults),
                 "requantize_shifts": list(shifts), "activation_min": -100, "activation_max": 90},
                name="dw")
    x16 = g.add_input("x16", [1, 4, 5, 5], "int16")
    cl16 = g.call("dim_order_ops._clone_dim_order.default", [x16], {"dim_order": [0, 2, 3, 1]})
    w16 = g.add_constant("w16", RNG.integers(-127, 128, size=(3, 3, 2, 4)).astype(np.int8))
    bias16 = g.add_constant("bias16", RNG.integers(-40000, 40000, size=3).astype(np.int64))
    m16, s16 = zip(*(quantize_multiplier(r) for r in (0.02, 0.007, 0.05)))
    conv16 = g.call("cortex_m.quantized_conv2d_s16.default", [cl16, w16, bias16],
                    {"stride": [1, 1], "padding": [1, 0], "dilation": [1, 2],
                     "requantize_multipliers": list(m16), "requantize_shifts": list(s16)}, name="conv16")
    g.outputs = [g.call("dim_order_ops._clone_dim_order.default", [y], {"dim_order": [0, 1, 2, 3]})
                 for y in (conv, dw, conv16)]
    return g, [rand((1, 4, 7, 6), "int8"), rand((1, 4, 5, 5), "int16")]


def g_s16w16():
    """The 16x16 ops: quantized_conv2d_s16w16 (grouped, dilated, uneven padding) on a channels-last
    input and quantized_linear_s16w16 (per channel), int16 weights at +-32767, int64 biases beyond
    int32, shifts near -17 (their scales are 2^8 finer than 16x8's)."""
    g = cortexm.Graph()
    x = g.add_input("x", [2, 6, 5, 7], "int16")
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": [0, 2, 3, 1]})
    w = rand((9, 3, 2, 2), "int16")  # OHWI, groups 3
    w[0, 0, 0, :] = [32767, -32767]
    w_c = g.add_constant("w", w)
    bias = g.add_constant("bias", RNG.integers(-(1 << 40), 1 << 40, size=9).astype(np.int64))
    mults, shifts = zip(*(quantize_multiplier(r * 2.0 ** -26) for r in np.linspace(0.6, 1.9, 9)))
    conv = g.call("cortex_m.quantized_conv2d_s16w16.default", [cl, w_c, bias],
                  {"stride": [2, 1], "padding": [1, 0, 2, 1], "dilation": [1, 2],
                   "requantize_multipliers": list(mults), "requantize_shifts": list(shifts)}, name="conv_w16")
    y = g.add_input("y", [3, 37], "int16")
    lw = g.add_constant("lw", rand((5, 37), "int16"))
    lb = g.add_constant("lb", RNG.integers(-(1 << 38), 1 << 38, size=5).astype(np.int64))
    lm, ls = zip(*(quantize_multiplier(r * 2.0 ** -24) for r in (0.7, 1.1, 0.9, 1.5, 0.6)))
    lin = g.call("cortex_m.quantized_linear_s16w16.default", [y, lw, lb],
                 {"requantize_multipliers": list(lm), "requantize_shifts": list(ls),
                  "activation_min": -30000, "activation_max": 32767}, name="fc_w16")
    g.outputs = [g.call("dim_order_ops._clone_dim_order.default", [conv], {"dim_order": [0, 1, 2, 3]}), lin]
    return g, [rand((2, 6, 5, 7), "int16"), rand((3, 37), "int16")]


SMALL = [g_cat_channels_last, g_slice_select_split, g_permute_view, g_pads, g_upsample, g_softmax,
         g_unary_and_mean, g_quantize_roundtrip, g_cat_and_linear, g_int8_softmax_and_lut, g_requantize,
         g_minmax, g_quantized_mean, g_batch_matmul, g_transpose_conv, g_convs, g_s16w16]


@pytest.mark.parametrize("build", SMALL, ids=[f.__name__ for f in SMALL])
def test_small_graph_runs_bit_exact(build, tmp_path):
    graph, inputs = build()
    program = cortexm.to_program(graph, bundle_inputs=tuple(inputs))
    assert_bit_exact(program, graph, *inputs)
    for _ in range(2):  # fresh random inputs through the same arena
        fresh = [rand(x.shape, str(x.dtype)) for x in inputs]
        assert_bit_exact(program, graph, *fresh)
    path = tmp_path / "p.cmpte"
    program.save(path)
    loaded = cortexm.load_program(path)
    assert_bit_exact(loaded, graph, *inputs)
    assert loaded.verify() == 1


def test_float_fallback_ops_are_counted_and_profiled():
    graph, inputs = g_softmax()
    program = cortexm.to_program(graph)
    assert program.float_ops == 2
    prof = program.profile(*inputs)
    assert [p[1] for p in prof] == ["Softmax", "LogSoftmax"]
    assert all(s >= 0 for _, _, s in prof)


def test_to_program_takes_the_target_config_lower_took():
    graph, _ = g_softmax()
    target = cortexm.CortexMTargetConfig("cortex-m4")
    assert cortexm.to_program(graph, target=target).target == "cortex-m4+int8"
    assert cortexm.to_program(graph, target="cortex-m4+int8").target == "cortex-m4+int8"


def test_input_checks_name_the_input():
    graph, inputs = g_softmax()
    program = cortexm.to_program(graph)
    with pytest.raises(ValueError, match="input 0"):
        program.run(np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match="takes 1 inputs"):
        program.run(*inputs, *inputs)


def test_writer_refuses_every_node_the_runtime_cannot_run_at_once():
    """A PT2E quantize (lowering makes it cortex_m's) and a float transposed convolution (no portable
    kernel): one error names both, with the reason of each."""
    g = cortexm.Graph()
    x = g.add_input("x", [1, 2, 4, 4])
    w = g.add_constant("w", np.ones((2, 3, 2, 2), np.float32))
    up = g.call("aten.convolution.default", [x, w, None], {"stride": [2, 2], "padding": [0, 0], "dilation": [1, 1],
                                                           "transposed": True, "output_padding": [0, 0], "groups": 1},
                name="my_up", source="decoder.up")
    attrs = {"scale": 0.05, "zero_point": 0, "quant_min": -128, "quant_max": 127, "dtype": "int8"}
    g.outputs = [g.call("quantized_decomposed.quantize_per_tensor.default", [up], attrs, name="my_q")]
    with pytest.raises(NotImplementedError) as info:
        cortexm.to_program(g)
    assert str(info.value).splitlines() == [
        "2 nodes cannot run in a cortexm program:",
        "  node 'my_up' (aten.convolution.default) in module 'decoder.up' cannot run in a cortexm program: a "
        "transposed convolution has no float kernel in a program (the portable kernels have none): quantize it in "
        "int8 (precision='int8'; int16_activations names the values that need 16 bits) so cortexm.lower runs it as "
        "quantized_transpose_conv2d",
        "  node 'my_q' (quantized_decomposed.quantize_per_tensor.default) cannot run in a cortexm program: the "
        "runtime has no kernel for it: lower it (cortexm.lower) at a precision docs/ops.md gives its op a kernel "
        "in, or rewrite it with ops whose float fallback is yes there",
    ]


def test_quantize_narrows_over_its_input_and_the_loader_accepts_only_that_overlap():
    """float32 -> int8 / int16 from the input's first byte (the planner's in_place_narrowing); the
    loader refuses the output anywhere else over the input, and a dequantize (widening) over its input."""
    rng = np.random.default_rng(3)
    x_val = (rng.standard_normal((4, 8)) * 3).astype(np.float32)
    for dtype, lo in (("int8", -128), ("int16", -32768)):
        g = cortexm.Graph()
        x = g.add_input("x", [4, 8])
        attrs = {"scale": 0.05, "zero_point": 3, "quant_min": lo, "quant_max": -lo - 1, "dtype": dtype}
        g.outputs = [g.call("cortex_m.quantize_per_tensor.default", [x], attrs)]
        q = g.outputs[0]
        want = g.run(x_val).tobytes()
        planned = cortexm.to_program(g)
        rows = {b.name: b for b in planned.memory_plan().buffers}
        assert rows[q.name].offset == rows[x.name].offset and planned.arena_size == 128
        loaded = cortexm.Program(planned.data).memory_plan()
        assert "(over a graph input: set inputs before every run)" in loaded.table()
        assert loaded.lower_bound == 128  # x, then q alone
        assert planned.run(x_val).tobytes() == want
        assert cortexm.to_program(g, preserve_inputs=True).arena_size == 128 + 32 * (1 if dtype == "int8" else 2)
        layout = {"values": {x.id: 0, q.id: 0}, "scratch": {}, "arena_size": 128}
        assert cortexm.to_program(g, layout=layout).run(x_val).tobytes() == want
        for offset in (16, 64, 112):
            bad = {"values": {x.id: 0, q.id: offset}, "scratch": {}, "arena_size": 192}
            with pytest.raises(ValueError, match="other than in place .*start at the input's first byte"):
                cortexm.to_program(g, layout=bad)
    g = cortexm.Graph()
    x = g.add_input("x", [4, 8], dtype="int8")
    g.outputs = [g.call("cortex_m.dequantize_per_tensor.default", [x],
                        {"scale": 0.05, "zero_point": 3, "quant_min": -128, "quant_max": 127, "dtype": "int8"})]
    with pytest.raises(ValueError, match="overlaps an input"):
        cortexm.to_program(g, layout={"values": {x.id: 0, g.outputs[0].id: 0}, "scratch": {}, "arena_size": 128})


def test_writer_refuses_a_layout_with_too_little_scratch_or_arena():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3])
    g.outputs = [g.call("aten.relu.default", [x], {})]
    out = g.outputs[0]
    with pytest.raises(ValueError, match=r"tensors\[1\].*offset.*within the arena"):
        cortexm.to_program(g, layout={"values": {x.id: 0, out.id: 32}, "scratch": {}, "arena_size": 40})
    with pytest.raises(ValueError, match="overlaps an input"):
        cortexm.to_program(g, layout={"values": {x.id: 0, out.id: 16}, "scratch": {}, "arena_size": 64})
    with pytest.raises(ValueError, match="no offset for value"):
        cortexm.to_program(g, layout={"values": {x.id: 0}, "scratch": {}, "arena_size": 64})
    # Not ints, or not the layout's shape: ValueError naming the layout, not pybind's cast error.
    for bad in ({"values": {x.id: 0, out.id: 32.5}, "scratch": {}, "arena_size": 64},
                {"values": {x.id: 0, out.id: 32}, "scratch": {}, "arena_size": "64"},
                {"values": {x.id: 0, out.id: 32}, "scratch": {0: (0, 2**70)}, "arena_size": 64},
                {"values": {x.id: 0, out.id: 32}, "scratch": {}},
                [x.id, out.id]):
        with pytest.raises(ValueError, match=r"^write_program: layout = .* must be None, 'sequential' or"):
            cortexm.to_program(g, layout=bad)
    with pytest.raises(ValueError, match=r"offset = -32: tensor must lie within the arena"):
        cortexm.to_program(g, layout={"values": {x.id: 0, out.id: -32}, "scratch": {}, "arena_size": 64})


def test_verify_detects_a_wrong_expected_output():
    graph, inputs = g_softmax()
    program = cortexm.to_program(graph, bundle_inputs=[tuple(inputs)])
    assert program.verify() == 1
    ins, outs = program.bundled()[0]
    outs[0][0, 0, 0] += 1.0
    bad = _core.write_program(graph, "cortex-m55+int8", None, [(ins, outs)])
    with pytest.raises(ValueError, match="bundled case 0: output 0 differs"):
        cortexm.Program(bad).verify()
    with pytest.raises(ValueError, match="no bundled inputs"):
        cortexm.to_program(graph).verify()


def test_memory_plan_table_and_plot(tmp_path):
    graph, inputs = g_permute_view()
    plan = cortexm.to_program(graph).memory_plan()
    assert plan.arena_size >= plan.lower_bound > 0
    assert "lower bound" in plan.table()
    plan.plot(tmp_path / "plan.png")
    assert (tmp_path / "plan.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- atomic save -------------------------------------------------------------------------------


SAVE_WITH_FILE_SIZE_LIMIT = """
import resource, signal, sys
import cortexm
program = cortexm.load_program(sys.argv[1])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), resource.RLIM_INFINITY))
try:
    program.save(sys.argv[2])
except OSError as e:
    print(type(e).__name__, e.errno, e)
"""


def test_save_is_atomic_when_the_write_fails(tmp_path):
    graph, inputs = g_softmax()
    program = cortexm.to_program(graph)
    (tmp_path / "src").mkdir()
    (tmp_path / "out").mkdir()
    program.save(tmp_path / "src" / "model.cmpte")
    path = tmp_path / "out" / "model.cmpte"
    path.write_bytes(b"old contents")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", SAVE_WITH_FILE_SIZE_LIMIT, str(tmp_path / "src" / "model.cmpte"),
                          str(path), str(len(program.data) // 2)], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"OSError {errno.EFBIG} ") and "write failed: File too large" in out.stdout
    assert path.read_bytes() == b"old contents"
    assert os.listdir(tmp_path / "out") == ["model.cmpte"]  # no temporary file left behind
    program.save(path)
    assert cortexm.load_program(path).data == program.data


# --- corrupt, truncated and hand-edited files -------------------------------------------------




@pytest.fixture(scope="module")
def real_program():
    graph, inputs = g_cat_and_linear()
    return cortexm.to_program(graph, bundle_inputs=tuple(inputs)), graph, inputs


def load_bytes(data):
    return cortexm.Program(bytes(data))


def test_truncated_files_give_errors(real_program):
    data = real_program[0].data
    for n in sorted(set([0, 1, 4, 7, 8, 12, 16, 31, 64, len(data) // 2, len(data) - 1] +
                        list(range(0, len(data), max(1, len(data) // 97))))):
        if n >= len(data):
            continue
        with pytest.raises(ValueError, match="program"):
            load_bytes(data[:n])


def test_wrong_identifier_and_garbage(real_program):
    data = bytearray(real_program[0].data)
    data[8:12] = b"XXXX"
    with pytest.raises(ValueError, match="file_identifier"):
        load_bytes(data)
    with pytest.raises(ValueError, match="size"):
        load_bytes(b"")
    with pytest.raises(ValueError):
        load_bytes(os.urandom(4096))


def test_flipped_bytes_never_crash(real_program):
    """Every single-byte corruption either loads (then it runs) or raises ValueError."""
    program, graph, inputs = real_program
    data = program.data
    rng = np.random.default_rng(11)
    positions = list(range(0, min(len(data), 600))) + list(rng.integers(0, len(data), 400))
    errors = 0
    for pos in positions:
        for value in (0x00, 0xFF, data[pos] ^ 0x01, data[pos] ^ 0x80):
            bad = bytearray(data)
            bad[pos] = value
            try:
                p = load_bytes(bad)
            except ValueError as e:
                assert str(e), pos
                errors += 1
                continue
            p.run(*inputs)  # a file the loader accepts is safe to run
    assert errors > 100


FLATC = shutil.which("flatc")
SCHEMA = cortexm.program.SCHEMA


def to_json(data, tmp_path):
    src = tmp_path / "p.cmpte"
    src.write_bytes(data)
    subprocess.run([FLATC, "--json", "--strict-json", "--raw-binary", "--size-prefixed", "--defaults-json", "-o", str(tmp_path),
                    SCHEMA, "--", str(src)], check=True)
    return json.loads((tmp_path / "p.json").read_text())


def from_json(doc, tmp_path):
    path = tmp_path / "edited.json"
    # flatc spells non-finite doubles nan / inf, Python's json NaN / Infinity.
    text = re.sub(r"(?:(?<=\[)|(?<=[,:] ))(-?)Infinity\b", r"\1inf", json.dumps(doc))
    path.write_text(re.sub(r"(?:(?<=\[)|(?<=[,:] ))NaN\b", "nan", text))
    subprocess.run([FLATC, "-b", "--size-prefixed", "-o", str(tmp_path), SCHEMA, str(path)], check=True)
    return (tmp_path / "edited.cmpte").read_bytes() if (tmp_path / "edited.cmpte").exists() else \
        (tmp_path / "edited.bin").read_bytes()


def first_op(doc, kernel):
    return next(op for op in doc["ops"] if op["kernel"] == kernel)


def edit_tensor_offset(d):
    d["tensors"][d["inputs"][0]]["offset"] = d["arena_size"] + 16


def edit_constant_index(d):
    t = next(t for t in d["tensors"] if t.get("location") == "Constant")
    t["constant"] = 999


def edit_op_input(d):
    d["ops"][0]["inputs"][0] = len(d["tensors"]) + 5


def edit_kernel(d):
    d["ops"][0]["kernel"] = "QuantizedConv2d"


def edit_dim_order(d):
    t = next(t for t in d["tensors"] if len(t.get("dim_order", [])) == 4)
    t["dim_order"] = [0, 2, 2, 1]


def edit_negative_shape(d):
    d["tensors"][0]["shape"][0] = -3


def edit_schema_version(d):
    d["schema_version"] = 99


def edit_arena_size(d):
    d["arena_size"] = 8


def edit_qparams(d):
    t = next(t for t in d["tensors"] if "qparams" in t)
    t["qparams"]["scales"] = [0.0]


def set_first_scale(d, scale):
    next(t for t in d["tensors"] if "qparams" in t)["qparams"]["scales"] = [scale]


def edit_qparams_nan(d):
    set_first_scale(d, float("nan"))


def edit_qparams_inf(d):
    set_first_scale(d, float("inf"))


def edit_qparams_huge_negative(d):
    set_first_scale(d, -1e300)


def edit_wrapping_shape(d):
    # 2^64 bytes: a product that wraps to 0 in uint64.
    d["tensors"][d["inputs"][0]]["shape"] = [2 ** 32, 2 ** 32]


def edit_zero_dim_huge_shape(d):
    # numel 0, but strides of 2^64 elements: every dim is within bounds, their product is not.
    d["tensors"][d["inputs"][0]]["shape"] = [0, 2 ** 32, 2 ** 32, 2 ** 32]


def edit_overlap(d):
    op = d["ops"][0]
    d["tensors"][op["outputs"][0]]["offset"] = d["tensors"][op["inputs"][0]]["offset"]


def edit_dtype(d):
    op = first_op(d, "Cat")
    d["tensors"][op["inputs"][0]]["dtype"] = "Int16"


def edit_cat_dim(d):
    first_op(d, "Cat")["params"]["dim"] = 7


def edit_bundled(d):
    d["bundled"][0]["inputs"][0]["data"] = d["bundled"][0]["inputs"][0]["data"][:-1]


def edit_io_index(d):
    d["outputs"][0] = -1


def edit_permute_dims(d):
    first_op(d, "Permute")["params"]["dims"] = [0, 1, 1, 3]


def edit_output_shape(d):
    op = first_op(d, "Cat")
    d["tensors"][op["outputs"][0]]["shape"][1] -= 1


def edit_multipliers(d):
    first_op(d, "QuantizedLinear")["params"]["multipliers"].pop()


def edit_shift(d):
    first_op(d, "QuantizedLinear")["params"]["shifts"][2] = 31


def edit_input_offset(d):
    first_op(d, "QuantizedLinear")["params"]["input_offset"] = 500


def edit_constant_segment(d):
    d["constants"][0]["offset"] = 8


def edit_constant_size(d):
    d["constants"][-1]["size"] = 10 ** 6


def edit_shared_constant_size(d):
    # Two tensors share one segment only at the same size: the bias takes the weight's segment.
    op = first_op(d, "QuantizedLinear")
    weight, bias = (d["tensors"][op["inputs"][i]] for i in (1, 2))
    bias["constant"] = weight.get("constant", 0)


def edit_bias_dtype(d):
    op = first_op(d, "QuantizedLinear")
    d["tensors"][op["inputs"][2]]["shape"] = [16]  # the same 16 bytes, the wrong dtype
    d["tensors"][op["inputs"][2]]["dtype"] = "Int8"


EDITS = {
    edit_tensor_offset: r"tensors\[\d+\].*offset.*within the arena",
    edit_constant_index: r"constant",
    edit_op_input: r"ops\[0\].*inputs\[0\] = \d+: must index Program.tensors",
    edit_kernel: r"ops\[0\].*params_type",
    edit_dim_order: r"dim_order\[2\] = 2: must be a permutation",
    edit_negative_shape: r"tensors\[0\].*shape\[0\] = -3",
    edit_schema_version: r"schema_version = 99",
    edit_arena_size: r"offset.*within the arena",
    edit_qparams: r"qparams.scales\[0\]",
    edit_qparams_nan: r"tensors\[\d+\] \('[^']*'\): qparams.scales\[0\] = nan: must be finite and > 0",
    edit_qparams_inf: r"qparams.scales\[0\] = inf: must be finite and > 0",
    edit_qparams_huge_negative: r"qparams.scales\[0\] = -1e\+300: must be finite and > 0",
    edit_wrapping_shape: r"tensors\[\d+\].*shape = 2: describes more than 2\^32 bytes",
    edit_zero_dim_huge_shape: r"tensors\[\d+\].*shape = 4: describes more than 2\^32 bytes",
    edit_overlap: r"overlaps",
    edit_dtype: r"input.dtype|dtype",
    edit_cat_dim: r"params.dim = 7",
    edit_bundled: r"bundled\[0\].*inputs.data.size",
    edit_io_index: r"outputs\[0\].*tensor = -1",
    edit_permute_dims: r"params.dims\[2\] = 1: must be a permutation",
    edit_output_shape: r"output.shape\[1\] = 4: must be the sum along dim",
    edit_multipliers: r"ops\[\d+\] \('fc', QuantizedLinear\): params.(multipliers|shifts).size",
    edit_shift: r"'fc'.*shift.*= 31",
    edit_input_offset: r"'fc'.*input_offset = 500",
    edit_constant_segment: r"constants\[0\]: offset = 8: must be a multiple of 16",
    edit_constant_size: r"constants\[\d+\]: size = 1000000",
    edit_bias_dtype: r"'fc'.*bias",
    edit_shared_constant_size: r"tensors\[\d+\].*constant = \d+: segment size must equal the tensor's bytes",
}


@pytest.mark.skipif(FLATC is None, reason="flatc not installed")
@pytest.mark.parametrize("edit", list(EDITS), ids=[f.__name__ for f in EDITS])
def test_hand_edited_files_name_the_field(edit, real_program, tmp_path):
    doc = to_json(real_program[0].data, tmp_path)
    assert from_json(doc, tmp_path)  # the unedited round trip loads
    load_bytes(from_json(doc, tmp_path))
    edit(doc)
    with pytest.raises(ValueError, match=EDITS[edit]):
        load_bytes(from_json(doc, tmp_path))


CORPUS = Path(__file__).parent / "data" / "program_corpus"


def test_stored_corpus():
    """Files written by an earlier writer (scripts/make_program_corpus.py): the valid one loads,
    runs and matches its bundled outputs; each corrupt one gives the error the manifest names."""
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    assert len(manifest) > 25 and manifest.get("valid.cmpte", "missing") is None
    for name, expect in sorted(manifest.items()):
        data = (CORPUS / name).read_bytes()
        if expect is None:
            program = load_bytes(data)
            program.verify()
            continue
        with pytest.raises(ValueError, match=expect):
            load_bytes(data)
        with pytest.raises(ValueError):
            cortexm.load_program(CORPUS / name)


def numpy_reference(node, args):
    """The numpy reference (tests/py/numpy_reference, independent of the kernels) of a new op."""
    from numpy_reference import batch_matmul, elementwise, mean, minmax, requantize, transpose_conv

    a = node.attrs
    act = (a.get("activation_min", -128), a.get("activation_max", 127))
    if node.op == "cortex_m.requantize.default":
        return requantize.requantize(args[0], a["input_zero_point"], a["output_zero_point"],
                                     a["output_multiplier"], a["output_shift"], *act)
    if node.op == "cortex_m.quantized_mean.default":
        return mean.mean(args[0], a["dim"], a["keepdim"], a["input_offset"], a["output_offset"],
                         a["output_multiplier"], a["output_shift"], *act)
    if node.op in ("cortex_m.quantized_maximum.default", "cortex_m.quantized_minimum.default"):
        pick = minmax.maximum if "maximum" in node.op else minmax.minimum
        return pick(args[0], a["self_zero_point"], a["self_multiplier"], a["self_shift"], args[1],
                    a["other_zero_point"], a["other_multiplier"], a["other_shift"], a["output_zero_point"],
                    a["output_multiplier"], a["output_shift"], *act)
    if node.op == "cortex_m.quantized_add_s16.default":
        return elementwise.add_s16(args[0], a["self_multiplier"], a["self_shift"], args[1], a["other_multiplier"],
                                   a["other_shift"], a["output_multiplier"], a["output_shift"],
                                   a["activation_min"], a["activation_max"])
    if node.op == "cortex_m.quantized_mul_s16.default":
        return elementwise.mul_s16(args[0], args[1], a["output_multiplier"], a["output_shift"],
                                   a["activation_min"], a["activation_max"])
    if node.op == "cortex_m.quantized_batch_matmul.default":
        return batch_matmul.batch_matmul(args[0], args[1], a["lhs_offset"], a["rhs_offset"], a["output_offset"],
                                         a["output_multiplier"], a["output_shift"], *act)
    if node.op == "cortex_m.quantized_transpose_conv2d.default":
        p = a["padding"]
        y = transpose_conv.transpose_conv2d(
            args[0].transpose(0, 2, 3, 1), args[1], args[2], a["stride"], [p[0], p[1], p[0], p[1]],
            a["output_padding"], a["input_offset"], a["output_offset"], a["requantize_multipliers"],
            a["requantize_shifts"], *act)
        return y.transpose(0, 3, 1, 2)
    assert node.op == "dim_order_ops._clone_dim_order.default", node.op
    return args[0]  # the same logical values in another memory order


@pytest.mark.parametrize("build", [g_requantize, g_minmax, g_quantized_mean, g_batch_matmul, g_transpose_conv,
                                   g_binary_s16], ids=lambda f: f.__name__)
def test_new_ops_program_matches_numpy_references(build):
    """The program's outputs (logical arrays) against the numpy references, node by node."""
    graph, inputs = build()
    values = {v.id: x for v, x in zip(graph.inputs, inputs)}
    values.update({c.id: c.data for c in graph.constants})
    for node in graph.nodes:
        args = [None if v is None else values[v.id] for v in node.inputs]
        values[node.outputs[0].id] = numpy_reference(node, args)
    got = cortexm.to_program(graph).run(*inputs)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(graph.outputs)
    for k, (out, value) in enumerate(zip(got, graph.outputs)):
        want = values[value.id]
        assert out.shape == want.shape and out.dtype == want.dtype, k
        assert np.array_equal(out, want), f"output {k} ({value.name}) differs from the numpy reference"


# The new int8 ops: each edit corrupts one op's parameters or tensors in the program its graph
# builder writes; the loader must name the op and the field.


def op_named(d, name):
    return next(op for op in d["ops"] if op["name"] == name)


def set_param(name, field, value):
    def edit(d):
        op_named(d, name)["params"][field] = value
    return edit


def set_output_dim(name, dim, delta):
    def edit(d):
        d["tensors"][op_named(d, name)["outputs"][0]]["shape"][dim] += delta
    return edit


def set_input_dim(name, index, dim, delta):
    def edit(d):
        d["tensors"][op_named(d, name)["inputs"][index]]["shape"][dim] += delta
    return edit


def set_op_field(name, field, value):
    def edit(d):
        op_named(d, name)[field] = value
    return edit


def reshape_input(name, index, shape):
    """Input `index` of op `name` with another shape over the same bytes."""
    def edit(d):
        d["tensors"][op_named(d, name)["inputs"][index]]["shape"] = shape
    return edit


def retype_input(name, index, dtype, dim, factor):
    """Input `index` of op `name` as `dtype` over the same bytes: shape[dim] scaled by factor."""
    def edit(d):
        t = d["tensors"][op_named(d, name)["inputs"][index]]
        t["dtype"] = dtype
        t["shape"][dim] *= factor
    return edit


def pop_multiplier(d):
    op_named(d, "up")["params"]["multipliers"].pop()


def bias_as_int8(d):
    t = d["tensors"][op_named(d, "up")["inputs"][2]]
    t["dtype"], t["shape"] = "Int8", [24]  # the same 24 bytes, the wrong dtype


NEW_OP_EDITS = [
    ("g_requantize", set_param("down", "shift", 31), r"'down', Requantize\): output_shift = 31: must be in"),
    ("g_requantize", set_param("up", "input_offset", 500), r"'up', Requantize\): input_zero_point = -500"),
    ("g_requantize", set_param("down", "activation_min", 100), r"'down'.*activation_min = 100: must be <="),
    ("g_requantize", set_output_dim("up", 1, -1), r"'up'.*output = 0: must have the input's shape"),
    ("g_quantized_mean", set_param("hw", "reduced", []), r"'hw', QuantizedMean\): params.reduced.size = 0"),
    ("g_quantized_mean", set_param("hw", "reduced", [3, 2]), r"'hw'.*params.reduced\[1\] = 2: must be ascending"),
    ("g_quantized_mean", set_param("hw", "reduced", [0, 3]), r"'hw'.*params.reduced = 2: must be one block"),
    ("g_quantized_mean", set_param("lead", "multiplier", -5), r"'lead'.*output_multiplier = -5"),
    ("g_quantized_mean", set_param("c", "input_offset", -128), r"'c'.*input_offset = -128: must be in \[-127, 128\]"),
    ("g_quantized_mean", set_output_dim("hw", 1, -1), r"'hw'.*output.shape\[1\] = 5"),
    ("g_minmax", set_param("max_broadcast", "lhs_multiplier", -5),
     r"'max_broadcast', QuantizedMaximum\): self_multiplier = -5"),
    ("g_minmax", set_param("min_broadcast", "rhs_shift", -40), r"'min_broadcast', QuantizedMinimum\): other_shift = -40"),
    ("g_minmax", set_param("min_cl", "output_offset", 300), r"'min_cl'.*output_zero_point = 300"),
    ("g_minmax", set_output_dim("max_broadcast", 2, 1), r"'max_broadcast'.*output.shape\[2\] = 6"),
    ("g_batch_matmul", set_param("ab", "lhs_offset", 200), r"'ab', QuantizedBatchMatmul\): lhs_offset = 200"),
    ("g_batch_matmul", set_param("aa", "output_shift", -32), r"'aa'.*output_shift = -32"),
    ("g_batch_matmul", set_input_dim("ab", 1, 2, -1), r"'ab'.*rhs.shape\[2\] = 32: must be lhs's columns"),
    ("g_batch_matmul", set_output_dim("ab", 2, -1), r"'ab'.*output.shape\[2\] = 3: must be rhs's rows"),
    ("g_transpose_conv", set_param("up", "output_padding_h", 2),
     r"'up', QuantizedTransposeConv2d\): output_padding\[0\] = 2: must be in \[0, stride\)"),
    ("g_transpose_conv", set_param("up", "dilation_w", 2), r"'up'.*params.dilation_w = 2: must be 1"),
    ("g_transpose_conv", set_param("no_bias", "stride_w", 0), r"'no_bias'.*stride\[1\] = 0"),
    ("g_transpose_conv", set_param("no_bias", "input_offset", -128), r"'no_bias'.*input_offset = -128"),
    ("g_transpose_conv", pop_multiplier, r"'up'.*params.multipliers.size = 5"),
    ("g_transpose_conv", bias_as_int8, r"'up'.*bias"),
    ("g_transpose_conv", set_output_dim("up", 2, 1), r"'up'.*output.shape\[1\] = 11: must equal the computed height"),
    ("g_binary_s16", set_param("sum", "lhs_offset", 5), r"'sum', QuantizedAddS16\): lhs_offset = 5: must be 0 for int16"),
    ("g_binary_s16", set_param("gate", "output_offset", -1), r"'gate', QuantizedMulS16\): output_offset = -1: must be 0"),
    ("g_binary_s16", set_param("prod", "output_shift", 31), r"'prod', QuantizedMulS16\): output_shift = 31: must be in"),
    ("g_binary_s16", set_param("cl", "rhs_multiplier", -3), r"'cl', QuantizedAddS16\): other_multiplier = -3"),
    ("g_binary_s16", set_param("square", "activation_min", -40000), r"'square'.*activation_min = -40000: must be in"),
    ("g_binary_s16", set_output_dim("sum", 2, -1), r"'sum'.*output.shape\[2\] = 4: must be the broadcast shape"),
    # a stride or dilation of 0 is named before any output size is computed from it (no SIGFPE)
    ("g_convs", set_param("dw", "stride_h", 0), r"'dw', QuantizedDepthwiseConv2d\): stride\[0\] = 0: must be >= 1"),
    ("g_convs", set_param("dw", "dilation_w", 0), r"'dw'.*dilation\[1\] = 0: must be >= 1"),
    ("g_convs", set_param("conv", "stride_w", 0), r"'conv', QuantizedConv2d\): stride\[1\] = 0: must be >= 1"),
    ("g_convs", set_param("conv", "dilation_h", 0), r"'conv'.*dilation\[0\] = 0: must be >= 1"),
    ("g_convs", set_param("conv16", "stride_h", 0), r"'conv16', QuantizedConv2dS16\): stride\[0\] = 0"),
    ("g_convs", set_param("conv16", "dilation_w", -1), r"'conv16'.*dilation\[1\] = -1: must be >= 1"),
    ("g_convs", set_param("conv16", "input_offset", 3), r"'conv16'.*params.input_offset = 3: must be 0"),
    ("g_convs", set_param("conv", "output_padding_w", 1), r"'conv'.*params.output_padding_w = 1: must be 0"),
    ("g_convs", set_param("dw", "depth_multiplier", 3), r"'dw'.*weight.shape\[3\] = 8: must equal input.shape"),
    ("g_convs", set_output_dim("dw", 2, 1), r"'dw'.*output.shape\[1\] = 5: must equal the computed height"),
    # the 16x16 ops: weights, bias and params checked against the geometry before any kernel runs
    ("g_s16w16", retype_input("conv_w16", 1, "Int8", 3, 2), r"'conv_w16', QuantizedConv2dS16W16\): weights"),
    ("g_s16w16", set_input_dim("conv_w16", 1, 0, -1), r"\('w'\): constant = \d+: segment size must equal"),
    ("g_s16w16", reshape_input("conv_w16", 1, [9, 3, 4, 1]),
     r"'conv_w16', QuantizedConv2dS16W16\): output.shape\[2\] = 6: must equal the computed width"),
    ("g_s16w16", reshape_input("conv_w16", 1, [3, 3, 2, 6]), r"'conv_w16'.*params.multipliers.size = 9: must equal"),
    ("g_s16w16", reshape_input("conv_w16", 2, [3, 3]), r"'conv_w16'.*bias.shape = 2: must be \[output channels\]"),
    ("g_s16w16", set_input_dim("conv_w16", 2, 0, -1), r"\('bias'\): constant = \d+: segment size must equal"),
    ("g_s16w16", retype_input("conv_w16", 2, "Int32", 0, 2), r"'conv_w16'.*bias"),
    ("g_s16w16", set_param("conv_w16", "input_offset", 1), r"'conv_w16'.*params.input_offset = 1: must be 0"),
    ("g_s16w16", set_param("conv_w16", "shifts", [8] * 9), r"'conv_w16'.*shift"),
    ("g_s16w16", retype_input("fc_w16", 1, "Int8", 1, 2), r"'fc_w16', QuantizedLinearS16W16\): weights"),
    ("g_s16w16", reshape_input("fc_w16", 1, [37, 5]), r"'fc_w16'.*weights.shape\[1\] = 5: must equal the input"),
    ("g_s16w16", reshape_input("fc_w16", 2, [1, 5]), r"'fc_w16'.*bias.shape = 2: must be \[output features\]"),
    ("g_s16w16", set_input_dim("fc_w16", 2, 0, 1), r"\('lb'\): constant = \d+: segment size must equal"),
    ("g_s16w16", retype_input("fc_w16", 2, "Int32", 0, 2), r"'fc_w16'.*bias"),
    ("g_s16w16", set_param("fc_w16", "output_offset", 2), r"'fc_w16'.*params.output_offset = 2: must be 0"),
]


def set_pad_value(value):
    def edit(d):
        for op in d["ops"]:
            if op["kernel"] == "ConstantPad":
                op["params"]["value"] = value
    return edit


# A pad value the int8 data cannot hold is named with the file's double (no UB cast to int64).
PAD_VALUE_EDITS = [
    (float("inf"), r"ConstantPad\): params.value = inf: does not fit the tensor's dtype"),
    (float("-inf"), r"ConstantPad\): params.value = -inf: does not fit"),
    (float("nan"), r"ConstantPad\): params.value = nan: does not fit"),
    (1e300, r"ConstantPad\): params.value = 1e\+300: does not fit"),
    (127.5, r"ConstantPad\): params.value = 127.5: does not fit"),
    (-200.0, r"ConstantPad\): params.value = -200: does not fit"),
]


@pytest.mark.skipif(FLATC is None, reason="flatc not installed")
@pytest.mark.parametrize("value,pattern", PAD_VALUE_EDITS, ids=[str(v) for v, _ in PAD_VALUE_EDITS])
def test_constant_pad_value_must_fit(value, pattern, tmp_path):
    graph, inputs = g_pads()
    doc = to_json(cortexm.to_program(graph).data, tmp_path)
    load_bytes(from_json(doc, tmp_path))  # the unedited round trip loads
    set_pad_value(value)(doc)
    with pytest.raises(ValueError, match=pattern):
        load_bytes(from_json(doc, tmp_path))


def test_misaligned_constant_pad_vector():
    """ConstantPadParams.pad moved 4 bytes (into the writer's alignment padding) passes the
    FlatBuffers verifier; the loader refuses it before reading an 8-byte element."""
    graph, _ = g_pads()
    data = bytearray(cortexm.to_program(graph).data)
    # g_pads' first pad, (before, after) per dim in dim order
    vector = struct.pack("<I6q", 6, 0, 0, -1, 3, 2, -1)
    start = data.find(vector)
    assert start > 0 and (start + 4) % 8 == 0 and data.find(vector, start + 1) < 0
    end = start + len(vector)
    if data[end:end + 4] == bytes(4):
        shift = 4  # padding after the vector: move it up
    else:
        assert data[start - 4:start] == bytes(4), "no alignment padding next to the pad vector"
        shift = -4
    # the table field's uoffset, relative to its own position, that points at the vector
    refs = [f for f in range(0, start, 4) if struct.unpack_from("<I", data, f)[0] == start - f]
    assert len(refs) == 1
    data[start:end] = bytes(len(vector))
    data[start + shift:end + shift] = vector
    struct.pack_into("<I", data, refs[0], start + shift - refs[0])
    with pytest.raises(ValueError, match=r"ConstantPad\): params.pad.address % 8 = 4: must be 0 \(malformed file\)"):
        load_bytes(data)


@pytest.fixture(scope="module")
def new_op_programs():
    programs = {}
    for build in (g_requantize, g_minmax, g_quantized_mean, g_batch_matmul, g_transpose_conv, g_binary_s16,
                  g_convs, g_s16w16):
        graph, inputs = build()
        programs[build.__name__] = (cortexm.to_program(graph, bundle_inputs=tuple(inputs)), graph, inputs)
    return programs


@pytest.mark.skipif(FLATC is None, reason="flatc not installed")
@pytest.mark.parametrize("builder,edit,pattern", NEW_OP_EDITS,
                         ids=[f"{b}-{i}" for i, (b, _, _) in enumerate(NEW_OP_EDITS)])
def test_new_op_parameters_are_verified(builder, edit, pattern, new_op_programs, tmp_path):
    doc = to_json(new_op_programs[builder][0].data, tmp_path)
    load_bytes(from_json(doc, tmp_path))  # the unedited round trip loads
    edit(doc)
    with pytest.raises(ValueError, match=pattern):
        load_bytes(from_json(doc, tmp_path))


# An op whose planned scratch is smaller than the host's kernel needs (a program for another isa's
# kernels, or these edits) takes its scratch from a region after the arena instead: the program loads
# with a larger required arena and computes the same outputs.
SHORT_SCRATCH_EDITS = [("g_quantized_mean", "lead", 0), ("g_batch_matmul", "aa", 4),
                       ("g_transpose_conv", "no_bias", 2), ("g_convs", "conv", 8)]


@pytest.mark.skipif(FLATC is None, reason="flatc not installed")
@pytest.mark.parametrize("builder,op,size", SHORT_SCRATCH_EDITS, ids=[b for b, _, _ in SHORT_SCRATCH_EDITS])
def test_short_scratch_moves_after_the_arena(builder, op, size, new_op_programs, tmp_path):
    program, _, inputs = new_op_programs[builder]
    doc = to_json(program.data, tmp_path)
    set_op_field(op, "scratch_size", size)(doc)
    edited = load_bytes(from_json(doc, tmp_path))
    assert edited.arena_size == program.arena_size
    assert edited.scalar_arena_size > edited.arena_size
    for want, got in zip(program.run(*inputs), edited.run(*inputs)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("builder", ["g_requantize", "g_minmax", "g_quantized_mean", "g_batch_matmul",
                                     "g_transpose_conv", "g_binary_s16", "g_convs"])
def test_new_op_flipped_bytes_never_crash(builder, new_op_programs):
    """Single-byte corruptions of the new ops' programs either load and run or raise ValueError."""
    program, _, inputs = new_op_programs[builder]
    data = program.data
    rng = np.random.default_rng(13)
    errors = 0
    for pos in list(range(0, min(len(data), 400))) + list(rng.integers(0, len(data), 200)):
        for value in (0x00, 0xFF, data[pos] ^ 0x01, data[pos] ^ 0x80):
            bad = bytearray(data)
            bad[pos] = value
            try:
                p = load_bytes(bad)
            except ValueError as e:
                assert str(e), pos
                errors += 1
                continue
            p.run(*inputs)
    assert errors > 100


# --- torch models through cortexm.lower: the new int8 ops with the scratch the lowering declares


def lowered_torch(model, shape, seed):
    torch = pytest.importorskip("torch")
    torch.manual_seed(seed)
    x = torch.randn(*shape)
    model.eval()
    calibration = [(torch.randn(*shape),) for _ in range(4)]
    qgraph = cortexm.quantize(cortexm.export(model, (x,)), calibration, progress=False)
    return cortexm.lower(qgraph, "cortex-m55+int8"), x.numpy()


def attention_block():
    import torch

    class Attention(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v = (torch.nn.Linear(12, 12) for _ in range(3))

        def forward(self, x):
            q, k, v = self.q(x), self.k(x), self.v(x)
            scores = torch.bmm(q, k.transpose(1, 2))
            return torch.maximum(scores @ v, torch.minimum(q, v)).mean(dim=1)

    return Attention(), (2, 7, 12)


def up_block():
    import torch

    class Up(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.up = torch.nn.ConvTranspose2d(8, 5, (3, 2), stride=(2, 3), padding=(1, 0), output_padding=(1, 2))

        def forward(self, x):
            return self.up(torch.relu(self.conv(x)))

    return Up(), (1, 3, 7, 6)


@pytest.mark.parametrize("build,ops", [
    (attention_block, ["cortex_m.quantized_batch_matmul.default", "cortex_m.quantized_maximum.default",
                       "cortex_m.quantized_minimum.default", "cortex_m.quantized_mean.default"]),
    (up_block, ["cortex_m.quantized_transpose_conv2d.default"]),
], ids=["attention", "upsample"])
def test_lowered_new_ops_run_bit_exact_with_declared_scratch(build, ops):
    pytest.importorskip("torch")
    model, shape = build()
    lowered, x = lowered_torch(model, shape, seed=3)
    counts = lowered.op_counts()
    for op in ops:
        assert counts.get(op, 0) >= 1, (op, counts)
    program = cortexm.to_program(lowered, bundle_inputs=(x,))
    assert "+ 0 B scratch the graph does not declare" in program.layout
    assert program.memory_plan().arena_size == program.arena_size
    assert_bit_exact(program, lowered, x)
    assert program.verify() == 1
    assert program.float_ops == 0


# --- every zoo model ---------------------------------------------------------------------------

ZOO = ["deep_autoencoder", "ds_cnn", "mobilenet_v1_025", "mobilenet_v2_96", "mobilenet_v3_small_96",
       "resnet8", "silero_vad", "wav2letter", "yolo_style"]


@pytest.fixture(scope="module", params=ZOO)
def zoo(request):
    pytest.importorskip("torch")
    import zoo as zoo_cache

    _, example, _, _ = zoo_cache.exported(request.param)
    lowered = zoo_cache.lowered(request.param)
    inputs = [x.numpy() for x in example]
    return request.param, lowered, inputs


def test_zoo_program_equals_lowered_graph(zoo, tmp_path):
    name, lowered, inputs = zoo
    program = cortexm.to_program(lowered, bundle_inputs=tuple(inputs))
    assert_bit_exact(program, lowered, *inputs)
    assert program.memory_plan().arena_size == program.arena_size
    path = tmp_path / f"{name}.cmpte"
    program.save(path)
    loaded = cortexm.load_program(path)
    assert_bit_exact(loaded, lowered, *inputs)
    assert loaded.verify() == 1
    plan = loaded.memory_plan()
    assert plan.arena_size >= plan.lower_bound
    # Recorded, not asserted: how far the arena is above the lower bound, and which layout it is.
    print(f"{name}: arena {plan.arena_size} B, lower bound {plan.lower_bound} B, "
          f"{plan.arena_size - plan.lower_bound} B above it; layout: {program.layout}")


@pytest.mark.parametrize("op,attrs", [
    ("cortex_m.quantized_depthwise_conv2d.default", {"stride": [0, 1]}),
    ("cortex_m.quantized_conv2d.default", {"dilation": [1, 0]}),
    ("cortex_m.quantized_conv2d_s16.default", {"stride": [1, -2]}),
])
def test_conv_window_below_one_is_a_graph_error(op, attrs):
    """A stride or dilation below 1 in a graph is an error naming it, not a division by zero."""
    graph, _ = g_convs()
    node = next(n for n in graph.nodes if n.op == op)
    g = cortexm.Graph()
    x = g.add_input("x", node.inputs[0].shape, node.inputs[0].dtype)
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": [0, 2, 3, 1]})
    w = g.add_constant("w", next(c.data for c in graph.constants if c.id == node.inputs[1].id))
    name = next(iter(attrs))
    with pytest.raises(ValueError, match=rf"{name}\[\d\] = -?\d must be >= 1"):
        g.call(op, [cl, w, None], {**node.attrs, **attrs})


def test_the_lowered_graph_carries_its_target():
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Linear(5, 3), torch.nn.ReLU()).eval()
    calibration = [(torch.randn(2, 5),) for _ in range(3)]
    qgraph = cortexm.quantize(cortexm.export(model, calibration[0]), calibration, progress=False)
    assert cortexm.to_program(cortexm.lower(qgraph, "cortex-m4+int8")).target == "cortex-m4+int8"
    assert cortexm.to_program(cortexm.lower(qgraph, "m55+int8+dsp")).target == "cortex-m55+int8+dsp"
    m4 = cortexm.lower(qgraph, "cortex-m4+int8")
    assert cortexm.to_program(m4, target="cortex-m4+int8").target == "cortex-m4+int8"
    with pytest.raises(ValueError, match=r"to_program\(target='cortex-m55\+int8'\): the graph was lowered for "
                                         r"'cortex-m4\+int8'"):
        cortexm.to_program(m4, target="cortex-m55+int8")
    # Saved and loaded, the graph still knows.
    import tempfile
    path = Path(tempfile.mkdtemp()) / "m4.cmg"
    m4.save(path)
    assert cortexm.to_program(cortexm.Graph.load(path)).target == "cortex-m4+int8"


@pytest.mark.skipif(FLATC is None, reason="flatc not installed")
def test_schema_versions_this_runtime_reads(real_program, tmp_path):
    """Version 2 added bias_includes_input_offset, version 3 the layer norm kernels, UnaryParams'
    constants and the float convolution / pool / matmul kernels, version 4 the argmax / argmin
    kernels, version 5 the 16x16 conv / linear kernels, version 6 the group norm kernels, version 7
    the int16 group norm kernel, version 8 the SVDF kernels: older files (which use none of them)
    still run the same; a version
    above this runtime's is refused rather than half understood."""
    program, _, inputs = real_program
    doc = to_json(program.data, tmp_path)
    assert doc["schema_version"] == 8
    for old in (1, 2, 3, 4, 5, 6, 7):
        doc["schema_version"] = old
        old_outputs, outputs = load_bytes(from_json(doc, tmp_path)).run(*inputs), program.run(*inputs)
        assert [o.tobytes() for o in old_outputs] == [o.tobytes() for o in outputs]
    doc["schema_version"] = 9
    with pytest.raises(ValueError, match=r"schema_version = 9: is not a program format this runtime reads \(1 to 8\)"):
        load_bytes(from_json(doc, tmp_path))
