"""cortexm.quantize on small hand-built graphs: each annotation pattern, each observer (against
torch.ao's), weights and biases, the report, bad input, and graphs quantized by PyTorch's PT2E."""

import io
import sys
import warnings

import numpy as np
import pytest
import torch

import cortexm
from cortexm.ops import activation, binary, data_movement, linear, pool, softmax
from cortexm.ops import conv as conv_ops
from cortexm.quantizer import annotator, is_quantized, observers, patterns

Q = "quantized_decomposed.quantize_per_tensor.default"
DQ = "quantized_decomposed.dequantize_per_tensor.default"
DQC = "quantized_decomposed.dequantize_per_channel.default"
CONV2D = {"stride": [1, 1], "padding": [1, 1], "dilation": [1, 1]}
CONV1D = {"stride": [1], "padding": [1], "dilation": [1]}


def rand(*shape, seed=0, scale=1.0, offset=0.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale + offset).astype(np.float32)


def samples(graph, n=8, seed=0, scale=1.0):
    return [tuple(rand(*v.shape, seed=seed * 1000 + i * 10 + k, scale=scale) for k, v in enumerate(graph.inputs))
            for i in range(n)]


def quantize(graph, n=8, **config):
    quantizer = cortexm.CortexMQuantizer(**config) if config else None
    return cortexm.quantize(graph, samples(graph, n), quantizer, progress=False)


def node(g, name):
    return next(n for n in g.nodes if n.name == name)


def src(value):
    """The op that produced value ('input' / 'constant' for those)."""
    return value.producer.op if value.producer is not None else value.kind


def quantize_of(value):
    """The quantize node reading value (there must be exactly one)."""
    (q,) = [u for u in value.users if u.op == Q]
    return q


def view_of(g):
    return annotator.GraphView(g, cortexm.CortexMQuantizer())


def conv2d_graph(tail=None, tail_attrs=None, groups=1, c_in=3, c_out=4, extra_user=False):
    g = cortexm.Graph()
    x = g.add_input("x", [1, c_in, 6, 6])
    w = g.add_constant("w", rand(c_out, c_in // groups, 3, 3, seed=1))
    b = g.add_constant("b", rand(c_out, seed=2))
    y = g.call("aten.convolution.default", [x, w, b], {**CONV2D, "groups": groups}, name="conv")
    outs = [y] if extra_user else []
    if tail:
        y = g.call(tail, [y], tail_attrs or {}, name="tail")
    g.outputs = [y] + outs
    return g


def binary_graph(op, tail=None, const_other=False):
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3, 4])
    y = g.add_constant("c", rand(2, 3, 4, seed=3)) if const_other else g.add_input("y", [2, 3, 4])
    out = g.call(op, [x, y], name="bin")
    if tail:
        out = g.call(tail, [out], name="tail")
    g.outputs = [out]
    return g


def unary_graph(op, attrs=None, shape=(1, 4, 6, 6)):
    g = cortexm.Graph()
    x = g.add_input("x", list(shape))
    out = g.call(op, [x], attrs or {}, name="op")
    g.outputs = list(out) if isinstance(out, tuple) else [out]
    return g


# --- the pattern registry -----------------------------------------------------------------------


def position(name: str) -> tuple:
    """(pass, place within the pass) of the first pattern called name in PASSES."""
    return next((i, j) for i, group in enumerate(patterns.PASSES) for j, p in enumerate(group) if p.name == name)


def test_patterns_are_offered_in_the_recorded_order():
    """The family modules' @pattern(stage=..., rank=...) give the order the central PASSES tuple had."""
    assert [len(group) for group in patterns.PASSES] == [7, 5, 10, 2]
    # the convolutions share aten.convolution: each refuses the others' cases, in this order
    conv = [position(n) for n in ("conv1d", "conv2d", "depthwise", "linear", "addmm", "transpose_conv", "magnitude")]
    assert conv == [(0, j) for j in range(7)]
    # the mask's add is offered the add first; then add, mul and the two-activation ops
    assert [position(n) for n in ("attention_mask", "add", "mul", "matmul", "minmax")] == [(1, j) for j in range(5)]
    # a magnitude's sqrt is taken before the table's (elementwise) is offered it
    assert position("magnitude") < position("elementwise")
    assert [position(n) for n in ("cat", "softmax", "log_softmax", "layer_norm", "group_norm", "activation",
                                  "elementwise", "avg_pool", "sum", "index")] == [(2, j) for j in range(10)]
    assert [p.check for p in patterns.PASSES[3]] == [data_movement.check_passthrough, data_movement.check_pad]
    assert patterns.int16_weight_patterns() == ("conv1d", "conv2d", "depthwise", "linear", "addmm")
    assert patterns.int16_only_patterns() == ("magnitude",)


def test_two_patterns_cannot_share_a_place():
    def check_again(ctx, node):
        return binary.check_add(ctx, node)

    with pytest.raises(ValueError, match="patterns check_add and check_again both have stage BINARY, rank 20"):
        patterns.pattern("again", ("aten.add.Tensor",), stage=patterns.Stage.BINARY, rank=20)(check_again)
    assert "again" not in {p.name for group in patterns.PASSES for p in group}


# --- weighted patterns --------------------------------------------------------------------------


def test_conv2d_pattern_and_convert_form():
    g = conv2d_graph()
    m = conv_ops.check_conv2d(view_of(g), node(g, "conv"))
    assert m.pattern == "conv2d" and m.weights[0].axis == 0 and len(m.biases) == 1
    qg = quantize(g)
    conv = node(qg, "conv")
    assert conv.meta["quantization"] == "quantized" and conv.meta["pattern"] == "conv2d"
    x, w, b = conv.inputs
    assert src(x) == DQ and src(x.producer.inputs[0]) == Q and src(x.producer.inputs[0].producer.inputs[0]) == "input"
    assert src(w) == DQC and w.producer.inputs[0].dtype == "int8" and w.producer.attrs["quant_min"] == -127
    assert src(b) == DQC and b.producer.inputs[0].dtype == "int32"
    assert [u.op for u in conv.outputs[0].users] == [Q]
    assert qg.outputs[0].producer.op == DQ
    qg.verify()


