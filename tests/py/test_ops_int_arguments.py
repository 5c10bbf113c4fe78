"""cortexm.ops.*: an int scalar argument given as anything but an int (float, str, bool, None) or
beyond int64 raises ValueError naming the op, the argument and the value, not pybind's TypeError;
Python ints and numpy integers are accepted. The same holds for the elements of list-of-int
arguments, and out-of-range ints raise ValueError naming the argument."""

import re

import numpy as np
import pytest

import cortexm

X4 = np.zeros((1, 3, 3, 2), np.int8)
M = 1 << 30
SOFTMAX = cortexm.ops.softmax_scaling(0.1)
LOG_SOFTMAX = cortexm.ops.log_softmax_scaling(0.1)

# One valid call per op, by keyword.
VALID = {
    "quantized_add": dict(self=X4, self_zero_point=0, self_multiplier=M, self_shift=0, other=X4,
                          other_zero_point=0, other_multiplier=M, other_shift=0,
                          output_zero_point=0, output_multiplier=M, output_shift=0,
                          activation_min=-128, activation_max=127),
    "quantized_mul": dict(self=X4, self_zero_point=0, other=X4, other_zero_point=0,
                          output_zero_point=0, output_multiplier=M, output_shift=0,
                          activation_min=-128, activation_max=127),
    "quantized_add_s16": dict(self=np.zeros(4, np.int16), self_multiplier=M, self_shift=-1,
                              other=np.zeros(4, np.int16), other_multiplier=M, other_shift=-1,
                              output_multiplier=M, output_shift=0, activation_min=-32768,
                              activation_max=32767),
    "quantized_mul_s16": dict(self=np.zeros(4, np.int16), other=np.zeros(4, np.int16),
                              output_multiplier=M, output_shift=0, activation_min=-32768,
                              activation_max=32767),
    "quantized_conv2d": dict(input=X4, weight=np.ones((2, 1, 1, 2), np.int8), bias=None,
                             stride=[1, 1], padding=[0, 0], dilation=[1, 1], input_offset=0,
                             output_offset=0, requantize_multipliers=[M, M],
                             requantize_shifts=[0, 0], activation_min=-128, activation_max=127),
    "quantized_depthwise_conv2d": dict(input=X4, weight=np.ones((1, 1, 1, 2), np.int8), bias=None,
                                       stride=[1, 1], padding=[0, 0], dilation=[1, 1],
                                       depth_multiplier=1, input_offset=0, output_offset=0,
                                       requantize_multipliers=[M, M], requantize_shifts=[0, 0],
                                       activation_min=-128, activation_max=127),
    "quantized_linear": dict(input=np.zeros((2, 4), np.int8), weights=np.ones((3, 4), np.int8),
                             bias=None, input_offset=0, filter_offset=0, output_offset=0,
                             requantize_multipliers=[M], requantize_shifts=[0],
                             activation_min=-128, activation_max=127),
    "quantized_linear_s16": dict(input=np.zeros((2, 4), np.int16), weights=np.ones((3, 4), np.int8),
                                 bias=None, requantize_multipliers=[M], requantize_shifts=[0],
                                 activation_min=-32768, activation_max=32767),
    "quantized_avg_pool2d": dict(input=X4, kernel_size=[2, 2], stride=[1, 1], padding=0,
                                 activation_min=-128, activation_max=127),
    "quantized_max_pool2d": dict(input=X4, kernel_size=[2, 2], stride=[1, 1], padding=0,
                                 activation_min=-128, activation_max=127),
    "quantized_maximum": dict(self=X4, self_zero_point=0, self_multiplier=M, self_shift=0,
                              other=X4, other_zero_point=0, other_multiplier=M, other_shift=0,
                              output_zero_point=0, output_multiplier=M, output_shift=0,
                              activation_min=-128, activation_max=127),
    "quantized_minimum": dict(self=X4, self_zero_point=0, self_multiplier=M, self_shift=0,
                              other=X4, other_zero_point=0, other_multiplier=M, other_shift=0,
                              output_zero_point=0, output_multiplier=M, output_shift=0,
                              activation_min=-128, activation_max=127),
    "quantized_transpose_conv2d": dict(input=X4, weight=np.ones((2, 1, 1, 2), np.int8), bias=None,
                                       stride=[1, 1], padding=[0, 0], output_padding=[0, 0],
                                       input_offset=0, output_offset=0,
                                       requantize_multipliers=[M, M], requantize_shifts=[0, 0],
                                       activation_min=-128, activation_max=127),
    "quantized_batch_matmul": dict(lhs=np.zeros((2, 3, 4), np.int8),
                                   rhs=np.zeros((2, 5, 4), np.int8), lhs_offset=0, rhs_offset=0,
                                   output_offset=0, output_multiplier=M, output_shift=0,
                                   activation_min=-128, activation_max=127),
    "quantized_mean": dict(input=X4, dim=[1, 2], keepdim=True, input_offset=0, output_offset=0,
                           output_multiplier=M, output_shift=0, activation_min=-128,
                           activation_max=127),
    "quantized_softmax": dict(input=X4, input_multiplier=SOFTMAX[0], input_shift=SOFTMAX[1],
                              diff_min=SOFTMAX[2], dim=-1),
    "quantized_log_softmax": dict(input=X4, input_multiplier=LOG_SOFTMAX[0],
                                  input_shift=LOG_SOFTMAX[1], diff_min=LOG_SOFTMAX[2],
                                  reverse_scaling_divisor=LOG_SOFTMAX[3],
                                  reverse_scaling_right_shift=LOG_SOFTMAX[4], dim=-1),
    "requantize": dict(input=X4, input_zero_point=0, output_zero_point=0, output_multiplier=M,
                       output_shift=0, activation_min=-128, activation_max=127),
    "quantized_conv2d_s16": dict(input=np.zeros((1, 3, 3, 2), np.int16), weight=np.ones((2, 1, 1, 2), np.int8),
                                 bias=None, stride=[1, 1], padding=[0, 0], dilation=[1, 1],
                                 requantize_multipliers=[M, M], requantize_shifts=[0, 0],
                                 activation_min=-32768, activation_max=32767),
    "quantized_conv2d_s16w16": dict(input=np.zeros((1, 3, 3, 2), np.int16),
                                    weight=np.ones((2, 1, 1, 2), np.int16), bias=None, stride=[1, 1],
                                    padding=[0, 0], dilation=[1, 1], requantize_multipliers=[M, M],
                                    requantize_shifts=[0, 0], activation_min=-32768, activation_max=32767),
    "quantized_linear_s16w16": dict(input=np.zeros((2, 4), np.int16), weights=np.ones((3, 4), np.int16),
                                    bias=None, requantize_multipliers=[M], requantize_shifts=[0],
                                    activation_min=-32768, activation_max=32767),
    "quantized_magnitude_s16": dict(real=np.zeros(4, np.int16), imag=np.zeros(4, np.int16),
                                    output_multiplier=M, output_shift=0, output_zero_point=0,
                                    output_dtype="int16"),
    "requantize_s16": dict(input=np.zeros((1, 3, 3, 2), np.int16), input_zero_point=0, output_zero_point=0,
                           output_multiplier=M, output_shift=0, output_dtype="int8"),
    "quantize_per_tensor": dict(input=np.zeros(4, np.float32), scale=0.1, zero_point=0,
                                quant_min=-128, quant_max=127, dtype="int8"),
    "dequantize_per_tensor": dict(input=np.zeros(4, np.int8), scale=0.1, zero_point=0,
                                  quant_min=-128, quant_max=127, dtype="int8"),
}


