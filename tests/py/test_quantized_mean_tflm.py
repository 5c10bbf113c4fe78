"""quantized_mean against TFLite Micro's MEAN (reference reduce, QuantizedMeanOrSum), with numbers
made here: this file's own plain-Python TFLM arithmetic (gemmlowp's rounding formulation, integer
only; it shares no code with numpy_reference), over awkward counts and qparams, through the op,
the numpy reference's params and the lowering. When ai_edge_litert or tflite_runtime imports,
also against TFLite's own reference kernels on a one-op .tflite MEAN model."""

import math

import numpy as np
import pytest

import cortexm
from numpy_reference.mean import mean_params

ops = cortexm.ops

F32 = np.float32
COUNTS = (1, 2, 3, 7, 49, 96, 1000, 4096, 65537)
HW = {1: (1, 1), 2: (1, 2), 3: (3, 1), 7: (7, 1), 49: (7, 7), 96: (8, 12), 1000: (25, 40), 4096: (64, 64),
      65537: (65537, 1)}
# (s_in, zp_in, s_out, zp_out), float32 scales as a .tflite holds them.
QPARAMS = [
    (F32(0.05), 4, F32(0.05), 4),                    # equal
    (F32(0.0123), -128, F32(0.0123), -128),          # equal, extreme zero points
    (F32(0.2), 127, F32(0.2), 127),
    (F32(0.05), 4, F32(0.02), -3),                   # unequal
    (F32(0.02), -128, F32(0.05), 127),
    (F32(0.1), 127, F32(0.011), -128),
    (np.nextafter(F32(0.5), F32(0)), 0, F32(0.5), 0),  # s_in / s_out just below 1: m = 2^31 - 128
    (F32(0.25), -7, F32(0.5), 9),                    # exactly 1/2: m = 2^30
    (F32(1.0), 3, F32(0.005), -100),                 # 200: shift 8
    (F32(2.0**-20), 0, F32(2.0**11), 0),             # 2^-31: shift -30, k capped at 1
    (F32(2.0**-21), 5, F32(2.0**11), -5),            # 2^-32: shift -31, k capped at 0
]


# --- TFLite Micro's arithmetic, in Python integers -------------------------------------------

def tflm_quantize_multiplier(real):
    """QuantizeMultiplier (double rounding build): frexp, round half away, 2^31 -> 2^30 and shift + 1,
    shift < -31 -> 0."""
    if real == 0.0:
        return 0, 0
    fraction, shift = math.frexp(real)
    q = math.floor(fraction * 2.0**31 + 0.5)
    if q == 2**31:
        q, shift = q // 2, shift + 1
    if shift < -31:
        return 0, 0
    return q, shift


def saturating_rounding_doubling_high_mul(a, b):
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    v = ab + nudge
    return v >> 31 if v >= 0 else -((-v) >> 31)  # C++ division truncates toward zero


def rounding_divide_by_pot(x, exponent):
    mask = (1 << exponent) - 1
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if (x & mask) > threshold else 0)


def multiply_by_quantized_multiplier(x, multiplier, shift):
    left, right = max(shift, 0), max(-shift, 0)
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x * (1 << left), multiplier),
                                  right)


def tflm_mean_rescale(s_in, s_out, count):
    """PrepareMeanOrSum's multiplier of s_in / s_out, then QuantizedMeanOrSum's 1/count fold."""
    multiplier, shift = tflm_quantize_multiplier(float(s_in) / float(s_out))
    k = 63 - (64 - count.bit_length())  # 63 - CountLeadingZeros(uint64 count)
    k = min(k, 32, 31 + shift)
    return (multiplier << k) // count, shift - k


def tflm_mean(q, axes, zp_in, s_in, zp_out, s_out, keepdims=False):
    axes = tuple(a % q.ndim for a in axes)
    count = int(np.prod([q.shape[a] for a in axes]))
    multiplier, shift = tflm_mean_rescale(s_in, s_out, count)
    sums = np.sum(q.astype(np.int64), axis=axes, keepdims=keepdims)
    out = [min(max(multiply_by_quantized_multiplier(int(t) - zp_in * count, multiplier, shift)
                   + zp_out, -128), 127) for t in sums.ravel()]
    return np.array(out, np.int8).reshape(sums.shape)


