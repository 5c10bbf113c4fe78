"""The op descriptors' properties (src/ops) agree with the Python lists that act on them, so the
C++ registry and the quantizer / summaries cannot drift apart."""
import pytest

from cortexm import _core
from cortexm.aot import DATA_MOVEMENT
from cortexm.quantizer.patterns import PASSTHROUGH_OPS

VIEWS = {"aten.view_copy.default", "aten.squeeze_copy.dims", "aten.unsqueeze_copy.default"}
# The float unary functions a program runs as FloatUnary (fb::UnaryFn).
FLOAT_UNARY = {"aten.relu.default", "aten.hardswish.default", "aten.silu.default", "aten.sigmoid.default",
               "aten.tanh.default", "aten.sqrt.default", "aten.hardsigmoid.default", "aten.abs.default",
               "aten.gelu.default"}


def test_data_movement_is_aot_data_movement():
    assert set(_core.ops_with("is_data_movement")) == DATA_MOVEMENT


def test_views_are_the_reshapes():
    assert set(_core.ops_with("is_view")) == VIEWS
    assert VIEWS <= DATA_MOVEMENT


def test_keeps_qparams_is_the_quantizer_passthrough_list():
    assert set(_core.ops_with("keeps_qparams")) == set(PASSTHROUGH_OPS)


def test_programs_hold_every_aten_data_movement_and_float_unary_op():
    runnable = set(_core.ops_with("encode"))
    assert DATA_MOVEMENT | FLOAT_UNARY <= runnable
    # Float unary ops with constants have no UnaryFn: a program cannot hold them.
    assert not {"aten.hardtanh.default", "aten.clamp.default", "aten.mul.Scalar"} & runnable


def test_activation_range_ops_are_cortex_m_ops():
    ops = set(_core.ops_with("has_activation_range"))
    assert "cortex_m.quantized_conv2d.default" in ops
    assert all(op.startswith("cortex_m.") for op in ops)


def test_unknown_property_is_refused():
    with pytest.raises(ValueError, match="property 'is_fast'"):
        _core.ops_with("is_fast")