def int_arguments(op):
    """The arguments the binding's signature declares as int."""
    signature = getattr(cortexm.ops, op).__doc__.splitlines()[0]
    return re.findall(r"(\w+): int\b", signature)


def ops_with_int_arguments():
    return {op for op in dir(cortexm.ops)
            if not op.startswith("_") and callable(getattr(cortexm.ops, op)) and int_arguments(op)}


CASES = [(op, name) for op in VALID for name in int_arguments(op)]

# The list-of-int arguments (declared `object`: an int list, tuple or 1-D integer array).
INT_LISTS = {
    "quantized_conv2d": ["stride", "padding", "dilation", "requantize_multipliers",
                         "requantize_shifts"],
    "quantized_depthwise_conv2d": ["stride", "padding", "dilation", "requantize_multipliers",
                                   "requantize_shifts"],
    "quantized_transpose_conv2d": ["stride", "padding", "output_padding",
                                   "requantize_multipliers", "requantize_shifts"],
    "quantized_linear": ["requantize_multipliers", "requantize_shifts"],
    "quantized_linear_s16": ["requantize_multipliers", "requantize_shifts"],
    "quantized_linear_s16w16": ["requantize_multipliers", "requantize_shifts"],
    "quantized_conv2d_s16w16": ["stride", "padding", "dilation", "requantize_multipliers",
                                "requantize_shifts"],
    "quantized_avg_pool2d": ["kernel_size", "stride", "padding"],
    "quantized_max_pool2d": ["kernel_size", "stride", "padding"],
    "quantized_mean": ["dim"],
}
LIST_CASES = [(op, name) for op, names in INT_LISTS.items() for name in names]