def awkward_int8(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, size=shape, dtype=np.int8)
    flat = x.reshape(-1, shape[-1]) if len(shape) > 1 else x.reshape(1, -1)
    flat[0] = -128  # saturating rows
    if len(flat) > 1:
        flat[1] = 127
    return x


# --- the arithmetic worked by hand -------------------------------------------------------------

def test_tflm_arithmetic_by_hand():
    assert tflm_quantize_multiplier(1.0) == (1 << 30, 1)
    assert tflm_mean_rescale(F32(0.05), F32(0.05), 49) == (701219150, -4)  # 2^35 // 49
    assert tflm_mean_rescale(F32(0.05), F32(0.05), 2) == (1 << 30, 0)
    # Equal qparams, zero point 0: the mean of -1 and -2 is -1.5; TFLM's doubling multiply rounds
    # it to -1 (an AVERAGE_POOL_2D would give -2), the mean of 1 and 2 to 2.
    x = np.array([[-1, -2], [1, 2], [0, 1], [-128, -128]], np.int8)
    assert tflm_mean(x, (1,), 0, F32(0.1), 0, F32(0.1)).tolist() == [-1, 2, 1, -128]
    m, s = tflm_mean_rescale(F32(0.1), F32(0.1), 2)
    assert ops.quantized_mean(x, [1], False, 0, 0, m, s).tolist() == [-1, 2, 1, -128]


# --- op level: every count and qparams ---------------------------------------------------------

@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("qparams", QPARAMS, ids=lambda q: f"{float(q[0]):.3g}/{float(q[2]):.3g}")
def test_op_matches_tflm(count, qparams):
    s_in, zp_in, s_out, zp_out = qparams
    m, s = tflm_mean_rescale(s_in, s_out, count)
    assert mean_params(float(s_in), float(s_out), count) == (m, s)
    h, w = HW[count]
    nhwc = awkward_int8((2, h, w, 5), seed=count)
    for x, dims in [(nhwc, (1, 2)),                        # TFLite's NHWC spatial mean
                    (np.ascontiguousarray(nhwc.transpose(0, 3, 1, 2)), (2, 3)),  # NCHW H, W
                    (awkward_int8((6, count), seed=count + 1), (1,))]:  # the last dim
        for keepdim in (False, True):
            want = tflm_mean(x, dims, zp_in, s_in, zp_out, s_out, keepdim)
            got = ops.quantized_mean(x, list(dims), keepdim, -zp_in, zp_out, m, s)
            assert np.array_equal(got, want), (dims, keepdim, np.count_nonzero(got != want))


# --- through the lowering ----------------------------------------------------------------------

def q_attrs(scale, zp):
    return {"scale": float(scale), "zero_point": zp, "quant_min": -128, "quant_max": 127,
            "dtype": "int8"}


def lowered_mean(shape, dims, keepdim, qparams):
    s_in, zp_in, s_out, zp_out = qparams
    g = cortexm.Graph()
    x = g.add_input("x", list(shape))
    xq = g.call("quantized_decomposed.quantize_per_tensor.default", [x], q_attrs(s_in, zp_in))
    xdq = g.call("quantized_decomposed.dequantize_per_tensor.default", [xq], q_attrs(s_in, zp_in))
    y = g.call("aten.mean.dim", [xdq], {"dim": list(dims), "keepdim": keepdim})
    yq = g.call("quantized_decomposed.quantize_per_tensor.default", [y], q_attrs(s_out, zp_out))
    g.outputs = [g.call("quantized_decomposed.dequantize_per_tensor.default", [yq],
                        q_attrs(s_out, zp_out))]
    return cortexm.lower(g, "cortex-m55+int8")


