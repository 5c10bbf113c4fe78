"""The int16 cortex_m ops inside a graph (quantized_conv2d_s16, quantized_linear_s16,
quantized_magnitude_s16, requantize_s16, quantized_add_s16, quantized_mul_s16,
quantized_activation_s16): the interpreter runs the same kernels as cortexm.ops."""

import numpy as np
import pytest

import cortexm

rng = np.random.default_rng(16)


def int16(*shape):
    return rng.integers(-32768, 32768, size=shape, dtype=np.int16)


def nhwc(x):
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1))


def nchw(x):
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def conv_attrs(c_out):
    return dict(stride=[1, 128], padding=[0, 1, 0, 2], dilation=[1, 1],
                requantize_multipliers=[int(m) for m in rng.integers(1 << 30, 1 << 31, c_out)],
                requantize_shifts=[int(s) for s in rng.integers(-12, -8, c_out)],
                activation_min=-32768, activation_max=32767)


@pytest.mark.parametrize("with_bias", [False, True])
def test_conv2d_s16_matches_direct_kernel(with_bias):
    x = int16(2, 1, 1, 640)  # Silero's STFT as a 1-row conv2d
    w = rng.integers(-128, 128, size=(10, 1, 256, 1), dtype=np.int8)
    b = rng.integers(-(1 << 30), 1 << 30, 10).astype(np.int64) if with_bias else None
    attrs = conv_attrs(10)
    g = cortexm.Graph()
    xv = g.add_input("x", list(x.shape), "int16")
    out = g.call("cortex_m.quantized_conv2d_s16.default",
                 [xv, g.add_constant("w", w), g.add_constant("b", b) if with_bias else None], attrs)
    g.outputs = [out]
    g.verify()
    got = g.run(x)
    want = cortexm.ops.quantized_conv2d_s16(nhwc(x), w, b, **attrs)
    assert got.dtype == np.int16
    assert np.array_equal(got, nchw(want))
    assert out.dim_order == (0, 2, 3, 1)


@pytest.mark.parametrize("with_bias,per_channel", [(False, True), (True, False), (True, True)])
def test_linear_s16_matches_direct_kernel(with_bias, per_channel):
    x = int16(2, 3, 129)
    w = rng.integers(-128, 128, size=(7, 129), dtype=np.int8)
    b = rng.integers(-(1 << 30), 1 << 30, 7).astype(np.int64) if with_bias else None
    count = 7 if per_channel else 1
    attrs = dict(requantize_multipliers=[int(m) for m in rng.integers(1 << 30, 1 << 31, count)],
                 requantize_shifts=[int(s) for s in rng.integers(-12, -8, count)],
                 activation_min=-20000, activation_max=32767)
    g = cortexm.Graph()
    xv = g.add_input("x", list(x.shape), "int16")
    out = g.call("cortex_m.quantized_linear_s16.default",
                 [xv, g.add_constant("w", w), g.add_constant("b", b) if with_bias else None], attrs)
    g.outputs = [out]
    g.verify()
    got = g.run(x)
    want = cortexm.ops.quantized_linear_s16(x, w, b, **attrs)
    assert got.dtype == np.int16 and got.shape == (2, 3, 7)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_magnitude_s16_matches_direct_kernel(dtype):
    re_, im = int16(1, 129, 4), int16(1, 129, 4)
    lo, hi = (-128, 127) if dtype == "int8" else (-32768, 32767)
    attrs = dict(output_multiplier=1 << 30, output_shift=-14 if dtype == "int16" else -22,
                 output_zero_point=lo + 1 if dtype == "int8" else 0, output_dtype=dtype,
                 activation_min=lo, activation_max=hi)
    g = cortexm.Graph()
    out = g.call("cortex_m.quantized_magnitude_s16.default",
                 [g.add_input("re", [1, 129, 4], "int16"), g.add_input("im", [1, 129, 4], "int16")],
                 attrs)
    g.outputs = [out]
    got = g.run(re_, im)
    want = cortexm.ops.quantized_magnitude_s16(re_, im, **attrs)
    assert got.dtype == np.dtype(dtype) and np.array_equal(got, want)


