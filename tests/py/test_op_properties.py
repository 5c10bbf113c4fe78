"""The op descriptors' properties (src/ops): the Python side derives its op sets from them
(cortexm.aot.DATA_MOVEMENT, the quantizer's PASSTHROUGH_OPS), so they are pinned here."""
import pytest

from cortexm import _core
from cortexm.aot import DATA_MOVEMENT
from cortexm.quantizer.patterns import PASSTHROUGH_OPS

MOVES = {"aten.view_copy.default", "aten.permute_copy.default", "aten.squeeze_copy.dims",
         "aten.unsqueeze_copy.default", "aten.cat.default", "aten.slice_copy.Tensor", "aten.select_copy.int",
         "aten.split_with_sizes_copy.default", "aten.constant_pad_nd.default", "aten.reflection_pad1d.default",
         "aten.upsample_nearest2d.default", "dim_order_ops._clone_dim_order.default"}
# Data movement but cat and constant_pad_nd (their own quantizer patterns), plus the int8 ops whose
# output keeps the input's qparams.
KEEPS_QPARAMS = (MOVES - {"aten.cat.default", "aten.constant_pad_nd.default"}) | {
    "aten.max_pool2d.default", "aten.relu.default", "aten.hardtanh.default", "aten.clamp.default",
    "aten.amax.default", "aten.amin.default", "aten.upsample_bilinear2d.default"}
VIEWS = {"aten.view_copy.default", "aten.squeeze_copy.dims", "aten.unsqueeze_copy.default"}
# The float unary functions a program runs as FloatUnary (fb::UnaryFn).
FLOAT_UNARY = {"aten.relu.default", "aten.hardswish.default", "aten.silu.default", "aten.sigmoid.default",
               "aten.tanh.default", "aten.sqrt.default", "aten.hardsigmoid.default", "aten.abs.default",
               "aten.gelu.default"}


def test_data_movement():
    assert set(_core.ops_with("is_data_movement")) == MOVES == DATA_MOVEMENT


def test_views_are_the_reshapes():
    assert set(_core.ops_with("is_view")) == VIEWS
    assert VIEWS <= DATA_MOVEMENT


def test_keeps_qparams():
    assert set(_core.ops_with("keeps_qparams")) == KEEPS_QPARAMS == set(PASSTHROUGH_OPS)
    assert all(_core.op_info(op).keeps_qparams for op in KEEPS_QPARAMS)


def test_programs_hold_every_op_but_pt2e_quantize_dequantize():
    """Every aten op runs in a program (float fallback through the portable kernels); PT2E's
    quantize / dequantize are lowered to cortex_m ones first."""
    runnable = set(_core.ops_with("encode"))
    assert DATA_MOVEMENT | FLOAT_UNARY <= runnable
    assert set(_core.registered_ops()) - runnable == {
        f"quantized_decomposed.{op}.default" for op in ("quantize_per_tensor", "dequantize_per_tensor",
                                                         "quantize_per_channel", "dequantize_per_channel")}


def test_activation_range_ops_are_cortex_m_ops():
    ops = set(_core.ops_with("has_activation_range"))
    assert "cortex_m.quantized_conv2d.default" in ops
    assert all(op.startswith("cortex_m.") for op in ops)


def test_unknown_property_is_refused():
    with pytest.raises(ValueError, match="property 'is_fast'"):
        _core.ops_with("is_fast")