def test_valid_covers_every_op_with_int_arguments():
    assert "requantize" in ops_with_int_arguments()  # the signature parsing finds them
    assert set(VALID) == ops_with_int_arguments()


def test_every_op_has_int_arguments_and_valid_calls_run():
    for op, kwargs in VALID.items():
        assert int_arguments(op), op
        assert set(int_arguments(op)) <= set(kwargs), op
        getattr(cortexm.ops, op)(**kwargs)


def test_no_op_takes_a_raw_cpp_integer():
    # A raw int64_t/int32_t argument shows as `typing.SupportsInt` (pybind's TypeError, and
    # int_arguments() would not see it); a std::vector<int64_t> one as `list[...]`.
    for op in dir(cortexm.ops):
        if op.startswith("_"):
            continue
        signature = getattr(cortexm.ops, op).__doc__.splitlines()[0]
        assert "SupportsInt" not in signature and "list[" not in signature, signature


@pytest.mark.parametrize("op, name", CASES)
@pytest.mark.parametrize("bad", [1.5, "3", True, None, 2**70])
def test_non_int_scalar_raises_value_error_naming_the_argument(op, name, bad):
    kwargs = dict(VALID[op], **{name: bad})
    with pytest.raises(ValueError, match=rf"^{op}: {name} = {re.escape(repr(bad))} "):
        getattr(cortexm.ops, op)(**kwargs)


@pytest.mark.parametrize("op, name", CASES)
@pytest.mark.parametrize("kind", [np.int32, np.int64])
def test_numpy_integers_are_ints(op, name, kind):
    kwargs = dict(VALID[op], **{name: kind(VALID[op][name])})
    getattr(cortexm.ops, op)(**kwargs)


@pytest.mark.parametrize("op, name", LIST_CASES)
@pytest.mark.parametrize("bad", [1.5, "3", True, None, np.float32(2.0)])
def test_non_int_list_element_raises_value_error_naming_the_argument(op, name, bad):
    valid = VALID[op][name]
    values = [bad] + list(valid[1:]) if isinstance(valid, list) else [bad]
    kwargs = dict(VALID[op], **{name: values})
    with pytest.raises(ValueError,
                       match=rf"^{op}: {name} must be a sequence of ints, got {re.escape(repr(values))}$"):
        getattr(cortexm.ops, op)(**kwargs)


