"""cortex_m ops inside a graph: the interpreter runs the same kernels as cortexm.ops, with the
graph's logical NCHW tensors staged to and from the kernels' channels-last layout."""

import numpy as np
import pytest

import cortexm

rng = np.random.default_rng(42)


def int8(*shape):
    return rng.integers(-128, 128, size=shape, dtype=np.int8)


def nhwc(x):
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1))


def nchw(x):
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def run_single(op, inputs, attrs):
    g = cortexm.Graph()
    values = []
    for i, x in enumerate(inputs):
        if x is None:
            values.append(None)
        elif i == 0 or (op.endswith(("add.default", "mul.default")) and i == 1):
            values.append(g.add_input(f"in{i}", list(x.shape), str(x.dtype)))
        else:
            values.append(g.add_constant(f"c{i}", x))
    out = g.call(op, values, attrs)
    g.outputs = [out]
    g.verify()
    feeds = [x for i, x in enumerate(inputs)
             if x is not None and (i == 0 or (op.endswith(("add.default", "mul.default")) and i == 1))]
    return g.run(*feeds), out


def conv_attrs(c_out, **kw):
    return dict(stride=kw.get("stride", [1, 1]), padding=kw.get("padding", [1, 1]),
                dilation=kw.get("dilation", [1, 1]), input_offset=kw.get("input_offset", 7),
                output_offset=kw.get("output_offset", -3),
                requantize_multipliers=[int(m) for m in rng.integers(1 << 30, 1 << 31, c_out)],
                requantize_shifts=[int(s) for s in rng.integers(-10, -6, c_out)],
                activation_min=-128, activation_max=127)


@pytest.mark.parametrize("groups", [1, 3])
def test_conv2d_matches_direct_kernel(groups):
    x = int8(2, 6, 9, 7)
    w = int8(12, 3, 3, 6 // groups)
    b = rng.integers(-5000, 5000, 12, dtype=np.int32)
    attrs = conv_attrs(12, stride=[2, 1], padding=[1, 0, 2, 1])
    got, value = run_single("cortex_m.quantized_conv2d.default", [x, w, b], attrs)
    want = cortexm.ops.quantized_conv2d(nhwc(x), w, b, **attrs)
    assert np.array_equal(got, nchw(want))
    assert value.dim_order == (0, 2, 3, 1)


def test_depthwise_matches_direct_kernel():
    x = int8(1, 5, 8, 8)
    w = int8(1, 3, 3, 10)
    attrs = conv_attrs(10)
    attrs["depth_multiplier"] = 2
    got, _ = run_single("cortex_m.quantized_depthwise_conv2d.default", [x, w, None], attrs)
    want = cortexm.ops.quantized_depthwise_conv2d(nhwc(x), w, None, **attrs)
    assert np.array_equal(got, nchw(want))


def test_linear_matches_direct_kernel():
    x = int8(3, 37)
    w = int8(11, 37)
    b = rng.integers(-9000, 9000, 11, dtype=np.int32)
    attrs = dict(input_offset=5, filter_offset=0, output_offset=-2,
                 requantize_multipliers=[int(m) for m in rng.integers(1 << 30, 1 << 31, 11)],
                 requantize_shifts=[-9] * 11, activation_min=-100, activation_max=90)
    got, _ = run_single("cortex_m.quantized_linear.default", [x, w, b], attrs)
    assert np.array_equal(got, cortexm.ops.quantized_linear(x, w, b, **attrs))


def test_add_and_mul_broadcast():
    a, b = int8(2, 4, 3, 5), int8(2, 4, 1, 1)
    add = dict(self_zero_point=3, self_multiplier=1 << 30, self_shift=0, other_zero_point=-2,
               other_multiplier=1 << 30, other_shift=-1, output_zero_point=1,
               output_multiplier=1 << 30, output_shift=-19, activation_min=-128, activation_max=127)
    got, _ = run_single("cortex_m.quantized_add.default", [a, b], add)
    assert np.array_equal(got, cortexm.ops.quantized_add(a, other=b, **{k: v for k, v in add.items()}))
    mul = dict(self_zero_point=3, other_zero_point=-2, output_zero_point=1,
               output_multiplier=1 << 30, output_shift=-7, activation_min=-128, activation_max=127)
    got, _ = run_single("cortex_m.quantized_mul.default", [a, b], mul)
    assert np.array_equal(got, cortexm.ops.quantized_mul(a, other=b, **mul))


@pytest.mark.parametrize("op", ["avg", "max"])
def test_pools(op):
    x = int8(2, 3, 9, 10)
    attrs = dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], activation_min=-128,
                 activation_max=127)
    got, _ = run_single(f"cortex_m.quantized_{op}_pool2d.default", [x], attrs)
    want = getattr(cortexm.ops, f"quantized_{op}_pool2d")(nhwc(x), **attrs)
    assert np.array_equal(got, nchw(want))


def test_kernel_prepare_errors_name_node_and_argument():
    g = cortexm.Graph()
    x = g.add_input("x", [1, 4, 5, 5], "int8")
    w = g.add_constant("w", int8(2, 3, 3, 4))
    attrs = conv_attrs(2)
    attrs["requantize_shifts"] = [0, 31]
    with pytest.raises(ValueError, match=r"node 'conv'.*requantize_shifts\[1\] = 31"):
        g.call("cortex_m.quantized_conv2d.default", [x, w, None], attrs, name="conv")
    attrs = conv_attrs(2)
    attrs["requantize_multipliers"] = [1 << 30]
    with pytest.raises(ValueError, match="requantize_multipliers' has 1 values, expected 2"):
        g.call("cortex_m.quantized_conv2d.default", [x, w, None], attrs)
    with pytest.raises(ValueError, match="expected int8"):
        g.call("cortex_m.quantized_conv2d.default", [g.add_input("f", [1, 4, 5, 5]), w, None], conv_attrs(2))
