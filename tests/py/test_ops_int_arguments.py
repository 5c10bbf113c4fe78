"""cortexm.ops.*: an int scalar argument given as anything but an int (float, str, bool, None) or
beyond int64 raises ValueError naming the op, the argument and the value, not pybind's TypeError;
Python ints and numpy integers are accepted."""

import re

import numpy as np
import pytest

import cortexm

X4 = np.zeros((1, 3, 3, 2), np.int8)
M = 1 << 30

# One valid call per op, by keyword.
VALID = {
    "quantized_add": dict(self=X4, self_zero_point=0, self_multiplier=M, self_shift=0, other=X4,
                          other_zero_point=0, other_multiplier=M, other_shift=0,
                          output_zero_point=0, output_multiplier=M, output_shift=0,
                          activation_min=-128, activation_max=127),
    "quantized_mul": dict(self=X4, self_zero_point=0, other=X4, other_zero_point=0,
                          output_zero_point=0, output_multiplier=M, output_shift=0,
                          activation_min=-128, activation_max=127),
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
    "quantized_avg_pool2d": dict(input=X4, kernel_size=[2, 2], stride=[1, 1], padding=0,
                                 activation_min=-128, activation_max=127),
    "quantized_max_pool2d": dict(input=X4, kernel_size=[2, 2], stride=[1, 1], padding=0,
                                 activation_min=-128, activation_max=127),
    "quantize_per_tensor": dict(input=np.zeros(4, np.float32), scale=0.1, zero_point=0,
                                quant_min=-128, quant_max=127, dtype="int8"),
    "dequantize_per_tensor": dict(input=np.zeros(4, np.int8), scale=0.1, zero_point=0,
                                  quant_min=-128, quant_max=127, dtype="int8"),
}


def int_arguments(op):
    """The arguments the binding's signature declares as int."""
    signature = getattr(cortexm.ops, op).__doc__.splitlines()[0]
    return re.findall(r"(\w+): int\b", signature)


CASES = [(op, name) for op in VALID for name in int_arguments(op)]


def test_every_op_has_int_arguments_and_valid_calls_run():
    for op, kwargs in VALID.items():
        assert int_arguments(op), op
        getattr(cortexm.ops, op)(**kwargs)


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