@pytest.mark.parametrize("tail,attrs,name", [
    ("aten.relu.default", {}, "relu"),
    ("aten.hardtanh.default", {"min_val": 0.0, "max_val": 6.0}, "relu6"),
    ("aten.hardtanh.default", {"min_val": -1.0, "max_val": 1.0}, "hardtanh"),
    ("aten.hardsigmoid.default", {}, "hardsigmoid"),
    ("aten.clamp.default", {"min": -0.5, "max": 2.0}, "clamp"),
])
def test_activation_tail_shares_the_producer_quantization(tail, attrs, name):
    g = conv2d_graph(tail, attrs)
    m = conv_ops.check_conv2d(view_of(g), node(g, "conv"))
    assert m.pattern == f"conv2d+{name}" and [n.name for n in m.nodes] == ["conv", "tail"]
    qg = quantize(g)
    conv, t = node(qg, "conv"), node(qg, "tail")
    assert t.inputs[0] == conv.outputs[0]  # no quantize / dequantize between them
    assert t.meta["pattern"] == conv.meta["pattern"] == f"conv2d+{name}"
    assert [u.op for u in t.outputs[0].users] == [Q]


def test_tail_not_fused_when_the_producer_has_another_user():
    g = conv2d_graph("aten.relu.default", extra_user=True)
    assert conv_ops.check_conv2d(view_of(g), node(g, "conv")).pattern == "conv2d"
    qg = quantize(g)
    assert node(qg, "conv").meta["pattern"] == "conv2d" and node(qg, "tail").meta["pattern"] == "passthrough"
    relu = node(qg, "tail")
    assert src(relu.inputs[0]) == DQ
    assert quantize_of(relu.outputs[0]).attrs == quantize_of(node(qg, "conv").outputs[0]).attrs


def test_depthwise_pattern():
    g = conv2d_graph("aten.relu.default", groups=4, c_in=4, c_out=8)
    v = view_of(g)
    assert conv_ops.check_depthwise(v, node(g, "conv")).pattern == "depthwise+relu"
    with pytest.raises(patterns.NotApplicable):
        conv_ops.check_conv2d(v, node(g, "conv"))
    assert node(quantize(g), "conv").meta["pattern"] == "depthwise+relu"


def test_grouped_conv_is_a_conv2d_with_per_channel_weights():
    g = conv2d_graph("aten.relu.default", groups=2, c_in=4, c_out=6)
    v = view_of(g)
    with pytest.raises(patterns.NotApplicable, match="groups=2 with 4 input channels is grouped"):
        conv_ops.check_depthwise(v, node(g, "conv"))
    assert conv_ops.check_conv2d(v, node(g, "conv")).pattern == "conv2d+relu"
    conv = node(quantize(g), "conv")
    assert conv.meta["pattern"] == "conv2d+relu"
    weight = conv.inputs[1].producer
    assert weight.op == DQC
    assert weight.attrs["axis"] == 0 and len(weight.attrs["scales"]) == 6


def test_conv_with_a_computed_weight_stays_float_with_one_reason():
    g = cortexm.Graph()
    x, w = g.add_input("x", [1, 3, 6, 6]), g.add_input("w", [4, 3, 3, 3])
    g.outputs = [g.call("aten.convolution.default", [x, w, None], CONV2D, name="conv")]
    conv = node(quantize(g), "conv")
    assert conv.meta["float_reason"] == "conv2d: weight ('w') is not a constant but input"


def test_conv1d_pattern():
    g = cortexm.Graph()
    x = g.add_input("x", [1, 3, 16])
    w = g.add_constant("w", rand(5, 3, 3, seed=1))
    y = g.call("aten.convolution.default", [x, w, None], CONV1D, name="conv")
    g.outputs = [g.call("aten.relu.default", [y])]
    assert conv_ops.check_conv1d(view_of(g), node(g, "conv")).pattern == "conv1d+relu"
    with pytest.raises(patterns.NotApplicable):
        conv_ops.check_conv2d(view_of(g), node(g, "conv"))
    conv = node(quantize(g), "conv")
    assert conv.meta["pattern"] == "conv1d+relu" and src(conv.inputs[1]) == DQC and conv.inputs[2] is None


def linear_graph(tail=None):
    g = cortexm.Graph()
    x = g.add_input("x", [4, 6])
    w = g.add_constant("w", rand(5, 6, seed=1))
    b = g.add_constant("b", rand(5, seed=2))
    y = g.call("aten.linear.default", [x, w, b], name="fc")
    g.outputs = [g.call(tail, [y], name="tail") if tail else y]
    return g


def test_linear_pattern():
    g = linear_graph("aten.relu.default")
    assert linear.check_linear(view_of(g), node(g, "fc")).pattern == "linear+relu"
    fc = node(quantize(g), "fc")
    assert fc.meta["pattern"] == "linear+relu" and src(fc.inputs[1]) == DQC and src(fc.inputs[2]) == DQC


def test_addmm_with_permuted_weight():
    g = cortexm.Graph()
    x = g.add_input("x", [4, 6])
    w = g.add_constant("w", rand(5, 6, seed=1))
    b = g.add_constant("b", rand(5, seed=2))
    wt = g.call("aten.permute_copy.default", [w], {"dims": [1, 0]}, name="t")
    g.outputs = [g.call("aten.addmm.default", [b, x, wt], name="mm")]
    m = linear.check_addmm(view_of(g), node(g, "mm"))
    assert m.pattern == "addmm" and [n.name for n in m.nodes] == ["mm", "t"]
    assert (m.weights[0].node.name, m.weights[0].axis) == ("t", 0)
    qg = quantize(g)
    t, mm = node(qg, "t"), node(qg, "mm")
    assert t.meta["pattern"] == "addmm" and src(t.inputs[0]) == DQC
    assert t.inputs[0].producer.attrs["axis"] == 0 and len(t.inputs[0].producer.attrs["scales"]) == 5
    assert mm.inputs[2] == t.outputs[0] and src(mm.inputs[0]) == DQC and src(mm.inputs[1]) == DQ
    x0 = samples(g, 1, seed=9)[0]
    np.testing.assert_allclose(qg.run(*x0), g.run(*x0), atol=0.1)


def test_addmm_with_constant_mat2_is_per_channel_on_axis_1():
    g = cortexm.Graph()
    x = g.add_input("x", [4, 6])
    g.outputs = [g.call("aten.addmm.default", [g.add_constant("b", rand(5, seed=2)), x,
                                               g.add_constant("wt", rand(6, 5, seed=1))], name="mm")]
    mm = node(quantize(g), "mm")
    assert mm.inputs[2].producer.attrs["axis"] == 1 and mm.inputs[0].producer.attrs["axis"] == 0


def test_addmm_with_alpha_stays_float():
    g = cortexm.Graph()
    x = g.add_input("x", [4, 6])
    g.outputs = [g.call("aten.addmm.default", [g.add_constant("b", rand(5)), x, g.add_constant("wt", rand(6, 5))],
                        {"alpha": 2.0}, name="mm")]
    with pytest.raises(patterns.NoMatch, match="alpha=2"):
        linear.check_addmm(view_of(g), node(g, "mm"))
    assert node(quantize(g), "mm").meta["float_reason"].startswith("addmm: alpha=2")


