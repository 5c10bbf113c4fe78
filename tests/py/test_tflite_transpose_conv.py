"""from_tflite against TFLite Micro for int8 TRANSPOSE_CONV: randomized single-operator files
(SAME / VALID, strides up to 3, per-tensor and per-channel weights, with and without a bias,
fused activations, output sizes that leave rows only the bias reaches), byte for byte, no float
op left; and one on QEMU M55."""

from __future__ import annotations

import numpy as np
import pytest

import cortexm
from cortexm.tflite import schema as S
from test_tflite_import import ACTS, CASES, act_scale, bias, check, log_uniform, weights, zero_point
from test_tflite_mlperf_tiny import needs_qemu
from tflite_compare import assert_qemu_matches_tflm, needs_tflm
from tflite_writer import ModelBuilder

MODELS = 24


def transpose_conv_model(rng, with_bias=None, padding=None):
    h, w = int(rng.integers(1, 8)), int(rng.integers(1, 8))
    c_in, c_out = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    padding = padding or str(rng.choice(["SAME", "VALID"]))
    # TFLite's output sizes for the input: SAME gives in * stride, VALID (in - 1) * stride + kernel,
    # plus up to stride - 1 more (TensorFlow's output_shape may ask for them).
    if padding == "SAME":
        oh, ow = h * sh, w * sw
    else:
        oh = (h - 1) * sh + kh + int(rng.integers(0, sh))
        ow = (w - 1) * sw + kw + int(rng.integers(0, sw))
    if padding == "SAME":  # the conv over the output must come back to the input size
        oh -= int(rng.integers(0, sh))
        ow -= int(rng.integers(0, sw))
    act = str(rng.choice(list(ACTS)))
    per_channel = rng.random() < 0.7
    with_bias = rng.random() < 0.7 if with_bias is None else with_bias
    s_in = log_uniform(rng, 1e-3, 2.0)
    s_w = log_uniform(rng, 1e-4, 1e-1, c_out if per_channel else None)
    m = ModelBuilder()
    shape = m.tensor((4,), "INT32", data=np.array([1, oh, ow, c_out], np.int32))
    wt = m.tensor((c_out, kh, kw, c_in), "INT8", s_w, 0, weights(rng, (c_out, kh, kw, c_in)), axis=0)
    x = m.tensor((1, h, w, c_in), "INT8", s_in, zero_point(rng))
    out = m.tensor((1, oh, ow, c_out), "INT8", act_scale(rng, act) if act != "NONE" else
                   np.float32(s_in * np.max(s_w) * 127 * np.sqrt(kh * kw * c_in) * rng.uniform(0.05, 2)),
                   zero_point(rng, act))
    inputs = [shape, wt, x]
    if with_bias:
        inputs.append(m.tensor((c_out,), "INT32", np.float32(s_in) * np.atleast_1d(s_w), 0, bias(rng, c_out), axis=0))
    options = {S.TRANSPOSE_CONV_PADDING: ("b", {"SAME": 0, "VALID": 1}[padding]),
               S.TRANSPOSE_CONV_STRIDE_W: ("i", sw), S.TRANSPOSE_CONV_STRIDE_H: ("i", sh),
               S.TRANSPOSE_CONV_ACTIVATION: ("b", ACTS[act])}
    m.operator("TRANSPOSE_CONV", inputs, [out], S.OPTIONS_TRANSPOSE_CONV, options)
    return m.build([x], [out])


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_transpose_conv_matches_tflm(seed):
    assert check(transpose_conv_model(np.random.default_rng(3000 + seed)), seed) == CASES


@needs_tflm
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("with_bias", [False, True])
def test_transpose_conv_both_paddings_with_and_without_bias_match_tflm(padding, with_bias):
    for k in range(4):
        model = transpose_conv_model(np.random.default_rng(3100 + 10 * k + with_bias), with_bias, padding)
        assert check(model, k) == CASES


def test_transpose_conv_lowers_to_the_quantized_kernel():
    lowered = cortexm.lower(cortexm.from_tflite(transpose_conv_model(np.random.default_rng(3200))), "cortex-m55+int8")
    assert "cortex_m.quantized_transpose_conv2d.default" in [n.op for n in lowered.nodes]


def test_transpose_conv_with_int16_activations_is_refused_naming_types():
    m = ModelBuilder()
    shape = m.tensor((4,), "INT32", data=np.array([1, 4, 4, 2], np.int32))
    wt = m.tensor((2, 2, 2, 3), "INT8", 0.01, 0, np.ones((2, 2, 2, 3), np.int8))
    x = m.tensor((1, 2, 2, 3), "INT16", 0.001, 0)
    out = m.tensor((1, 4, 4, 2), "INT16", 0.001, 0)
    m.operator("TRANSPOSE_CONV", [shape, wt, x], [out], S.OPTIONS_TRANSPOSE_CONV,
               {S.TRANSPOSE_CONV_STRIDE_W: ("i", 2), S.TRANSPOSE_CONV_STRIDE_H: ("i", 2)})
    with pytest.raises(NotImplementedError, match="input INT16 and output INT16: int8 transpose"):
        cortexm.from_tflite(m.build([x], [out]))


@needs_tflm
@needs_qemu
def test_transpose_conv_matches_tflm_on_qemu_m55():
    model = transpose_conv_model(np.random.default_rng(3300), with_bias=True, padding="SAME")
    assert_qemu_matches_tflm(model, "cortex-m55", runs=4)
