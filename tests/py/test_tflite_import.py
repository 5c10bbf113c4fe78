"""cortexm.from_tflite against TFLite Micro's interpreter: randomized single-operator .tflite files
(awkward shapes, qparams at their limits) and a small MLPerf-Tiny-like model, written by the tests'
own FlatBuffers writer; cortexm's host program must give TFLite Micro's bytes, with no float op
left after lowering."""

from __future__ import annotations

import numpy as np
import pytest

import cortexm
from cortexm.tflite import schema as S
from cortexm.tflite.common import window
from cortexm.tflite.model import parse
from tflite_compare import compare, cortexm_program, float_ops, needs_tflm, tflm_runner
from tflite_writer import ModelBuilder, Table

CASES = 4  # random inputs per model
MODELS = 24  # random models per operator
ACTS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}


def log_uniform(rng, lo, hi, size=None):
    return np.float32(np.exp(rng.uniform(np.log(lo), np.log(hi), size)))


def act_scale(rng, act):
    """An output scale for which the fused activation leaves a non-empty, often narrow, range."""
    if act == "RELU_N1_TO_1":
        return log_uniform(rng, 1 / 200, 1 / 20)
    if act == "RELU6":
        return log_uniform(rng, 6 / 250, 6 / 10)
    return log_uniform(rng, 1e-3, 1.0)


def zero_point(rng, act="NONE"):
    if act in ("RELU", "RELU6"):
        return int(rng.integers(-128, 60))
    if act == "RELU_N1_TO_1":
        return int(rng.integers(-20, 20))
    return int(rng.choice([-128, 127, int(rng.integers(-128, 128))]))


def weights(rng, shape):
    w = rng.integers(-127, 128, size=shape).astype(np.int8)
    w.reshape(-1)[rng.integers(0, w.size)] = rng.choice([-127, 127])
    return w


def bias(rng, n):
    b = rng.integers(-(1 << 14), 1 << 14, size=n).astype(np.int64)
    if rng.random() < 0.3:
        b[rng.integers(0, n)] = rng.choice([-(1 << 24), 1 << 24])
    return b.astype(np.int32)


def check(model: bytes, seed: int):
    n, lowered = compare(model, CASES, seed)
    assert float_ops(lowered) == [], float_ops(lowered)
    return n


def conv_model(rng, depthwise: bool, dtype: str = "INT8"):
    h, w = int(rng.integers(1, 13)), int(rng.integers(1, 13))
    c_in = int(rng.integers(1, 9))
    kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    dh, dw = (int(rng.integers(1, 3)), int(rng.integers(1, 3))) if rng.random() < 0.4 else (1, 1)
    padding = str(rng.choice(["SAME", "VALID"]))
    if padding == "VALID":
        h, w = max(h, (kh - 1) * dh + 1), max(w, (kw - 1) * dw + 1)
    act = str(rng.choice(list(ACTS)))
    if depthwise:
        mult = int(rng.integers(1, 4))
        c_out = c_in * mult
        w_shape = (1, kh, kw, c_out)
        axis = 3
    else:
        mult = 0
        c_out = int(rng.integers(1, 9))
        w_shape = (c_out, kh, kw, c_in)
        axis = 0
    per_channel = rng.random() < 0.7
    oh = window(padding, h, kh, sh, dh)[0]
    ow = window(padding, w, kw, sw, dw)[0]
    s_in = log_uniform(rng, 1e-3, 2.0)
    s_w = log_uniform(rng, 1e-4, 1e-1, c_out if per_channel else None)
    m = ModelBuilder()
    wide = dtype == "INT16"  # 16x8: zero points 0, an int64 bias, outputs 256 times finer
    x = m.tensor((1, h, w, c_in), dtype, s_in / 256 if wide else s_in, 0 if wide else zero_point(rng))
    wt = m.tensor(w_shape, "INT8", s_w, 0, weights(rng, w_shape), axis=axis)
    bt = m.tensor((c_out,), "INT64" if wide else "INT32", np.float32(s_in / 256 if wide else s_in) * np.atleast_1d(s_w), 0,
                  bias(rng, c_out).astype(np.int64), axis=0)
    out = m.tensor((1, oh, ow, c_out), dtype, (act_scale(rng, act) if act != "NONE" else
                   np.float32(s_in * np.max(s_w) * 127 * np.sqrt(kh * kw * c_in) * rng.uniform(0.05, 2))) / (256 if wide else 1),
                   0 if wide else zero_point(rng, act))
    pad = {"SAME": 0, "VALID": 1}[padding]
    if depthwise:
        options = {S.DW_PADDING: ("b", pad), S.DW_STRIDE_W: ("i", sw), S.DW_STRIDE_H: ("i", sh),
                   S.DW_DEPTH_MULTIPLIER: ("i", mult), S.DW_ACTIVATION: ("b", ACTS[act]),
                   S.DW_DILATION_W: ("i", dw), S.DW_DILATION_H: ("i", dh)}
        m.operator("DEPTHWISE_CONV_2D", [x, wt, bt], [out], S.OPTIONS_DEPTHWISE_CONV2D, options)
    else:
        options = {S.CONV2D_PADDING: ("b", pad), S.CONV2D_STRIDE_W: ("i", sw), S.CONV2D_STRIDE_H: ("i", sh),
                   S.CONV2D_ACTIVATION: ("b", ACTS[act]), S.CONV2D_DILATION_W: ("i", dw),
                   S.CONV2D_DILATION_H: ("i", dh)}
        m.operator("CONV_2D", [x, wt, bt], [out], S.OPTIONS_CONV2D, options)
    return m.build([x], [out])


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_conv_2d_matches_tflm(seed):
    assert check(conv_model(np.random.default_rng(seed), depthwise=False), seed) == CASES


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_depthwise_conv_2d_matches_tflm(seed):
    assert check(conv_model(np.random.default_rng(100 + seed), depthwise=True), seed) == CASES