@pytest.mark.parametrize("in_dtype,out_dtype", [("int16", "int8"), ("int8", "int16"),
                                                ("int16", "int16")])
def test_requantize_s16_matches_direct_kernel(in_dtype, out_dtype):
    info = np.iinfo(in_dtype)
    x = rng.integers(info.min, info.max + 1, size=(2, 3, 5)).astype(in_dtype)
    lo, hi = (-128, 127) if out_dtype == "int8" else (-32768, 32767)
    attrs = dict(input_zero_point=0 if in_dtype == "int16" else -7, output_zero_point=lo // 2,
                 output_multiplier=(1 << 30) + 12345, output_shift=-6,
                 output_dtype=out_dtype, activation_min=lo, activation_max=hi)
    g = cortexm.Graph()
    out = g.call("cortex_m.requantize_s16.default", [g.add_input("x", list(x.shape), in_dtype)],
                 attrs)
    g.outputs = [out]
    got = g.run(x)
    want = cortexm.ops.requantize_s16(x, **attrs)
    assert got.dtype == np.dtype(out_dtype) and np.array_equal(got, want)


ADD_S16_ATTRS = dict(self_multiplier=(1 << 30) + 77, self_shift=-1, other_multiplier=1 << 30,
                     other_shift=-3, output_multiplier=(1 << 30) + 5, output_shift=0,
                     activation_min=-20000, activation_max=32767)
MUL_S16_ATTRS = dict(output_multiplier=(1 << 30) + 99, output_shift=-13, activation_min=-32768,
                     activation_max=30000)


@pytest.mark.parametrize("op,attrs", [("quantized_add_s16", ADD_S16_ATTRS),
                                      ("quantized_mul_s16", MUL_S16_ATTRS)])
@pytest.mark.parametrize("shape_a,shape_b", [((2, 3, 5), (2, 3, 5)), ((2, 3, 5), (3, 1)),
                                             ((1, 5), (2, 3, 5)), ((4,), ())])
def test_binary_s16_matches_direct_kernel(op, attrs, shape_a, shape_b):
    a, b = int16(*shape_a), int16(*shape_b)
    g = cortexm.Graph()
    out = g.call(f"cortex_m.{op}.default",
                 [g.add_input("a", list(shape_a), "int16"), g.add_input("b", list(shape_b), "int16")],
                 attrs)
    g.outputs = [out]
    got = g.run(a, b)
    want = getattr(cortexm.ops, op)(a, other=b, **attrs)
    assert got.dtype == np.int16 and got.shape == np.broadcast_shapes(shape_a, shape_b)
    assert np.array_equal(got, want)


def test_quantized_activation_s16_matches_direct_kernel():
    x = int16(2, 3, 17)
    table = int16(513)
    g = cortexm.Graph()
    out = g.call("cortex_m.quantized_activation_s16.default",
                 [g.add_input("x", list(x.shape), "int16"), g.add_constant("table", table)], {})
    g.outputs = [out]
    got = g.run(x)
    assert got.dtype == np.int16 and np.array_equal(got, cortexm.ops.quantized_activation_s16(x, table))