# --- binary patterns ------------------------------------------------------------------------------


@pytest.mark.parametrize("op,check,name", [("aten.add.Tensor", binary.check_add, "add"),
                                           ("aten.mul.Tensor", binary.check_mul, "mul")])
def test_add_and_mul_patterns(op, check, name):
    assert check(view_of(binary_graph(op)), node(binary_graph(op), "bin")).pattern == name
    g = binary_graph(op, "aten.relu.default")
    assert check(view_of(g), node(g, "bin")).pattern == f"{name}+relu"
    qg = quantize(g)
    b = node(qg, "bin")
    assert b.meta["pattern"] == f"{name}+relu" and [src(v) for v in b.inputs] == [DQ, DQ]
    assert node(qg, "tail").inputs[0] == b.outputs[0]


@pytest.mark.parametrize("op", ["aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor"])
def test_binary_with_a_constant_quantizes_the_constant_per_tensor_over_its_own_range(op):
    """TFLite's ADD / SUB / MUL with a constant input: the constant an int8 tensor with qparams of
    its own (min / max with 0, asymmetric), never observed."""
    g = binary_graph(op, const_other=True)
    m = binary._binary(view_of(g), node(g, "bin"), "x")
    assert [i for _, i in m.activations] == [0] and [i for _, i in m.constants] == [1]
    qg = quantize(g)
    b = node(qg, "bin")
    assert b.meta["quantization"] == "quantized"
    assert src(b.inputs[0]) == DQ and src(b.inputs[1]) == DQ
    dq = b.inputs[1].producer
    const = dq.inputs[0]
    assert const.kind == "constant" and const.dtype == "int8"
    c = rand(2, 3, 4, seed=3)
    scale = (max(c.max(), 0) - min(c.min(), 0)) / 255
    assert dq.attrs["scale"] == pytest.approx(scale, rel=1e-6)
    dequantized = (np.asarray(const.data, np.float64) - dq.attrs["zero_point"]) * dq.attrs["scale"]
    assert np.max(np.abs(dequantized - c)) <= scale / 2 * 1.0001
    assert not any(n.op == Q and n.inputs[0].name == "c" for n in qg.nodes)  # never observed


def test_binary_of_two_constants_is_not_quantized():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3, 4])
    c = g.call("aten.add.Tensor", [g.add_constant("a", rand(2, 3, 4, seed=1)), g.add_constant("b", rand(4, seed=2))],
               name="bin")
    g.outputs = [g.call("aten.mul.Tensor", [x, c], name="mul")]
    with pytest.raises(patterns.NoMatch, match="both inputs are constants"):
        binary._binary(view_of(g), node(g, "bin"), "x")


# --- single-op patterns ---------------------------------------------------------------------------

PASSTHROUGH = [
    ("aten.view_copy.default", {"size": [4, -1]}),
    ("aten.permute_copy.default", {"dims": [0, 2, 3, 1]}),
    ("aten.squeeze_copy.dims", {"dim": [0]}),
    ("aten.unsqueeze_copy.default", {"dim": 1}),
    ("aten.slice_copy.Tensor", {"dim": 2, "start": 1, "end": 5}),
    ("aten.select_copy.int", {"dim": 1, "index": 2}),
    ("aten.split_with_sizes_copy.default", {"split_sizes": [1, 3], "dim": 1}),
    ("aten.max_pool2d.default", {"kernel_size": [2, 2]}),
    ("aten.relu.default", {}),
    ("aten.hardtanh.default", {"min_val": 0.0, "max_val": 6.0}),
    ("aten.clamp.default", {"min": -0.5}),
    ("aten.constant_pad_nd.default", {"pad": [1, 2, 0, 1]}),
    ("aten.upsample_nearest2d.default", {"output_size": [12, 12]}),
    ("aten.reflection_pad1d.default", {"padding": [2, 1]}),
]


@pytest.mark.parametrize("op,attrs", PASSTHROUGH, ids=[p[0].split(".")[1] for p in PASSTHROUGH])
def test_passthrough_shares_the_input_qparams(op, attrs):
    g = unary_graph(op, attrs, shape=(1, 4, 6) if "1d" in op else (1, 4, 6, 6))
    check = data_movement.check_pad if "pad_nd" in op else data_movement.check_passthrough
    m = check(view_of(g), node(g, "op"))
    assert m.pattern == "passthrough" and set(m.outputs.values()) == {patterns.SharedWith("x")}
    qg = quantize(g)
    x_q = quantize_of(qg.value("x"))
    op_node = node(qg, "op")
    assert op_node.meta["pattern"] == "passthrough" and src(op_node.inputs[0]) == DQ
    for out in op_node.outputs:
        assert quantize_of(out).attrs == x_q.attrs


@pytest.mark.parametrize("value", [1.5, -40.0])
def test_padding_with_a_nonzero_value_widens_the_shared_range_to_hold_it(value):
    g = unary_graph("aten.constant_pad_nd.default", {"pad": [1, 1], "value": value})
    m = data_movement.check_pad(view_of(g), node(g, "op"))
    assert m.outputs == {"op": patterns.SharedWith("x")} and m.range_includes == [value]
    data = samples(g, 4)
    qg = cortexm.quantize(g, data, cortexm.CortexMQuantizer("minmax"), progress=False)
    lo = min(float(np.min(d[0])) for d in data)
    hi = max(float(np.max(d[0])) for d in data)
    want = observers.qparams_from_min_max(min(lo, value), max(hi, value))
    a = quantize_of(node(qg, "op").outputs[0]).attrs
    assert (a["scale"], a["zero_point"]) == (want.scale, want.zero_point)
    assert quantize_of(qg.value("x")).attrs == a
    out = np.asarray(qg.run(data[0][0]))
    assert abs(out[..., 0].max() - value) <= want.scale / 2 and abs(out[..., -1].min() - value) <= want.scale / 2


def test_padding_with_an_infinite_value_stays_float():
    g = unary_graph("aten.constant_pad_nd.default", {"pad": [1, 1], "value": float("inf")})
    assert node(quantize(g), "op").meta["float_reason"] == "passthrough: pad value inf is not finite"


@pytest.mark.parametrize("op,attrs", [
    ("aten.avg_pool2d.default", {"kernel_size": [2, 2]}),
    ("aten.adaptive_avg_pool2d.default", {"output_size": [1, 1]}),
    ("aten.mean.dim", {"dim": [2, 3], "keepdim": True}),
])
def test_average_pools_and_mean_keep_the_input_qparams(op, attrs):
    g = unary_graph(op, attrs)
    assert pool.check_pool(view_of(g), node(g, "op")).outputs == {"op": patterns.SharedWith("x")}
    qg = quantize(g)
    assert quantize_of(node(qg, "op").outputs[0]).attrs == quantize_of(qg.value("x")).attrs