def fc_model(rng, per_channel: bool, dtype: str = "INT8"):
    k, n = int(rng.integers(1, 40)), int(rng.integers(1, 20))
    keep = bool(rng.random() < 0.3)
    batch_shape = [int(rng.integers(1, 4))] if keep else [1]
    x_shape = batch_shape + [k] if (keep or rng.random() < 0.5) else [1, 1, k]
    act = str(rng.choice(list(ACTS)))
    s_in = log_uniform(rng, 1e-3, 2.0)
    s_w = log_uniform(rng, 1e-4, 1e-1, n if per_channel else None)
    m = ModelBuilder()
    wide = dtype == "INT16"
    x = m.tensor(x_shape, dtype, s_in / 256 if wide else s_in, 0 if wide else zero_point(rng))
    wt = m.tensor((n, k), "INT8", s_w, 0, weights(rng, (n, k)))
    bt = m.tensor((n,), "INT64" if wide else "INT32", np.float32(s_in / 256 if wide else s_in) * np.atleast_1d(s_w), 0,
                  bias(rng, n).astype(np.int64))
    rows = int(np.prod(x_shape)) // k
    out_shape = x_shape[:-1] + [n] if keep else [rows, n]
    out = m.tensor(out_shape, dtype, (act_scale(rng, act) if act != "NONE" else
                   np.float32(s_in * np.max(s_w) * 127 * np.sqrt(k) * rng.uniform(0.05, 2))) / (256 if wide else 1),
                   0 if wide else zero_point(rng, act))
    m.operator("FULLY_CONNECTED", [x, wt, bt], [out], S.OPTIONS_FULLY_CONNECTED,
               {S.FC_ACTIVATION: ("b", ACTS[act]), S.FC_KEEP_NUM_DIMS: ("B", int(keep))})
    return m.build([x], [out])


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_fully_connected_per_tensor_matches_tflm(seed):
    assert check(fc_model(np.random.default_rng(200 + seed), per_channel=False), seed) == CASES


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_16x8_convolutions_match_tflm(seed):
    """int16 activations (zero point 0), int8 weights, int64 bias: TFLite's 16x8 mode."""
    model = conv_model(np.random.default_rng(2100 + seed), depthwise=seed % 2 == 1, dtype="INT16")
    assert check(model, seed) == CASES


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_16x8_fully_connected_matches_tflm(seed):
    model = fc_model(np.random.default_rng(2200 + seed), per_channel=seed % 2 == 1, dtype="INT16")
    assert check(model, seed) == CASES


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_fully_connected_per_channel_matches_tflm(seed):
    assert check(fc_model(np.random.default_rng(300 + seed), per_channel=True), seed) == CASES