@pytest.mark.parametrize("op, name", LIST_CASES)
def test_int_list_element_beyond_int64_raises_value_error(op, name):
    valid = VALID[op][name]
    values = [2**70] + list(valid[1:]) if isinstance(valid, list) else [2**70]
    kwargs = dict(VALID[op], **{name: values})
    with pytest.raises(ValueError, match=rf"^{op}: {name} = .* does not fit in int64$"):
        getattr(cortexm.ops, op)(**kwargs)


@pytest.mark.parametrize("op, name", LIST_CASES)
@pytest.mark.parametrize("kind", [np.int32, np.int64, "array"])
def test_numpy_integer_list_elements_are_ints(op, name, kind):
    valid = VALID[op][name]
    values = valid if isinstance(valid, list) else [valid]
    values = np.array(values, np.int32) if kind == "array" else [kind(v) for v in values]
    getattr(cortexm.ops, op)(**dict(VALID[op], **{name: values}))


# Ints of the right type but out of range: ValueError naming the argument and the value.
OUT_OF_RANGE = [
    ("requantize", dict(output_shift=40), "output_shift = 40 must be in [-31, 30]"),
    ("requantize_s16", dict(input_zero_point=3), "input_zero_point = 3 must be in [0, 0]"),
    ("requantize_s16", dict(output_multiplier=2**31), "output_multiplier = 2147483648 must be in"),
    ("quantized_conv2d_s16", dict(activation_max=40000), "activation_max = 40000 must be in [-32768, 32767]"),
    ("quantized_conv2d_s16w16", dict(activation_min=-40000), "activation_min = -40000 must be in [-32768, 32767]"),
    ("quantized_linear_s16w16", dict(activation_max=32768), "activation_max = 32768 must be in [-32768, 32767]"),
    ("quantized_magnitude_s16", dict(output_shift=40), "output_shift = 40 must be in [-31, 30]"),
    ("quantized_magnitude_s16", dict(activation_max=70000), "activation_max = 70000 must be in [-32768, 32767]"),
    ("requantize", dict(output_multiplier=2**31), "output_multiplier = 2147483648 must be in"),
    ("requantize", dict(input_zero_point=-2**63), f"input_zero_point = {-2**63} must be in"),
    ("quantized_add", dict(self_shift=40), "self_shift = 40 must be in [-31, 30]"),
    ("quantized_mul", dict(output_shift=-32), "output_shift = -32 must be in [-31, 30]"),
    ("quantized_add_s16", dict(other_shift=31), "other_shift = 31 must be in [-31, 30]"),
    ("quantized_add_s16", dict(activation_min=-32769), "activation_min = -32769 must be in [-32768, 32767]"),
    ("quantized_mul_s16", dict(output_multiplier=-1), "output_multiplier = -1 must be in"),
    ("quantized_mul_s16", dict(activation_max=32768), "activation_max = 32768 must be in [-32768, 32767]"),
    ("quantized_maximum", dict(other_multiplier=-1), "other_multiplier = -1 must be in"),
    ("quantized_minimum", dict(activation_max=128), "activation_max = 128 must be in [-128, 127]"),
    ("quantized_batch_matmul", dict(lhs_offset=200), "lhs_offset = 200 must be in [-127, 128]"),
    ("quantized_batch_matmul", dict(output_shift=2**62), f"output_shift = {2**62} must be in"),
    ("quantized_softmax", dict(dim=7), "dim = 7 is out of range for rank 4"),
    ("quantized_softmax", dict(dim=-5), "dim = -5 is out of range for rank 4"),
    ("quantized_softmax", dict(dim=2**63 - 1), f"dim = {2**63 - 1} is out of range for rank 4"),
    ("quantized_softmax", dict(input_shift=40), "input_shift = 40 must be in [0, 31]"),
    ("quantized_log_softmax", dict(dim=7), "dim = 7 is out of range for rank 4"),
    ("quantized_log_softmax", dict(reverse_scaling_right_shift=-1),
     "reverse_scaling_right_shift = -1 must be in [0, 31]"),
    ("quantized_mean", dict(dim=[7]), "dim = 7 is out of range for input (1, 3, 3, 2)"),
    ("quantized_mean", dict(dim=[-5]), "dim = -5 is out of range for input (1, 3, 3, 2)"),
    ("quantized_mean", dict(input_offset=-128), "input_offset = -128 must be in [-127, 128]"),
    ("quantized_conv2d", dict(stride=[-1, 1]), "stride[0] = -1 must be in [1, 2147483647]"),
    ("quantized_conv2d", dict(padding=[0, -2]), "padding[1] = -2 must be in [0, 2147483647]"),
    ("quantized_conv2d", dict(dilation=[0, 1]), "dilation[0] = 0 must be in [1, 2147483647]"),
    ("quantized_conv2d", dict(stride=[2**31, 1]), "stride[0] = 2147483648 must be in"),
    ("quantized_conv2d", dict(requantize_shifts=[40, 0]),
     "requantize_shifts[0] = 40 must be in [-31, 30]"),
    ("quantized_depthwise_conv2d", dict(depth_multiplier=0),
     "depth_multiplier = 0 must be in [1, 2147483647]"),
    ("quantized_depthwise_conv2d", dict(depth_multiplier=-3),
     "depth_multiplier = -3 must be in [1, 2147483647]"),
    ("quantized_transpose_conv2d", dict(stride=[0, 1]), "stride[0] = 0 must be in [1, 2147483647]"),
    ("quantized_transpose_conv2d", dict(output_padding=[-1, 0]),
     "output_padding[0] = -1 must be in [0, 2147483647]"),
    ("quantized_transpose_conv2d", dict(output_padding=[0, 1]),
     "output_padding[1] = 1 must be in [0, stride)"),
    ("quantized_transpose_conv2d", dict(input_offset=129), "input_offset = 129 must be in"),
    ("quantized_linear", dict(requantize_shifts=[40]),
     "requantize_shifts[0] = 40 must be in [-31, 30]"),
    ("quantized_linear", dict(filter_offset=300), "filter_offset = 300 must be in [-127, 128]"),
    ("quantized_linear_s16", dict(requantize_shifts=[8]),
     "requantize_shifts[0] = 8 must be in [-31, 7]"),
    ("quantized_linear_s16", dict(activation_min=-40000),
     "activation_min = -40000 must be in [-32768, 32767]"),
    ("quantized_avg_pool2d", dict(kernel_size=[-2, 2]), "kernel_size[0] = -2 must be >= 1"),
    ("quantized_avg_pool2d", dict(stride=0), "stride[0] = 0 must be >= 1"),
    ("quantized_avg_pool2d", dict(padding=-1), "padding[0] = -1 must be >= 0"),
    ("quantized_max_pool2d", dict(kernel_size=2**40),
     "kernel_size[0] = 1099511627776 does not fit in int32"),
    ("quantized_max_pool2d", dict(stride=[1, -(2**31) - 1]),
     "stride[1] = -2147483649 does not fit in int32"),
    ("quantize_per_tensor", dict(zero_point=1000), "zero_point = 1000 must be in [-128, 127]"),
    ("dequantize_per_tensor", dict(quant_min=-1000), "quant_min = -1000 must be in [-128, 127]"),
]


def test_out_of_range_cases_cover_every_op_with_int_arguments():
    assert {op for op, _, _ in OUT_OF_RANGE} == set(VALID)


@pytest.mark.parametrize("op, overrides, message", OUT_OF_RANGE,
                         ids=[f"{op}-{'-'.join(o)}" for op, o, _ in OUT_OF_RANGE])
def test_out_of_range_int_raises_value_error_naming_the_argument(op, overrides, message):
    with pytest.raises(ValueError, match=rf"^{op}: {re.escape(message)}"):
        getattr(cortexm.ops, op)(**dict(VALID[op], **overrides))