def test_softmax_has_fixed_qparams():
    g = unary_graph("aten._softmax.default", {"dim": 1}, shape=(2, 10))
    assert softmax.check_softmax(view_of(g), node(g, "op")).outputs == {"op": patterns.Fixed(1 / 256, -128)}
    a = quantize_of(node(quantize(g), "op").outputs[0]).attrs
    assert (a["scale"], a["zero_point"], a["dtype"]) == (1 / 256, -128, "int8")
    a16 = quantize_of(node(quantize(g, activation_dtype="int16"), "op").outputs[0]).attrs
    assert (a16["scale"], a16["zero_point"], a16["dtype"]) == (1 / 32768, 0, "int16")


def test_log_softmax_has_tflite_fixed_qparams():
    g = unary_graph("aten._log_softmax.default", {"dim": 1}, shape=(2, 10))
    m = softmax.check_log_softmax(view_of(g), node(g, "op"))
    assert m.outputs == {"op": patterns.Fixed(16 / 256, 127)}
    a = quantize_of(node(quantize(g), "op").outputs[0]).attrs
    assert (a["scale"], a["zero_point"], a["dtype"]) == (16 / 256, 127, "int8")
    a16 = quantize_of(node(quantize(g, activation_dtype="int16"), "op").outputs[0]).attrs
    assert a16["dtype"] == "int16" and a16["zero_point"] == 0  # observed: no int16 kernel to match


@pytest.mark.parametrize("op,attrs", [("aten.sqrt.default", {}), ("aten.abs.default", {}),
                                      ("aten.pow.Tensor_Scalar", {"exponent": 2.0})])
def test_elementwise_ops_get_observed_output_qparams(op, attrs):
    g = cortexm.Graph()
    x = g.add_input("x", [2, 50])
    a = g.call("aten.abs.default", [x], name="pos") if op == "aten.sqrt.default" else x
    g.outputs = [g.call(op, [a], attrs, name="op")]
    data = samples(g, 8)
    qg = cortexm.quantize(g, data, cortexm.CortexMQuantizer("minmax"), progress=False)
    outs = np.stack([g.run(*s) for s in data])
    want = observers.qparams_from_min_max(outs.min(), outs.max())
    a = quantize_of(node(qg, "op").outputs[0]).attrs
    assert (a["scale"], a["zero_point"]) == (want.scale, want.zero_point)
    assert node(qg, "op").meta["pattern"] == op.split(".")[1]


@pytest.mark.parametrize("op", [op for op in activation.ACTIVATION_OPS if op not in activation.BOUNDED_ACTIVATIONS])
def test_nonlinear_activations_get_observed_output_qparams(op):
    g = unary_graph(op, shape=(2, 50))
    assert activation.check_activation(view_of(g), node(g, "op")).outputs == {"op": patterns.Observed()}
    data = samples(g, 8)
    qg = cortexm.quantize(g, data, cortexm.CortexMQuantizer("minmax"), progress=False)
    outs = np.stack([g.run(*s) for s in data])
    want = observers.qparams_from_min_max(outs.min(), outs.max())
    a = quantize_of(node(qg, "op").outputs[0]).attrs
    assert (a["scale"], a["zero_point"]) == (want.scale, want.zero_point)
    assert node(qg, "op").meta["pattern"] == op.split(".")[1]


@pytest.mark.parametrize("op,int8,int16", [("aten.sigmoid.default", (1 / 256, -128), (1 / 32768, 0)),
                                           ("aten.tanh.default", (1 / 128, 0), (1 / 32768, 0))])
def test_sigmoid_and_tanh_have_tflite_fixed_qparams(op, int8, int16):
    g = unary_graph(op, shape=(2, 50))
    assert activation.check_activation(view_of(g), node(g, "op")).outputs == {"op": patterns.Fixed(*int8)}
    for quantizer, want in ((cortexm.CortexMQuantizer(), (*int8, "int8")),
                            (cortexm.CortexMQuantizer(activation_dtype="int16"), (*int16, "int16")),
                            (cortexm.CortexMQuantizer(int16_activations=["op"]), (*int16, "int16"))):
        a = quantize_of(node(cortexm.quantize(g, samples(g, 4), quantizer, progress=False), "op").outputs[0]).attrs
        assert (a["scale"], a["zero_point"], a["dtype"]) == want, quantizer


def test_cat_requantizes_its_inputs_to_the_output_qparams():
    g = cortexm.Graph()
    x, y = g.add_input("x", [1, 2, 4]), g.add_input("y", [1, 3, 4])
    g.outputs = [g.call("aten.cat.default", [x, y], {"dim": 1}, name="cat")]
    m = data_movement.check_cat(view_of(g), node(g, "cat"))
    assert m.requantized == m.activations and len(m.requantized) == 2
    data = [(rand(1, 2, 4, seed=i), rand(1, 3, 4, seed=50 + i, scale=10)) for i in range(8)]
    qg = cortexm.quantize(g, data, cortexm.CortexMQuantizer("minmax"), progress=False)
    cat = node(qg, "cat")
    out_q = quantize_of(cat.outputs[0]).attrs
    x_edge, y_edge = cat.inputs
    requant = x_edge.producer.inputs[0].producer  # the second quantize on x's edge
    assert src(x_edge) == DQ and requant.op == Q and requant.attrs == out_q and requant.name == "cat_in0_q"
    assert src(requant.inputs[0]) == DQ and quantize_of(qg.value("x")).attrs["scale"] < out_q["scale"]
    # y spans the union already: its own qparams are the output's, so its edge needs no requantize
    assert y_edge.producer.inputs[0].producer == quantize_of(qg.value("y"))
    assert quantize_of(qg.value("y")).attrs == out_q
    union = np.concatenate([np.concatenate([a.ravel(), b.ravel()]) for a, b in data])
    want = observers.qparams_from_min_max(union.min(), union.max())
    assert (out_q["scale"], out_q["zero_point"]) == (want.scale, want.zero_point)


def test_cat_of_copies_of_one_value_keeps_its_qparams():
    """A repeat / expand (a cat of one value's copies) is data movement: no requantize."""
    g = cortexm.Graph()
    x = g.add_input("x", [1, 2, 4])
    g.outputs = [g.call("aten.cat.default", [x, x, x], {"dim": 1}, name="cat")]
    m = data_movement.check_cat(view_of(g), node(g, "cat"))
    assert m.pattern == "passthrough" and not m.requantized
    qg = cortexm.quantize(g, [(rand(1, 2, 4, seed=i),) for i in range(4)], progress=False)
    cat = node(qg, "cat")
    assert quantize_of(cat.outputs[0]).attrs == quantize_of(qg.value("x")).attrs
    assert all(src(v) == DQ and v.producer.inputs[0].producer == quantize_of(qg.value("x")) for v in cat.inputs)