def pool_model(rng, builtin):
    h, w, c = int(rng.integers(1, 14)), int(rng.integers(1, 14)), int(rng.integers(1, 7))
    kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    padding = str(rng.choice(["SAME", "VALID"]))
    if padding == "VALID":
        h, w = max(h, kh), max(w, kw)
    if builtin == "AVERAGE_POOL_2D" and padding == "SAME":
        # torch's average pool cannot pad one row more below than above with stride 1 (see pool.py)
        sh, sw = max(sh, 2) if (kh % 2 == 0) else sh, max(sw, 2) if (kw % 2 == 0) else sw
    oh, ow = window(padding, h, kh, sh)[0], window(padding, w, kw, sw)[0]
    s, zp = log_uniform(rng, 1e-3, 2.0), zero_point(rng)
    m = ModelBuilder()
    x = m.tensor((1, h, w, c), "INT8", s, zp)
    out = m.tensor((1, oh, ow, c), "INT8", s, zp)
    m.operator(builtin, [x], [out], S.OPTIONS_POOL2D,
               {S.POOL_PADDING: ("b", {"SAME": 0, "VALID": 1}[padding]), S.POOL_STRIDE_W: ("i", sw),
                S.POOL_STRIDE_H: ("i", sh), S.POOL_FILTER_W: ("i", kw), S.POOL_FILTER_H: ("i", kh)})
    return m.build([x], [out])


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_average_pool_2d_matches_tflm(seed):
    assert check(pool_model(np.random.default_rng(400 + seed), "AVERAGE_POOL_2D"), seed) == CASES


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_max_pool_2d_matches_tflm(seed):
    assert check(pool_model(np.random.default_rng(500 + seed), "MAX_POOL_2D"), seed) == CASES


def binary_model(rng, builtin):
    shape = [1, int(rng.integers(1, 6)), int(rng.integers(1, 6)), int(rng.integers(1, 9))]
    other = list(shape)
    if rng.random() < 0.4:  # broadcast along some dims
        for d in rng.choice(4, size=int(rng.integers(1, 3)), replace=False):
            other[d] = 1
    act = str(rng.choice(list(ACTS)))
    sa, sb = log_uniform(rng, 1e-3, 1.0), log_uniform(rng, 1e-3, 1.0)
    if builtin == "MUL":
        so = act_scale(rng, act) if act != "NONE" else np.float32(sa * sb * rng.uniform(2, 400))
    else:
        so = act_scale(rng, act) if act != "NONE" else np.float32(max(sa, sb) * rng.uniform(0.3, 3))
    m = ModelBuilder()
    a = m.tensor(shape, "INT8", sa, zero_point(rng))
    b = m.tensor(other, "INT8", sb, zero_point(rng))
    out = m.tensor(shape, "INT8", so, zero_point(rng, act))
    options_type = {"ADD": S.OPTIONS_ADD, "SUB": S.OPTIONS_SUB, "MUL": S.OPTIONS_MUL}[builtin]
    m.operator(builtin, [a, b], [out], options_type, {0: ("b", ACTS[act])})
    return m.build([a, b], [out])


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_add_matches_tflm(seed):
    assert check(binary_model(np.random.default_rng(600 + seed), "ADD"), seed) == CASES


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_sub_matches_tflm(seed):
    assert check(binary_model(np.random.default_rng(900 + seed), "SUB"), seed) == CASES


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_mul_matches_tflm(seed):
    assert check(binary_model(np.random.default_rng(700 + seed), "MUL"), seed) == CASES


def softmax_model(rng):
    shape = [1, int(rng.integers(1, 40))] if rng.random() < 0.6 else [1, 2, 3, int(rng.integers(1, 12))]
    m = ModelBuilder()
    x = m.tensor(shape, "INT8", log_uniform(rng, 1e-3, 4.0), zero_point(rng))
    out = m.tensor(shape, "INT8", 1 / 256, -128)
    m.operator("SOFTMAX", [x], [out], S.OPTIONS_SOFTMAX, {S.SOFTMAX_BETA: ("f", 1.0)})
    return m.build([x], [out])


@needs_tflm
@pytest.mark.parametrize("seed", range(MODELS))
def test_softmax_matches_tflm(seed):
    assert check(softmax_model(np.random.default_rng(800 + seed)), seed) == CASES


