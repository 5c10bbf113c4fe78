"""The new cortex_m ops inside a graph run the same kernels as cortexm.ops (logical NCHW staged to
the kernels' layouts; quantized_mean reads the input's dim order)."""

import numpy as np

import cortexm
from numpy_reference.common import quantize_multiplier

rng = np.random.default_rng(7)
ops = cortexm.ops


def int8(*shape):
    return rng.integers(-128, 128, size=shape, dtype=np.int8)


def run(op, inputs, attrs, constants=(), dim_order=None):
    g = cortexm.Graph()
    values = [g.add_input(f"in{i}", list(x.shape), "int8") for i, x in enumerate(inputs)]
    if dim_order is not None:
        values[0].dim_order = dim_order
    values += [None if c is None else g.add_constant(f"c{i}", c) for i, c in enumerate(constants)]
    out = g.call(op, values, attrs)
    g.outputs = [out]
    g.verify()
    return g.run(*inputs), out


def test_batch_matmul():
    a, b = int8(3, 5, 7), int8(3, 4, 7)
    attrs = dict(lhs_offset=4, rhs_offset=-2, output_offset=1, output_multiplier=1 << 30,
                 output_shift=-8, activation_min=-100, activation_max=90)
    got, _ = run("cortex_m.quantized_batch_matmul.default", [a, b], attrs)
    assert np.array_equal(got, ops.quantized_batch_matmul(a, b, **attrs))


def test_minimum_maximum_broadcast():
    a, b = int8(2, 3, 4), int8(4)
    attrs = dict(self_zero_point=3, self_multiplier=1 << 30, self_shift=0, other_zero_point=-3,
                 other_multiplier=3 << 28, other_shift=0, output_zero_point=5,
                 output_multiplier=1 << 30, output_shift=-18, activation_min=-128,
                 activation_max=127)
    for name in ("maximum", "minimum"):
        got, _ = run(f"cortex_m.quantized_{name}.default", [a, b], attrs)
        want = getattr(ops, f"quantized_{name}")(a, other=b, **attrs)
        assert np.array_equal(got, want)


def test_requantize_keeps_shape_and_dim_order():
    x = int8(2, 3, 4, 5)
    m, s = quantize_multiplier(0.7 / (1 << 20))
    attrs = dict(input_zero_point=-4, output_zero_point=9, output_multiplier=m, output_shift=s)
    got, out = run("cortex_m.requantize.default", [x], attrs, dim_order=[0, 2, 3, 1])
    assert list(out.dim_order) == [0, 2, 3, 1]
    assert np.array_equal(got, ops.requantize(x, **attrs))


def test_mean_in_memory_order():
    x = int8(2, 6, 5, 7)
    m, s = quantize_multiplier(0.5 / 35)
    attrs = dict(dim=[2, 3], keepdim=True, input_offset=3, output_offset=-2, output_multiplier=m,
                 output_shift=s)
    want = ops.quantized_mean(x, [2, 3], True, 3, -2, m, s)
    got, _ = run("cortex_m.quantized_mean.default", [x], attrs)
    assert np.array_equal(got, want)
    got, out = run("cortex_m.quantized_mean.default", [x], attrs, dim_order=[0, 2, 3, 1])
    assert np.array_equal(got, want)  # NHWC bytes: [N, H*W, C], same values
    assert list(out.dim_order) == [0, 2, 3, 1]


def test_transpose_conv2d_nchw():
    x, w = int8(1, 3, 4, 5), rng.integers(-127, 128, size=(4, 3, 3, 3), dtype=np.int8)
    b = rng.integers(-3000, 3000, size=4, dtype=np.int32)
    attrs = dict(stride=[2, 2], padding=[1, 1], output_padding=[1, 0], input_offset=7,
                 output_offset=-3, requantize_multipliers=[1 << 30] * 4,
                 requantize_shifts=[-9, -8, -9, -10], activation_min=-128, activation_max=127)
    got, out = run("cortex_m.quantized_transpose_conv2d.default", [x], attrs, constants=[w, b])
    want = ops.quantized_transpose_conv2d(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), w, b,
                                          **attrs)
    assert np.array_equal(got, want.transpose(0, 3, 1, 2))
    assert list(out.dim_order) == [0, 2, 3, 1]