def test_unsupported_op_stays_float_between_dequantize_and_quantize():
    g = conv2d_graph()
    a = g.call("aten.div.Tensor", [g.outputs[0], g.add_constant("d", rand(4, 1, 1, seed=6))], name="abs")
    w2 = g.add_constant("w2", rand(2, 4, 3, 3, seed=5))
    g.outputs = [g.call("aten.convolution.default", [a, w2, None], CONV2D, name="conv2")]
    qg = quantize(g)
    abs_node = node(qg, "abs")
    assert abs_node.meta["quantization"] == "float"
    assert abs_node.meta["float_reason"] == "no quantization pattern for aten.div.Tensor"
    assert src(abs_node.inputs[0]) == DQ
    assert src(node(qg, "conv2").inputs[0]) == DQ and quantize_of(abs_node.outputs[0]) is not None


def test_graph_inputs_are_quantized_first_and_nothing_reads_them_but_the_quantize():
    qg = quantize(conv2d_graph())
    assert qg.nodes[0].op == Q and qg.nodes[0].inputs[0].name == "x" and qg.nodes[1].op == DQ
    assert [u.op for u in qg.value("x").users] == [Q]


# --- observers ----------------------------------------------------------------------------------


def _data(kind, i):
    r = np.random.default_rng(100 + i)
    return {
        "normal": lambda: r.standard_normal((4, 64)) * (1 + i),
        "relu": lambda: np.maximum(r.standard_normal((8, 100)) * 3, 0),
        "heavy_tail": lambda: r.standard_t(2, 1000),
        "growing_range": lambda: r.random(500) * 5 + i,
        "positive": lambda: r.random(300) + 2,
        "constant": lambda: np.full(10, 2.5),
        "zero": lambda: np.zeros(10),
    }[kind]().astype(np.float32)


def _torch_observer(cls, dtype):
    if dtype == "int8":
        return cls(dtype=torch.qint8, qscheme=torch.per_tensor_affine, quant_min=-128, quant_max=127)
    return cls(dtype=torch.int16, qscheme=torch.per_tensor_symmetric, quant_min=-32768, quant_max=32767)


KINDS = ["normal", "relu", "heavy_tail", "growing_range", "positive", "constant", "zero"]


@pytest.mark.parametrize("dtype", ["int8", "int16"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name,torch_cls", [
    ("histogram", torch.ao.quantization.HistogramObserver),
    ("minmax", torch.ao.quantization.MinMaxObserver),
    ("moving_average_minmax", torch.ao.quantization.MovingAverageMinMaxObserver),
])
def test_observer_matches_torch(name, torch_cls, kind, dtype):
    ours, theirs = observers.OBSERVERS[name](dtype), _torch_observer(torch_cls, dtype)
    for i in range(6):
        x = _data(kind, i)
        ours.update(x)
        theirs(torch.from_numpy(x))
    q = ours.qparams()
    scale, zero_point = theirs.calculate_qparams()
    assert q.scale == pytest.approx(scale.item(), rel=1e-6) and q.zero_point == zero_point.item()
    assert q.scale > 0 and q.dtype == dtype
    if dtype == "int16":
        assert q.zero_point == 0 and (q.quant_min, q.quant_max) == (-32768, 32767)


def test_histogram_accumulates_like_torch():
    ours, theirs = observers.HistogramObserver(), _torch_observer(torch.ao.quantization.HistogramObserver, "int8")
    for i in range(5):
        x = _data("growing_range", i)
        ours.update(x)
        theirs(torch.from_numpy(x))
    assert (ours.min_val, ours.max_val) == (theirs.min_val.item(), theirs.max_val.item())
    np.testing.assert_allclose(ours.histogram, theirs.histogram.numpy(), atol=0.5)
    assert ours.histogram.sum() == pytest.approx(theirs.histogram.sum().item(), rel=1e-5)


def test_histogram_trims_a_long_tail_where_minmax_does_not():
    # L2-optimal: isolated outliers are kept, but a long thin tail over many samples is trimmed.
    x = np.random.default_rng(0).laplace(size=1_000_000).astype(np.float32)
    hist, mm = observers.HistogramObserver(), observers.MinMaxObserver()
    hist.update(x)
    mm.update(x)
    assert hist.qparams().scale < 0.8 * mm.qparams().scale
    theirs = _torch_observer(torch.ao.quantization.HistogramObserver, "int8")
    theirs(torch.from_numpy(x))
    assert hist.qparams().scale == pytest.approx(theirs.calculate_qparams()[0].item(), rel=1e-6)


def test_int8_range_always_includes_zero_and_constant_zero_gets_eps():
    q = observers.qparams_from_min_max(2.0, 3.0)
    assert q.zero_point == -128 and q.scale == pytest.approx(3 / 255)
    q = observers.qparams_from_min_max(-3.0, -1.0)
    assert q.zero_point == 127
    q = observers.qparams_from_min_max(0.0, 0.0)
    assert q.scale == np.finfo(np.float32).eps and q.zero_point == -128


def test_constant_zero_activation_quantizes_with_a_positive_scale():
    g = unary_graph("aten.relu.default", shape=(1, 8))
    qg = cortexm.quantize(g, [(np.zeros((1, 8), np.float32),)] * 3, progress=False)
    a = quantize_of(qg.value("x")).attrs
    assert a["scale"] == np.finfo(np.float32).eps
    assert np.array_equal(qg.run(np.zeros((1, 8), np.float32)), np.zeros((1, 8), np.float32))


def test_moving_average_observer_through_quantize():
    g = unary_graph("aten.relu.default", shape=(1, 8))
    data = [(np.full((1, 8), v, np.float32),) for v in (1.0, 3.0, 5.0)]
    a = quantize_of(cortexm.quantize(g, data, cortexm.CortexMQuantizer("moving_average_minmax"),
                                     progress=False).value("x")).attrs
    want = observers.qparams_from_min_max(0.0, np.float32(np.float32(1 + 0.01 * 2) + np.float32(0.01) * np.float32(5 - 1.02)))
    assert a["scale"] == want.scale


# --- weights and biases -------------------------------------------------------------------------