@needs_tflm
def test_reshape_and_quantize_boundary_match_tflm_float_io():
    """QUANTIZE -> RESHAPE -> DEQUANTIZE on a float model: the dequantize is TFLite's exactly; the
    inputs are on the quantization grid, where both quantizes agree."""
    m = ModelBuilder()
    x = m.tensor((1, 2, 3, 4), "FLOAT32")
    q = m.tensor((1, 2, 3, 4), "INT8", 0.25, -3)
    r = m.tensor((1, 24), "INT8", 0.25, -3)
    y = m.tensor((1, 24), "FLOAT32")
    m.operator("QUANTIZE", [x], [q])
    m.operator("RESHAPE", [q, ], [r], S.OPTIONS_RESHAPE, {})
    m.operator("DEQUANTIZE", [r], [y])
    model = m.build([x], [y])
    graph = cortexm.from_tflite(model)
    program = cortexm.to_program(cortexm.lower(graph, "cortex-m55+int8"))
    rng = np.random.default_rng(0)
    for _ in range(4):
        v = ((rng.integers(-125, 128, (1, 2, 3, 4)) + 3) * 0.25).astype(np.float32)
        np.testing.assert_array_equal(np.asarray(program.run(v)).reshape(1, 24), tflm_runner(model)([v])[0])


def mlperf_like_model(rng):
    """conv (RELU6, SAME) -> depthwise (RELU, stride 2) -> average pool -> reshape -> FC -> softmax."""
    m = ModelBuilder()
    s_x = np.float32(0.02)
    x = m.tensor((1, 10, 8, 3), "INT8", s_x, -5)
    s_w1 = log_uniform(rng, 1e-3, 2e-2, 8)
    w1 = m.tensor((8, 3, 3, 3), "INT8", s_w1, 0, weights(rng, (8, 3, 3, 3)))
    b1 = m.tensor((8,), "INT32", s_x * s_w1, 0, bias(rng, 8))
    c1 = m.tensor((1, 10, 8, 8), "INT8", 6 / 255, -128)
    m.operator("CONV_2D", [x, w1, b1], [c1], S.OPTIONS_CONV2D,
               {S.CONV2D_PADDING: ("b", 0), S.CONV2D_STRIDE_W: ("i", 1), S.CONV2D_STRIDE_H: ("i", 1),
                S.CONV2D_ACTIVATION: ("b", ACTS["RELU6"])})
    s_w2 = log_uniform(rng, 1e-2, 1e-1, 8)
    w2 = m.tensor((1, 3, 3, 8), "INT8", s_w2, 0, weights(rng, (1, 3, 3, 8)), axis=3)
    b2 = m.tensor((8,), "INT32", np.float32(6 / 255) * s_w2, 0, bias(rng, 8))
    c2 = m.tensor((1, 5, 4, 8), "INT8", 0.05, -128)
    m.operator("DEPTHWISE_CONV_2D", [c1, w2, b2], [c2], S.OPTIONS_DEPTHWISE_CONV2D,
               {S.DW_PADDING: ("b", 0), S.DW_STRIDE_W: ("i", 2), S.DW_STRIDE_H: ("i", 2),
                S.DW_DEPTH_MULTIPLIER: ("i", 1), S.DW_ACTIVATION: ("b", ACTS["RELU"])})
    p = m.tensor((1, 1, 1, 8), "INT8", 0.05, -128)
    m.operator("AVERAGE_POOL_2D", [c2], [p], S.OPTIONS_POOL2D,
               {S.POOL_PADDING: ("b", 1), S.POOL_STRIDE_W: ("i", 4), S.POOL_STRIDE_H: ("i", 5),
                S.POOL_FILTER_W: ("i", 4), S.POOL_FILTER_H: ("i", 5)})
    r = m.tensor((1, 8), "INT8", 0.05, -128)
    m.operator("RESHAPE", [p], [r], S.OPTIONS_RESHAPE, {})
    w3 = m.tensor((5, 8), "INT8", 0.01, 0, weights(rng, (5, 8)))
    b3 = m.tensor((5,), "INT32", np.float32(0.05 * 0.01), 0, bias(rng, 5))
    f = m.tensor((1, 5), "INT8", 0.08, 3)
    m.operator("FULLY_CONNECTED", [r, w3, b3], [f], S.OPTIONS_FULLY_CONNECTED, {})
    out = m.tensor((1, 5), "INT8", 1 / 256, -128)
    m.operator("SOFTMAX", [f], [out], S.OPTIONS_SOFTMAX, {S.SOFTMAX_BETA: ("f", 1.0)})
    return m.build([x], [out])