def test_errors_name_node_and_argument():
    g = cortexm.Graph()
    x = g.add_input("x", [1, 1, 1, 640], "int16")
    w = g.add_constant("w", np.zeros((4, 1, 256, 1), np.int8))
    attrs = conv_attrs(4)
    attrs["requantize_shifts"] = [0, 8, 0, 0]
    with pytest.raises(ValueError, match=r"node 'stft'.*requantize_shifts\[1\] = 8 must be in \[-31, 7\]"):
        g.call("cortex_m.quantized_conv2d_s16.default", [x, w, None], attrs, name="stft")
    with pytest.raises(ValueError, match="expected int16"):
        g.call("cortex_m.quantized_conv2d_s16.default",
               [g.add_input("i8", [1, 1, 1, 640], "int8"), w, None], conv_attrs(4))
    with pytest.raises(ValueError, match="int64"):
        g.call("cortex_m.quantized_conv2d_s16.default",
               [x, w, g.add_constant("b", np.zeros(4, np.int32))], conv_attrs(4))
    re_ = g.add_input("re", [1, 129, 4], "int16")
    with pytest.raises(ValueError, match="must have the shape and dim order of real"):
        g.call("cortex_m.quantized_magnitude_s16.default", [re_, g.add_input("im", [1, 128, 4], "int16")],
               dict(output_multiplier=1 << 30, output_shift=-14, output_zero_point=0,
                    output_dtype="int16", activation_min=-32768, activation_max=32767))
    with pytest.raises(ValueError, match="input_zero_point' = 3 must be in \\[0, 0\\]"):
        g.call("cortex_m.requantize_s16.default", [re_],
               dict(input_zero_point=3, output_zero_point=0, output_multiplier=1 << 30,
                    output_shift=-6, output_dtype="int8", activation_min=-128, activation_max=127))
    lin = dict(requantize_multipliers=[1 << 30] * 3, requantize_shifts=[0, 8, 0])
    with pytest.raises(ValueError, match=r"node 'fc'.*requantize_shifts\[1\] = 8 must be in \[-31, 7\]"):
        g.call("cortex_m.quantized_linear_s16.default",
               [g.add_input("v", [2, 4], "int16"), g.add_constant("lw", np.zeros((3, 4), np.int8)),
                None], lin, name="fc")
    lin["requantize_shifts"] = [0, 0, 0]
    with pytest.raises(ValueError, match="expected int16"):
        g.call("cortex_m.quantized_linear_s16.default",
               [g.add_input("v8", [2, 4], "int8"), g.add_constant("lw8", np.zeros((3, 4), np.int8)),
                None], lin)
    with pytest.raises(ValueError, match="int64"):
        g.call("cortex_m.quantized_linear_s16.default",
               [g.add_input("v2", [2, 4], "int16"), g.add_constant("lw2", np.zeros((3, 4), np.int8)),
                g.add_constant("lb", np.zeros(3, np.int32))], lin)
    a = g.add_input("a16", [2, 3], "int16")
    with pytest.raises(ValueError, match=r"node 'gate'.*'activation_min' = -40000 must be in \[-32768, 32767\]"):
        g.call("cortex_m.quantized_add_s16.default", [a, a], {**ADD_S16_ATTRS, "activation_min": -40000},
               name="gate")
    with pytest.raises(ValueError, match="expected int16"):
        g.call("cortex_m.quantized_mul_s16.default", [a, g.add_input("a8", [2, 3], "int8")], MUL_S16_ATTRS)
    with pytest.raises(ValueError, match="broadcast"):
        g.call("cortex_m.quantized_mul_s16.default", [a, g.add_input("b16", [2, 4], "int16")],
               MUL_S16_ATTRS)
    with pytest.raises(ValueError, match="activation_min = 9 must be <= activation_max"):
        g.call("cortex_m.quantized_mul_s16.default", [a, a],
               {**MUL_S16_ATTRS, "activation_min": 9, "activation_max": 8})
    with pytest.raises(ValueError, match=r"node 'act'.*table \[512\] must be \[513\]"):
        g.call("cortex_m.quantized_activation_s16.default",
               [re_, g.add_constant("t512", np.zeros(512, np.int16))], {}, name="act")
    with pytest.raises(ValueError, match="expected int16"):
        g.call("cortex_m.quantized_activation_s16.default",
               [re_, g.add_constant("t8", np.zeros(513, np.int8))], {})