def test_per_channel_weight_scales():
    g = conv2d_graph()
    w = g.value("w").data
    qg = quantize(g)
    dq = node(qg, "conv").inputs[1].producer
    const = dq.inputs[0]
    scales = np.abs(w).reshape(4, -1).max(axis=1) / np.float32(127)
    np.testing.assert_allclose(dq.attrs["scales"], scales, rtol=1e-6)
    assert const.qparams["scales"] == dq.attrs["scales"] and const.qparams["axis"] == 0
    assert const.qparams["quant_min"] == -127 and const.qparams["zero_points"] == [0] * 4
    q = const.data
    assert q.dtype == np.int8 and np.abs(q).max() == 127 and q.min() >= -127
    np.testing.assert_array_equal(q, np.rint(w / np.float32(dq.attrs["scales"]).reshape(4, 1, 1, 1)))


def test_per_tensor_weights_by_configuration():
    g = conv2d_graph()
    conv = node(quantize(g, per_channel=False), "conv")
    w_dq, b_dq = conv.inputs[1].producer, conv.inputs[2].producer
    assert w_dq.op == DQ and w_dq.attrs["scale"] == pytest.approx(np.abs(g.value("w").data).max() / 127, rel=1e-6)
    assert b_dq.op == DQ and b_dq.attrs["dtype"] == "int32"


def test_bias_is_int32_with_input_times_weight_scale():
    g = conv2d_graph()
    qg = quantize(g)
    conv = node(qg, "conv")
    s_in = conv.inputs[0].producer.attrs["scale"]
    s_w = np.array(conv.inputs[1].producer.attrs["scales"], np.float32)
    b_dq = conv.inputs[2].producer
    a = b_dq.attrs
    assert a["dtype"] == "int32" and (a["quant_min"], a["quant_max"]) == (-2**31, 2**31 - 1)
    assert a["zero_points"] == [0] * 4 and a["axis"] == 0
    np.testing.assert_array_equal(np.array(a["scales"], np.float32), np.float32(s_in) * s_w)
    q = b_dq.inputs[0].data
    assert q.dtype == np.int32
    np.testing.assert_array_equal(q, np.rint(g.value("b").data / (np.float32(s_in) * s_w)))
    assert b_dq.inputs[0].qparams["scales"] == a["scales"]


def _fake_quant(x, scale, zero_point, qmin=-128, qmax=127):
    q = np.clip(np.rint(x * (np.float32(1) / np.float32(scale))) + zero_point, qmin, qmax)
    return ((q - zero_point) * np.float32(scale)).astype(np.float32)


def test_fake_quantized_linear_matches_a_numpy_reference():
    g = linear_graph("aten.relu.default")
    data = samples(g, 8)
    qg = cortexm.quantize(g, data, cortexm.CortexMQuantizer("minmax"), progress=False)
    xs = np.stack([s[0] for s in data])
    want_x = observers.qparams_from_min_max(xs.min(), xs.max())
    x_q = quantize_of(qg.value("x")).attrs
    assert (x_q["scale"], x_q["zero_point"]) == (want_x.scale, want_x.zero_point)
    fc = node(qg, "fc")
    w_dq, b_dq = fc.inputs[1].producer, fc.inputs[2].producer
    w = w_dq.inputs[0].data.astype(np.float32) * np.array(w_dq.attrs["scales"], np.float32)[:, None]
    b = b_dq.inputs[0].data.astype(np.float32) * np.array(b_dq.attrs["scales"], np.float32)
    out_q = quantize_of(node(qg, "tail").outputs[0]).attrs
    x = rand(4, 6, seed=77)
    y = np.maximum(_fake_quant(x, x_q["scale"], x_q["zero_point"]) @ w.T + b, 0)
    want = _fake_quant(y, out_q["scale"], out_q["zero_point"])
    got = qg.run(x)
    assert np.abs(got - want).max() <= out_q["scale"] * 1.001  # at most one step on rounding ties
    assert (got == want).mean() > 0.9


def test_int16_activations():
    g = conv2d_graph("aten.relu.default")
    q16, q8 = quantize(g, activation_dtype="int16"), quantize(g)
    for n in q16.nodes:
        if n.op in (Q, DQ) and n.attrs["dtype"] != "int32":
            assert n.attrs["dtype"] == "int16" and n.attrs["zero_point"] == 0
            assert (n.attrs["quant_min"], n.attrs["quant_max"]) == (-32768, 32767)
    # Against float math on the same int8 weights and int32 bias, int16 activations are exact to ~1e-4.
    conv = node(q16, "conv")
    w_dq, b_dq = conv.inputs[1].producer, conv.inputs[2].producer
    w = w_dq.inputs[0].data * np.array(w_dq.attrs["scales"], np.float32).reshape(4, 1, 1, 1)
    b = b_dq.inputs[0].data * np.array(b_dq.attrs["scales"], np.float32)
    x = samples(g, 1, seed=5)[0][0]
    ref = torch.relu(torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w.astype(np.float32)),
                                                torch.from_numpy(b.astype(np.float32)), padding=1)).numpy()
    err16, err8 = np.abs(q16.run(x) - ref).max(), np.abs(q8.run(x) - g.run(x)).max()
    assert err16 < 1e-3 < err8


# --- the whole call -----------------------------------------------------------------------------


def test_input_graph_is_left_untouched():
    g = conv2d_graph("aten.relu.default")
    before, x = str(g), samples(g, 1, seed=3)[0]
    out = g.run(*x)
    quantize(g)
    assert str(g) == before and np.array_equal(g.run(*x), out)
    assert all("quantization" not in n.meta for n in g.nodes) and not is_quantized(g)


def test_calibration_accepts_torch_tensors_and_single_arrays():
    g = linear_graph()
    arrays = [s[0] for s in samples(g, 4)]
    a = cortexm.quantize(g, arrays, progress=False)
    b = cortexm.quantize(g, [(torch.from_numpy(x),) for x in arrays], progress=False)
    c = cortexm.quantize(g, iter([[torch.from_numpy(x)] for x in arrays]), progress=False)
    assert str(a) == str(b) == str(c)