@needs_tflm
def test_mlperf_like_model_matches_tflm():
    model = mlperf_like_model(np.random.default_rng(7))
    n, lowered = compare(model, 16, seed=3)
    assert n == 16 and float_ops(lowered) == []
    counts = lowered.op_counts()
    for op in ("quantized_conv2d", "quantized_depthwise_conv2d", "quantized_avg_pool2d", "quantized_linear",
               "quantized_softmax"):
        assert counts[f"cortex_m.{op}.default"] == 1, op


def test_graph_carries_the_files_qparams():
    model = mlperf_like_model(np.random.default_rng(7))
    graph = cortexm.from_tflite(model)
    conv = next(n for n in graph.nodes if n.op == "aten.convolution.default")
    w = conv.inputs[1].producer
    assert w.op == "quantized_decomposed.dequantize_per_channel.default" and len(w.attrs["scales"]) == 8
    assert graph.inputs[0].users[0].attrs["scale"] == float(np.float32(0.02))
    assert graph.inputs[0].users[0].attrs["zero_point"] == -5


def test_unsupported_operators_are_listed_at_once():
    m = ModelBuilder()
    x = m.tensor((1, 4), "INT8", 0.1, 0)
    y = m.tensor((1, 4), "INT8", 0.1, 0)
    r = m.tensor((4,), "INT8", 0.1, 0)
    z = m.tensor((1, 4), "INT8", 1 / 256, -128)
    w = m.tensor((1, 4), "INT8", 0.1, 0)
    m.operator("EXP", [x], [y])
    m.operator("RESHAPE", [y], [r], S.OPTIONS_RESHAPE, {})  # reads EXP's output: skipped, not listed
    m.operator("SOFTMAX", [x], [z], S.OPTIONS_SOFTMAX, {S.SOFTMAX_BETA: ("f", 2.0)})
    m.operator("TANH", [x], [w])
    with pytest.raises(NotImplementedError) as e:
        cortexm.from_tflite(m.build([x], [r, z, w]))
    text = str(e.value)
    assert "3 problem(s)" in text, text
    assert "operator 0 EXP (inputs: int8 [1, 4]; outputs: int8 [1, 4]): not supported" in text
    assert "operator 2 SOFTMAX (inputs: int8 [1, 4]; outputs: int8 [1, 4]): beta = 2.0" in text
    assert "operator 3 TANH" in text
    assert "RESHAPE (" not in text


def test_softmax_beta_is_refused_with_the_reason():
    m = ModelBuilder()
    x = m.tensor((1, 4), "INT8", 0.1, 0)
    z = m.tensor((1, 4), "INT8", 1 / 256, -128)
    m.operator("SOFTMAX", [x], [z], S.OPTIONS_SOFTMAX, {S.SOFTMAX_BETA: ("f", 2.0)})
    with pytest.raises(NotImplementedError, match=r"operator 0 SOFTMAX .*beta = 2.0"):
        cortexm.from_tflite(m.build([x], [z]))


def test_mixed_int16_int8_convolution_is_refused_naming_types():
    m = ModelBuilder()
    x = m.tensor((1, 4, 4, 2), "INT16", 0.1, 0)
    wt = m.tensor((3, 1, 1, 2), "INT8", 0.1, 0, np.ones((3, 1, 1, 2), np.int8))
    y = m.tensor((1, 4, 4, 3), "INT8", 0.1, 0)
    m.operator("CONV_2D", [x, wt], [y], S.OPTIONS_CONV2D,
               {S.CONV2D_PADDING: ("b", 1), S.CONV2D_STRIDE_W: ("i", 1), S.CONV2D_STRIDE_H: ("i", 1)})
    with pytest.raises(NotImplementedError, match=r"operator 0 CONV_2D \(inputs: int16 \[1, 4, 4, 2\], int8 "
                                                  r"\[3, 1, 1, 2\]; outputs: int8 \[1, 4, 4, 3\]\): input INT16 and "
                                                  r"output INT8: int8 and 16x8 \(int16\) convolutions are imported"):
        cortexm.from_tflite(m.build([x], [y]))