@pytest.mark.parametrize("count", (1, 3, 49, 96, 1000))
@pytest.mark.parametrize("qparams", QPARAMS[:9], ids=lambda q: f"{float(q[0]):.3g}/{float(q[2]):.3g}")
def test_lowering_matches_tflm(count, qparams):
    s_in, zp_in, s_out, zp_out = qparams
    h, w = HW[count]
    for shape, dims in [((2, 4, h, w), (2, 3)), ((3, 2, count), (-1,))]:
        lowered = lowered_mean(shape, dims, False, qparams)
        counts = lowered.op_counts()
        assert counts.get("cortex_m.quantized_mean.default") == 1, counts
        assert "cortex_m.quantized_avg_pool2d.default" not in counts
        (node,) = [n for n in lowered.nodes if n.op == "cortex_m.quantized_mean.default"]
        m, s = tflm_mean_rescale(s_in, s_out, count)
        assert (node.attrs["output_multiplier"], node.attrs["output_shift"]) == (m, s)
        q = awkward_int8(shape, seed=count + 7)
        real = ((q.astype(np.float64) - zp_in) * float(s_in)).astype(np.float32)
        y = lowered.run(real)
        got = np.rint(np.asarray(y, np.float64) / float(s_out)) + zp_out
        want = tflm_mean(q, dims, zp_in, s_in, zp_out, s_out)
        assert np.array_equal(got, want), (shape, dims, np.count_nonzero(got != want))


# --- TFLite's own interpreter ------------------------------------------------------------------

def _litert():
    for module in ("ai_edge_litert.interpreter", "tflite_runtime.interpreter"):
        try:
            return __import__(module, fromlist=["Interpreter"])
        except ImportError:
            continue
    pytest.skip("neither ai_edge_litert nor tflite_runtime is installed")


def mean_tflite(schema, shape, axes, keepdims, qparams):
    """A .tflite with one int8 MEAN: input, constant int32 axes, output."""
    import flatbuffers

    s_in, zp_in, s_out, zp_out = qparams
    out_shape = [1 if a in axes else d for a, d in enumerate(shape)] if keepdims else \
        [d for a, d in enumerate(shape) if a not in axes]

    def tensor(name, shp, dtype, buffer, q=None):
        t = schema.TensorT()
        t.name, t.shape, t.type, t.buffer = name, list(shp), dtype, buffer
        if q is not None:
            t.quantization = schema.QuantizationParametersT()
            t.quantization.scale, t.quantization.zeroPoint = [float(q[0])], [int(q[1])]
        return t

    buffers = [schema.BufferT() for _ in range(4)]
    buffers[2].data = list(np.array(axes, "<i4").tobytes())
    sub = schema.SubGraphT()
    sub.tensors = [tensor("x", shape, schema.TensorType.INT8, 1, (s_in, zp_in)),
                   tensor("axes", [len(axes)], schema.TensorType.INT32, 2),
                   tensor("y", out_shape, schema.TensorType.INT8, 3, (s_out, zp_out))]
    sub.inputs, sub.outputs = [0], [2]
    op = schema.OperatorT()
    op.opcodeIndex, op.inputs, op.outputs = 0, [0, 1], [2]
    op.builtinOptionsType = schema.BuiltinOptions.ReducerOptions
    op.builtinOptions = schema.ReducerOptionsT()
    op.builtinOptions.keepDims = keepdims
    sub.operators = [op]
    code = schema.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = schema.BuiltinOperator.MEAN
    code.version = 2
    model = schema.ModelT()
    model.version, model.operatorCodes, model.subgraphs, model.buffers = 3, [code], [sub], buffers
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


@pytest.mark.parametrize("count", COUNTS)
def test_tflite_interpreter_agrees(count):
    interpreter_module = _litert()
    schema = pytest.importorskip(interpreter_module.__name__.split(".")[0] + ".schema_py_generated")
    h, w = HW[count]
    for qparams in QPARAMS:
        s_in, zp_in, s_out, zp_out = qparams
        m, s = tflm_mean_rescale(s_in, s_out, count)
        for shape, axes in [((2, h, w, 5), [1, 2]), ((6, count), [1])]:
            x = awkward_int8(shape, seed=count + 3)
            model = mean_tflite(schema, shape, axes, False, qparams)
            interpreter = interpreter_module.Interpreter(
                model_content=model,
                experimental_op_resolver_type=interpreter_module.OpResolverType.BUILTIN_REF)
            interpreter.allocate_tensors()
            interpreter.set_tensor(interpreter.get_input_details()[0]["index"], x)
            interpreter.invoke()
            tflite = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
            ours = ops.quantized_mean(x, axes, False, -zp_in, zp_out, m, s)
            assert np.array_equal(tflm_mean(x, axes, zp_in, s_in, zp_out, s_out), tflite), qparams
            assert np.array_equal(ours, tflite), (qparams, np.count_nonzero(ours != tflite))