def test_bad_input():
    g = linear_graph()
    good = rand(4, 6)
    with pytest.raises(ValueError, match="calibration is empty"):
        cortexm.quantize(g, [], progress=False)
    with pytest.raises(ValueError, match=r"sample 1, input 0 \('x'\) has 1 NaN and 0 inf"):
        cortexm.quantize(g, [good, np.where(np.arange(24).reshape(4, 6) == 3, np.nan, good)], progress=False)
    with pytest.raises(ValueError, match="0 NaN and 1 inf"):
        cortexm.quantize(g, [np.where(np.arange(24).reshape(4, 6) == 3, np.inf, good)], progress=False)
    with pytest.raises(ValueError, match=r"is float32\[4, 5\], the graph expects float32\[4, 6\]"):
        cortexm.quantize(g, [rand(4, 5)], progress=False)
    with pytest.raises(ValueError, match=r"is float64\[4, 6\], the graph expects float32\[4, 6\]"):
        cortexm.quantize(g, [good.astype(np.float64)], progress=False)
    with pytest.raises(ValueError, match="has 2 inputs, the graph takes 1"):
        cortexm.quantize(g, [(good, good)], progress=False)
    with pytest.raises(ValueError, match="is a str"):
        cortexm.quantize(g, ["hello"], progress=False)
    with pytest.raises(ValueError, match="already quantized"):
        cortexm.quantize(quantize(g), [good], progress=False)
    with pytest.raises(TypeError, match="CortexMQuantizer"):
        cortexm.quantize(g, [good], "int8", progress=False)
    with pytest.raises(ValueError, match="activation_observer"):
        cortexm.CortexMQuantizer("percentile")
    with pytest.raises(ValueError, match="activation_dtype"):
        cortexm.CortexMQuantizer(activation_dtype="uint8")


def test_nan_inside_the_graph_names_the_node():
    g = cortexm.Graph()
    x = g.add_input("x", [4, 6])
    s = g.call("aten.sqrt.default", [x], name="sqrt")
    g.outputs = [g.call("aten.linear.default", [s, g.add_constant("w", rand(5, 6))], name="fc")]
    with pytest.raises(ValueError, match=r"node 'sqrt' \(aten.sqrt.default\) output 0 has NaN"):
        cortexm.quantize(g, [rand(4, 6)], progress=False)


@pytest.mark.parametrize("observer", ["histogram", "minmax", "moving_average_minmax"])
def test_values_beyond_what_float32_quantization_holds_name_the_value(observer):
    """3e38 is finite, but the range [-3e38, 3e38] (or its histogram bins) overflows float32: an
    error naming the input or node, not numpy's 'list' argument must have no negative elements."""
    g = linear_graph()
    huge = np.where(np.arange(24).reshape(4, 6) % 2 == 0, 3e38, -3e38).astype(np.float32)
    quantizer = cortexm.CortexMQuantizer(activation_observer=observer)
    with pytest.raises(ValueError, match=r"calibration sample 1, input 0 \('x'\): values from -3e\+38 to 3e\+38 .*"
                                         r"scale the model's inputs"):
        cortexm.quantize(g, [rand(4, 6), huge], quantizer, progress=False)
    big = cortexm.Graph()
    x = big.add_input("x", [4, 6])
    scaled = big.call("aten.mul.Scalar", [x], {"other": 2e38}, name="scaled")
    big.outputs = [big.call("aten.linear.default", [scaled, big.add_constant("w", rand(5, 6))], name="fc")]
    plus_minus_one = np.where(np.arange(24).reshape(4, 6) % 2 == 0, 1, -1).astype(np.float32)
    with pytest.raises(ValueError, match=r"node 'scaled' \(aten.mul.Scalar\) output 0: values from -2e\+38 to 2e\+38"):
        cortexm.quantize(big, [plus_minus_one], quantizer, progress=False)


@pytest.mark.parametrize("option", ["int16_activations", "int16_weights"])
def test_names_given_as_a_generator_are_all_kept(option):
    quantizer = cortexm.CortexMQuantizer(**{option: (name for name in ("a", "b"))})
    assert getattr(quantizer, option) == {"a", "b"}
    with pytest.raises(TypeError, match=f"{option} must be a collection of .* names, got int"):
        cortexm.CortexMQuantizer(**{option: 7})


def test_progress_bar_only_on_a_terminal(monkeypatch):
    g = linear_graph()

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    for stream, shown in [(io.StringIO(), False), (Terminal(), True)]:
        monkeypatch.setattr(sys, "stderr", stream)
        cortexm.quantize(g, [rand(4, 6)] * 3)
        assert ("calibrating" in stream.getvalue()) == shown
    monkeypatch.setattr(sys, "stderr", Terminal())
    cortexm.quantize(g, [rand(4, 6)] * 3, progress=False)
    assert sys.stderr.getvalue() == ""


# --- report -------------------------------------------------------------------------------------


def test_report_lists_every_compute_node():
    g = conv2d_graph("aten.relu.default")
    g.outputs = [g.call("aten.div.Tensor", [g.outputs[0], g.add_constant("d", rand(4, 1, 1, seed=6))], name="abs")]
    qg = quantize(g)
    report = cortexm.quantization_report(qg)
    assert [r.node for r in report] == ["conv", "tail", "abs"] and len(report) == 3
    conv, relu, abs_row = report.rows
    assert (conv.quantization, conv.pattern, conv.reason) == ("quantized", "conv2d+relu", "")
    assert conv.inputs[0]["dtype"] == "int8" and "scale" in conv.inputs[0]
    assert len(conv.inputs[1]["scales"]) == 4 and conv.inputs[2]["dtype"] == "int32"
    assert conv.outputs == [None] and relu.outputs[0]["scale"] > 0
    assert abs_row.quantization == "float" and abs_row.reason == "no quantization pattern for aten.div.Tensor"
    assert abs_row.inputs[0] == relu.outputs[0]  # reads the relu output's dequantize
    assert report["abs"] is abs_row and [r.node for r in report.float] == ["abs"]
    text = str(report)
    lines = text.splitlines()
    # The summary by op kind first: conv2d and relu int8, div.Tensor float with its reason.
    assert lines[0] == "3 compute nodes: 2 int8, 0 16x8, 1 float (2 quantized, 1 float)"
    assert lines[1].split() == ["op", "int8", "16x8", "float"]
    assert lines[2].split()[:4] == ["convolution", "1", "0", "0"]
    assert lines[3].split()[:4] == ["div.Tensor", "0", "0", "1"]  # by count, then by name
    assert "float: no quantization pattern for aten.div.Tensor" in lines[3]
    assert lines[4].split() == ["relu", "1", "0", "0"]
    assert report.by_op()["aten.div.Tensor"] == {"float": 1}
    header = lines.index("") + 1
    assert lines[header].split(" | ")[0].strip() == "node" and "float reason" in lines[header]
    assert lines[header + 2].split(" | ")[2].strip() == "int8"
    assert any(line.startswith("abs ") and "no quantization pattern for aten.div.Tensor" in line for line in lines)
    assert "int8 per-channel[4]" in text and lines[-1] == "3 compute nodes: 2 quantized, 1 float"


def test_is_quantized():
    g = linear_graph()
    assert not is_quantized(g) and is_quantized(quantize(g))


# --- graphs quantized by PyTorch's PT2E ---------------------------------------------------------