def test_source_must_be_a_path_or_bytes(tmp_path):
    with pytest.raises(ValueError, match="from_tflite: source = int must be a path"):
        cortexm.from_tflite(3)
    with pytest.raises(OSError):
        cortexm.from_tflite(tmp_path / "missing.tflite")
    path = tmp_path / "m.tflite"
    path.write_bytes(mlperf_like_model(np.random.default_rng(0)))
    assert len(cortexm.from_tflite(path).nodes) == len(cortexm.from_tflite(str(path)).nodes)


def relu_bound_model(act: str, scale: float, zp: int) -> bytes:
    """FULLY_CONNECTED with large sums, so most outputs sit at the fused activation's bounds."""
    m = ModelBuilder()
    x = m.tensor((1, 4), "INT8", 1.0, 0)
    wt = m.tensor((6, 4), "INT8", 1.0, 0, np.array([[127, 127, 127, 127], [-127, -127, -127, -127]] * 3, np.int8))
    out = m.tensor((1, 6), "INT8", scale, zp)
    m.operator("FULLY_CONNECTED", [x, wt], [out], S.OPTIONS_FULLY_CONNECTED, {S.FC_ACTIVATION: ("b", ACTS[act])})
    return m.build([x], [out])


@needs_tflm
@pytest.mark.parametrize("act, scale, zp, bounds", [
    ("RELU6", 12.0, -128, (-128, -127)),  # 6 / 12 = 0.5 rounds away from zero to 1
    ("RELU_N1_TO_1", 2.0, 5, (4, 6)),  # -1 / 2 = -0.5 -> -1, 1 / 2 -> 1
    ("RELU", 0.5, 127, (127, 127)),
])
def test_fused_activation_bounds_round_half_away_from_zero_as_tflm(act, scale, zp, bounds):
    model = relu_bound_model(act, scale, zp)
    graph = cortexm.from_tflite(model)
    q = next(n for n in graph.nodes if n.op == "quantized_decomposed.quantize_per_tensor.default"
             and n.inputs[0].producer is not None and n.inputs[0].producer.op == "aten.linear.default")
    assert (q.attrs["quant_min"], q.attrs["quant_max"]) == bounds
    x = np.array([[127, -128, 100, 127]], np.int8)
    _, program = cortexm_program(model)
    want = tflm_runner(model)([x])[0]
    assert set(want.reshape(-1).tolist()) == set(bounds)
    np.testing.assert_array_equal(np.asarray(program.run(x)).reshape(want.shape), want)


@pytest.mark.parametrize("seed", range(MODELS))
def test_lowered_fully_connected_multiplier_is_tflms_float32_product(seed):
    """Per-tensor FULLY_CONNECTED: TFLite Micro's multiplier comes from float32(s_in * s_w) / s_out
    (per-channel and convolutions: double products); the lowered kernel must carry exactly it."""
    rng = np.random.default_rng(1000 + seed)
    model = fc_model(rng, per_channel=False)
    graph = cortexm.from_tflite(model)
    lowered = cortexm.lower(graph, "cortex-m55+int8")
    linear = next(n for n in lowered.nodes if n.op == "cortex_m.quantized_linear.default")
    dq_in = next(n for n in graph.nodes if n.op == "aten.linear.default").inputs[0].producer
    s_in = dq_in.attrs["scale"]
    tensors = parse(model, "m").tensors
    s_w, s_out = float(tensors[1].quant.scales[0]), float(tensors[3].quant.scales[0])
    want = cortexm.quantize_multiplier(float(np.float32(s_in) * np.float32(s_w)) / s_out)
    assert (linear.attrs["requantize_multipliers"][0], linear.attrs["requantize_shifts"][0]) == want


def test_fused_activation_bound_overflowing_int32_is_refused():
    m = ModelBuilder()
    x = m.tensor((1, 4), "INT8", 1.0, 0)
    wt = m.tensor((2, 4), "INT8", 1.0, 0, np.ones((2, 4), np.int8))
    out = m.tensor((1, 2), "INT8", 1e-40, 0)  # 6 / 1e-40 is infinite in float32
    m.operator("FULLY_CONNECTED", [x, wt], [out], S.OPTIONS_FULLY_CONNECTED, {S.FC_ACTIVATION: ("b", ACTS["RELU6"])})
    with pytest.raises(NotImplementedError, match=r"operator 0 FULLY_CONNECTED .*fused activation RELU6: 6.0 / output "
                                                  r"scale .* overflows int32"):
        cortexm.from_tflite(m.build([x], [out]))