def _pt2e():
    pytest.importorskip("torchao", reason="PT2E's prepare_pt2e / convert_pt2e come from torchao with torch 2.13")
    from torchao.quantization.pt2e import HistogramObserver, PerChannelMinMaxObserver
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.quantization.pt2e.quantizer import (DerivedQuantizationSpec, QuantizationAnnotation,
                                                     QuantizationSpec, Quantizer)

    aten = torch.ops.aten
    act = QuantizationSpec(dtype=torch.int8, quant_min=-128, quant_max=127, qscheme=torch.per_tensor_affine,
                           is_dynamic=False, observer_or_fake_quant_ctr=HistogramObserver)
    weight = QuantizationSpec(dtype=torch.int8, quant_min=-127, quant_max=127, qscheme=torch.per_channel_symmetric,
                              ch_axis=0, is_dynamic=False, observer_or_fake_quant_ctr=PerChannelMinMaxObserver)

    def bias(x, w, node):
        def derive(obs):
            s = (obs[0].calculate_qparams()[0] * obs[1].calculate_qparams()[0]).to(torch.float32)
            return s, torch.zeros_like(s, dtype=torch.int32)
        return DerivedQuantizationSpec(derived_from=[(x, node), (w, node)], derive_qparams_fn=derive,
                                       dtype=torch.int32, quant_min=-2**31, quant_max=2**31 - 1,
                                       qscheme=torch.per_channel_symmetric, ch_axis=0)

    class TinyQuantizer(Quantizer):
        """conv2d / linear (+ relu), like XNNPACKQuantizer's static config (not in torchao any more)."""

        def annotate(self, model):
            for n in model.graph.nodes:
                if n.op != "call_function" or n.target not in (aten.conv2d.default, aten.linear.default):
                    continue
                x, w = n.args[:2]
                inputs = {x: act, w: weight}
                if len(n.args) > 2 and n.args[2] is not None:
                    inputs[n.args[2]] = bias(x, w, n)
                users = list(n.users)
                if len(users) == 1 and users[0].target == aten.relu.default:
                    n.meta["quantization_annotation"] = QuantizationAnnotation(input_qspec_map=inputs, _annotated=True)
                    users[0].meta["quantization_annotation"] = QuantizationAnnotation(output_qspec=act, _annotated=True)
                else:
                    n.meta["quantization_annotation"] = QuantizationAnnotation(
                        input_qspec_map=inputs, output_qspec=act, _annotated=True)
            return model

        def validate(self, model):
            pass

    return prepare_pt2e, convert_pt2e, TinyQuantizer


def test_graph_quantized_by_pt2e_is_recognised_and_runs_like_torch():
    prepare_pt2e, convert_pt2e, TinyQuantizer = _pt2e()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(8 * 6 * 6, 10)).eval()
    example = (torch.randn(1, 3, 6, 6),)
    prepared = prepare_pt2e(torch.export.export(model, example).module(), TinyQuantizer())
    for i in range(8):
        prepared(torch.randn(1, 3, 6, 6, generator=torch.Generator().manual_seed(i)))
    converted = convert_pt2e(prepared)
    g = cortexm.export(converted, example)
    assert is_quantized(g)
    counts = g.op_counts()
    assert counts[Q] == 4 and counts[DQC] == 4  # flatten is not annotated: a dq -> view -> q round trip
    with pytest.raises(ValueError, match="already quantized"):
        cortexm.quantize(g, [example], progress=False)
    for seed in range(3):
        x = torch.randn(1, 3, 6, 6, generator=torch.Generator().manual_seed(100 + seed))
        with torch.no_grad():
            want = converted(x).numpy()
        np.testing.assert_allclose(g.run(x.numpy()), want, atol=1e-5)
    report = cortexm.quantization_report(g)
    assert [r.quantization for r in report if r.op != "aten.view_copy.default"] == ["quantized"] * 3
    # cortexm.lower takes a graph PyTorch quantized as it is.
    lowered = cortexm.lower(g)
    counts = lowered.op_counts()
    assert counts["cortex_m.quantized_conv2d.default"] == 1 and counts["cortex_m.quantized_linear.default"] == 1
    x = torch.randn(1, 3, 6, 6, generator=torch.Generator().manual_seed(7)).numpy()
    out_scale = max(abs(float(n.attrs["scale"])) for n in g.nodes if n.op == Q)
    assert np.max(np.abs(lowered.run(x) - g.run(x))) <= 3 * out_scale


class _ClassToken(torch.nn.Module):
    """A keyword transformer's front: a learned class token cat before the frames, a bias viewed
    to broadcast, and a hardsigmoid (no int8 pattern: float fallback)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.token = torch.nn.Parameter(torch.randn(1, 1, 8))
        self.proj = torch.nn.Linear(8, 8)
        self.bias = torch.nn.Parameter(torch.randn(8))

    def forward(self, x):
        x = torch.cat([self.token.expand(x.shape[0], -1, -1), self.proj(x)], dim=1)
        x = torch.relu(x + self.bias.view(1, 1, 8))
        return x, torch.nn.functional.hardsigmoid(x)


def test_report_float_rows_are_the_programs_float_ops():
    model = _ClassToken().eval()
    graph = cortexm.export(model, (torch.randn(1, 5, 8),))
    qgraph = cortexm.quantize(graph, [(torch.randn(1, 5, 8),) for _ in range(8)], progress=False)
    report = cortexm.quantization_report(qgraph)
    kinds = {r.op.split(".")[1]: r.kind for r in report}
    assert kinds["cat"] == "int8"  # the class token is quantized to the cat's qparams at lowering
    assert kinds["view_copy"] == "constant" and "folded at lowering" in report.summary()
    assert [r.op for r in report.float] == ["aten.hardsigmoid.default"]
    program = cortexm.to_program(cortexm.lower(qgraph, "cortex-m55+int8"))
    assert len(report.float) == program.float_ops == 1


def test_too_few_calibration_samples_warn_by_the_measured_rule():
    from cortexm.quantizer import CalibrationWarning
    from cortexm.quantizer.calibrate import MIN_CALIBRATION_SAMPLES

    assert MIN_CALIBRATION_SAMPLES == {"int8": 32, "16x8": 128, "auto": 128}  # docs/accuracy.md's table
    g = conv2d_graph("aten.relu.default")
    x = rand(*g.inputs[0].shape)
    with pytest.warns(CalibrationWarning, match=r"calibration has 31 samples: with fewer than 32, int8 .* give at "
                                                r"least 32 samples"):
        cortexm.quantize(g, [x] * 31, progress=False)
    with pytest.warns(CalibrationWarning, match=r"calibration has 32 samples: with fewer than 128, 16x8"):
        cortexm.quantize(g, [x] * 32, precision="16x8", progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CalibrationWarning)
        cortexm.quantize(g, [x] * 32, progress=False)  # enough for int8: no warning