@pytest.mark.parametrize("depthwise", [False, True])
def test_lowered_conv_multipliers_are_tflms(depthwise):
    """TFLite Micro's per-channel effective scale: double(s_in) * double(s_w[c]) / double(s_out)
    (PopulateConvolutionQuantizationParams, a per-tensor scale broadcast), QuantizeMultiplier."""
    for seed in range(MODELS):
        model = conv_model(np.random.default_rng(3000 + seed), depthwise)
        tensors = parse(model, "m").tensors
        lowered = cortexm.lower(cortexm.from_tflite(model), "cortex-m55+int8")
        conv = next(n for n in lowered.nodes if n.op in ("cortex_m.quantized_conv2d.default",
                                                         "cortex_m.quantized_depthwise_conv2d.default"))
        s_in, s_out = float(tensors[0].quant.scales[0]), float(tensors[3].quant.scales[0])
        s_w = tensors[1].quant.scales.tolist()
        c_out = tensors[3].shape[-1]
        want = [cortexm.quantize_multiplier(s_in * float(s_w[c if len(s_w) > 1 else 0]) / s_out) for c in range(c_out)]
        got = list(zip(conv.attrs["requantize_multipliers"], conv.attrs["requantize_shifts"]))
        assert got == want, seed


def test_lowered_softmax_scaling_is_tflms():
    """PreprocessSoftmaxScaling(beta 1, s_in, 5 integer bits) and -CalculateInputRadius(5, shift)."""
    for seed in range(MODELS):
        model = softmax_model(np.random.default_rng(3100 + seed))
        s_in = float(parse(model, "m").tensors[0].quant.scales[0])
        lowered = cortexm.lower(cortexm.from_tflite(model), "cortex-m55+int8")
        node = next(n for n in lowered.nodes if n.op == "cortex_m.quantized_softmax.default")
        real = min(1.0 * s_in * (1 << 26), (1 << 31) - 1.0)
        multiplier, shift = cortexm.quantize_multiplier(real)
        diff_min = -int(np.floor(1.0 * ((1 << 5) - 1) * (1 << 26) / (1 << shift)))
        assert (node.attrs["input_multiplier"], node.attrs["input_shift"], node.attrs["diff_min"]) == \
            (multiplier, shift, diff_min), seed


@needs_tflm
def test_16x8_sums_past_int32_after_requantizing_are_refused():
    """TFLite Micro casts the requantized int64 sum to int32 (wrapping), cortexm saturates: such a
    layer is refused rather than imported with other results."""
    m = ModelBuilder()
    x = m.tensor((1, 4), "INT16", 1e-3, 0)
    wt = m.tensor((2, 4), "INT8", 1e-2, 0, np.full((2, 4), 127, np.int8))
    b = m.tensor((2,), "INT64", 1e-5, 0, np.array([1 << 40, 0], np.int64))
    out = m.tensor((1, 2), "INT16", 1e-4, 0)
    m.operator("FULLY_CONNECTED", [x, wt, b], [out], S.OPTIONS_FULLY_CONNECTED, {})
    with pytest.raises(NotImplementedError, match=r"16x8 sums can requantize to .*past int32"):
        cortexm.from_tflite(m.build([x], [out]))


@needs_tflm
@pytest.mark.parametrize("seed", range(4))
def test_per_tensor_fully_connected_stores_one_multiplier_and_no_constant_qparams(seed):
    """Per-tensor weights take one requantization multiplier, not a copy per output channel, and the
    program stores no qparams for its constants (the ops' multipliers carry them): TFLM's outputs
    still."""
    rng = np.random.default_rng(2000 + seed)
    model = fc_model(rng, per_channel=False)
    n, lowered = compare(model, 8, seed=seed)
    assert n == 8
    linear = next(n for n in lowered.nodes if n.op == "cortex_m.quantized_linear.default")
    assert len(linear.attrs["requantize_multipliers"]) == len(linear.attrs["requantize_shifts"]) == 1
    _, program = cortexm_program(model)
    constants = [t for t in program.tensors() if t["location"] == "constant"]
    assert constants and all(t["scale"] is None and t["zero_point"] is None for t in constants)
