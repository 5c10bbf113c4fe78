"""cortexm.export: PyTorch modules -> cortexm graphs that compute what torch computes."""

import numpy as np
import pytest

import cortexm

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from cortexm._export.capture import capture  # noqa: E402
from cortexm._export.convert import convert  # noqa: E402
from cortexm._export.handlers import suggestion  # noqa: E402

# torch's own notice for padding='same' with an even kernel, raised while tracing the module.
SAME_PAD_NOTICE = "ignore:Using padding='same' with even kernel:UserWarning"


def flat(x):
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in flat(item)]
    return [x]


def compare(graph, module, inputs, rtol, atol):
    with torch.no_grad():
        ref = [r.numpy() for r in flat(module(*inputs))]
    out = graph.run(*[x.numpy() for x in inputs])
    out = list(out) if isinstance(out, tuple) else [out]
    assert len(out) == len(ref)
    for o, r in zip(out, ref):
        assert o.shape == r.shape and o.dtype == r.dtype
        np.testing.assert_allclose(o, r, rtol=rtol, atol=atol)


def check(module, *inputs, rtol=1e-5, atol=1e-5, raw=True):
    """Exports module (core ATen) and checks graph.run against torch; with raw, also converts the
    undecomposed program (aten.conv2d, aten.stack, ... as torch.export leaves them). Returns the
    exported graph."""
    module.eval()
    graph = cortexm.export(module, inputs)
    compare(graph, module, inputs, rtol, atol)
    if raw:
        compare(convert(capture(module, inputs, decompose=False)), module, inputs, rtol, atol)
    return graph


def raw_graph(module, *inputs):
    return convert(capture(module.eval(), inputs, decompose=False))


class Lambda(nn.Module):
    def __init__(self, fn, **children):
        super().__init__()
        self.fn = fn
        for name, child in children.items():
            setattr(self, name, child)

    def forward(self, *xs):
        return self.fn(self, *xs)


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# --- convolution ----------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [
    dict(in_channels=4, out_channels=6, kernel_size=3),
    dict(in_channels=4, out_channels=6, kernel_size=3, stride=2, padding=1, bias=False),
    dict(in_channels=4, out_channels=8, kernel_size=(3, 2), dilation=(2, 1), padding=(2, 1), groups=2),
    dict(in_channels=4, out_channels=4, kernel_size=3, groups=4, padding=1),  # depthwise
    dict(in_channels=4, out_channels=6, kernel_size=4, padding="same", dilation=1),  # odd total pad
    dict(in_channels=4, out_channels=6, kernel_size=(3, 4), padding="same", dilation=2, bias=False),
    dict(in_channels=4, out_channels=6, kernel_size=3, padding="valid"),
])
@pytest.mark.filterwarnings(SAME_PAD_NOTICE)
def test_conv2d(kwargs):
    graph = check(nn.Conv2d(**kwargs), rand(1, 4, 9, 8))
    assert graph.op_counts()["aten.convolution.default"] == 1


@pytest.mark.parametrize("kwargs", [
    dict(in_channels=3, out_channels=4, kernel_size=5, stride=2, padding=2),
    dict(in_channels=4, out_channels=4, kernel_size=3, dilation=3, groups=2, bias=False),
    dict(in_channels=3, out_channels=4, kernel_size=2, padding="same"),
])
@pytest.mark.filterwarnings(SAME_PAD_NOTICE)
def test_conv1d(kwargs):
    graph = check(nn.Conv1d(**kwargs), rand(2, kwargs["in_channels"], 17))
    conv = [n for n in graph.nodes if n.op == "aten.convolution.default"][0]
    assert conv.outputs[0].shape[1] == 4


# --- batch norm -----------------------------------------------------------------------------


def randomize_bn(module):
    g = torch.Generator().manual_seed(1)
    for m in module.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g))
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.2)
            if m.affine:
                m.weight.data.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.bias.data.copy_(torch.randn(m.num_features, generator=g))
    return module


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_folds_into_conv(bias, affine):
    module = randomize_bn(nn.Sequential(nn.Conv2d(3, 5, 3, bias=bias), nn.BatchNorm2d(5, affine=affine), nn.ReLU()))
    graph = check(module, rand(2, 3, 8, 8))
    assert graph.op_counts() == {"aten.convolution.default": 1, "aten.relu.default": 1}
    conv = graph.nodes[0]
    assert conv.inputs[2] is not None and conv.inputs[1].kind == "constant"


def test_batch_norm_folds_into_conv1d_and_linear():
    module = randomize_bn(Lambda(lambda s, x: s.bn2(s.lin(s.bn1(s.conv(x)).flatten(1))),
                                 conv=nn.Conv1d(2, 3, 3), bn1=nn.BatchNorm1d(3), lin=nn.Linear(18, 4),
                                 bn2=nn.BatchNorm1d(4)))
    graph = check(module, rand(2, 2, 8))
    assert graph.op_counts() == {"aten.convolution.default": 1, "aten.view_copy.default": 1,
                                 "aten.linear.default": 1}


def test_batch_norm_kept_as_mul_add_when_not_foldable():
    def fn(s, x):
        y = s.conv(x)
        return s.bn(y), y + 1, s.bn2(x)  # conv output read twice; bn2 on an input

    module = randomize_bn(Lambda(fn,
                                 conv=nn.Conv2d(3, 3, 1), bn=nn.BatchNorm2d(3), bn2=nn.BatchNorm2d(3)))
    graph = check(module, rand(1, 3, 4, 4))
    counts = graph.op_counts()
    assert counts["aten.mul.Tensor"] == 2 and counts["aten.add.Tensor"] == 2
    scale = [c for c in graph.constants if c.name.endswith("_scale")][0]
    assert scale.shape == (3, 1, 1)


def test_batch_norm_behind_a_vanishing_op_not_folded():
    def fn(s, x):
        y = s.conv(x)
        return s.bn(y.clone()), y * 2  # the conv output has another reader

    graph = check(randomize_bn(Lambda(fn, conv=nn.Conv2d(3, 3, 1), bn=nn.BatchNorm2d(3))), rand(1, 3, 4, 4))
    assert graph.op_counts()["aten.add.Tensor"] == 1


def test_batch_norm_on_linear_rank3_not_folded():
    module = randomize_bn(Lambda(lambda s, x: s.bn(s.lin(x)), lin=nn.Linear(4, 4), bn=nn.BatchNorm1d(3)))
    graph = check(module, rand(2, 3, 4))
    assert graph.op_counts()["aten.mul.Tensor"] == 1


# --- linear and matmul ----------------------------------------------------------------------


def test_linear():
    graph = check(nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3, bias=False)), rand(4, 6))
    assert graph.op_counts() == {"aten.linear.default": 2, "aten.relu.default": 1}
    check(nn.Linear(6, 5), rand(2, 3, 6))


@pytest.mark.filterwarnings("ignore:.*LeafSpec:FutureWarning")  # torch.export's own
def test_linear_decomposed_by_the_user_becomes_addmm():
    module = nn.Linear(6, 5).eval()
    x = rand(4, 6)
    ep = torch.export.export(module, (x,), strict=False).run_decompositions(torch.export.default_decompositions())
    graph = cortexm.export(ep)
    assert graph.op_counts() == {"aten.addmm.default": 1, "aten.permute_copy.default": 1}
    permute = [n for n in graph.nodes if n.op == "aten.permute_copy.default"][0]
    assert permute.inputs[0].kind == "constant" and permute.attrs["dims"] == [1, 0]
    compare(graph, module, (x,), 1e-5, 1e-5)


def test_mm_bmm():
    graph = check(Lambda(lambda s, a, b, c: (torch.mm(a, b), torch.bmm(c, c.transpose(1, 2)))),
                  rand(3, 4), rand(4, 5, seed=1), rand(2, 3, 4, seed=2))
    assert graph.op_counts() == {"aten.mm.default": 1, "aten.bmm.default": 1, "aten.permute_copy.default": 1}


# --- LSTMCell -------------------------------------------------------------------------------


def test_lstm_cell_becomes_its_gates():
    module = Lambda(lambda s, x, h, c: s.cell(x, (h, c)), cell=nn.LSTMCell(6, 4))
    inputs = (rand(2, 6), rand(2, 4, seed=1), rand(2, 4, seed=2))
    gates = {"aten.linear.default": 2, "aten.add.Tensor": 2, "aten.split_with_sizes_copy.default": 1,
             "aten.sigmoid.default": 3, "aten.tanh.default": 2, "aten.mul.Tensor": 3}
    graph = check(module, *inputs)
    assert graph.op_counts() == gates
    raw = raw_graph(module, *inputs)  # aten.lstm_cell, decomposed by cortexm
    assert raw.op_counts() == gates
    assert all(n.source == "cell" for n in raw.nodes)


@pytest.mark.parametrize("layers", [1, 2])
def test_lstm_unrolls_with_its_zero_state_a_constant(layers):
    """torch.export unrolls nn.LSTM into cells; its zero initial state (aten.full) is a constant."""
    module = Lambda(lambda s, x: s.lstm(x)[0], lstm=nn.LSTM(5, 4, num_layers=layers, batch_first=True))
    graph = check(module, rand(2, 3, 5), raw=False)  # undecomposed, it is one aten.lstm.input
    assert graph.op_counts()["aten.sigmoid.default"] == 3 * 3 * layers
    assert any(c.name.startswith("full") for c in graph.constants)


def test_bidirectional_lstm_is_refused_by_name():
    module = Lambda(lambda s, x: s.lstm(x)[0], lstm=nn.LSTM(5, 4, batch_first=True, bidirectional=True))
    with pytest.raises(cortexm.UnsupportedError, match="aten.flip.default in module 'lstm'"):
        cortexm.export(module.eval(), (rand(2, 3, 5),))


def test_full_zeros_ones_are_constants():
    module = Lambda(lambda s, x: x * torch.full((2, 3), 0.5) + torch.ones(3) - torch.zeros(2, 1))
    graph = check(module, rand(2, 3))
    assert len(graph.constants) == 3 and "aten.full.default" not in graph.op_counts()


# --- data movement --------------------------------------------------------------------------


def test_stack_cat_chunk_split_unbind_getitem():
    def fn(s, x):
        a, b, c = x.chunk(3, dim=1)  # 7 channels: 3, 3, 1
        p, q = torch.split(x, [2, 5], dim=1)
        u = x.unbind(2)
        return torch.stack([a, b], dim=-1), c, torch.cat([q, p], 1), u[0], u[-1], torch.stack([p])

    graph = check(Lambda(fn), rand(2, 7, 3))
    counts = graph.op_counts()  # core ATen: stack is cat + view, unbind is select
    assert counts["aten.split_with_sizes_copy.default"] == 2 and counts["aten.cat.default"] == 3
    raw = raw_graph(Lambda(fn), rand(2, 7, 3)).op_counts()  # aten.stack, aten.chunk, aten.unbind
    assert raw["aten.unsqueeze_copy.default"] == 3 and raw["aten.cat.default"] == 2
    assert raw["aten.split_with_sizes_copy.default"] == 2 and raw["aten.select_copy.int"] == 2  # the used ones


def test_views_permutes_squeeze_slice_select():
    def fn(s, x):
        return (x.view(2, -1), x.reshape(6, 20), x.flatten(1), x.transpose(1, 3), x.permute(0, 2, 3, 1),
                x[0, 0].t(), x[:1, 1:3, ::2, -2], x.unsqueeze(-1).squeeze(), x[:, :1].squeeze(1),
                x.squeeze(0), x[..., 2:], x.unflatten(1, (1, 3)))

    graph = check(Lambda(fn), rand(2, 3, 4, 5))
    counts = graph.op_counts()
    assert counts["aten.view_copy.default"] == 4 and counts["aten.permute_copy.default"] == 3
    sizes = [n.attrs["size"] for n in graph.nodes if n.op == "aten.view_copy.default"]
    assert [2, 60] in sizes and all(d > 0 for size in sizes for d in size)


def test_pads():
    def fn(s, x):
        return (F.pad(x, (1, 2, 0, 1), value=0.5), s.zero(x), F.pad(x[:, :, 0], (2, 3), mode="reflect"),
                s.reflect(x[:, 0]))

    graph = check(Lambda(fn, zero=nn.ZeroPad2d((1, 0, 2, 1)), reflect=nn.ReflectionPad1d((0, 3))), rand(2, 3, 5, 6))
    assert graph.op_counts() == {"aten.constant_pad_nd.default": 2, "aten.reflection_pad1d.default": 2,
                                 "aten.select_copy.int": 2}


def test_vanishing_ops():
    def fn(s, x):
        y = x.clone().contiguous(memory_format=torch.channels_last).detach()
        y = s.drop(s.ident(y.to(torch.float32)))
        return F.dropout(y, 0.3, training=False)

    graph = check(Lambda(fn, drop=nn.Dropout(0.5), ident=nn.Identity()), rand(1, 2, 3, 3))
    assert len(graph.nodes) == 0 and graph.outputs == graph.inputs


# --- elementwise ----------------------------------------------------------------------------


def test_scalar_and_tensor_arithmetic():
    def fn(s, x, y):
        z = x.clone()
        z.add_(1.5)
        z.mul_(y)
        return (x + 1, x - 2.5, x * 3, x / 4, 2 - x, torch.rsub(x, 3.0), torch.add(x, y, alpha=2),
                torch.sub(x, y, alpha=0.5), x * y, x / (y.abs() + 1), z, 2 * x, 1 + x, x - s.k, s.k - x)

    module = Lambda(fn)
    module.register_buffer("k", torch.tensor(0.75))
    graph = check(module, rand(2, 3), rand(2, 3, seed=1))
    counts = graph.op_counts()
    assert counts["aten.add.Scalar"] == 4 and counts["aten.sub.Scalar"] == 1
    assert counts["aten.mul.Scalar"] == 2 and counts["aten.div.Scalar"] == 1
    assert counts["aten.sub.Tensor"] == 5  # 2 - x and rsub use a 0-d constant self


def test_activations_and_unary():
    def fn(s, x):
        return (F.relu(x), F.relu6(x), F.hardtanh(x, -0.5, 0.25), torch.clamp(x, min=-0.3), torch.clamp(x, max=0.2),
                x.clamp(-1, 1), F.hardsigmoid(x), F.hardswish(x), torch.sigmoid(x), torch.tanh(x), F.silu(x),
                F.gelu(x), F.gelu(x, approximate="tanh"), torch.sqrt(x.abs()), x.pow(2), x.pow(0.5 * 3),
                torch.minimum(x, x * 0.5), torch.maximum(x, 0.5 - x), x.clone().relu_())

    graph = check(Lambda(fn), rand(2, 3, 4))
    counts = graph.op_counts()
    for op in ("relu", "hardsigmoid", "hardswish", "sigmoid", "tanh", "silu", "sqrt", "abs"):
        assert counts[f"aten.{op}.default"] >= 1, op
    assert counts["aten.hardtanh.default"] == 2 and counts["aten.clamp.default"] == 3
    assert counts["aten.gelu.default"] == 2 and counts["aten.pow.Tensor_Scalar"] == 2


# --- pooling, reductions, softmax, upsample -------------------------------------------------


def test_pooling_reductions_softmax():
    def fn(s, x):
        return (F.avg_pool2d(x, 2), F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), F.max_pool2d(x, 3, 2, 1),
                F.max_pool2d(x, 2, return_indices=True)[0], F.adaptive_avg_pool2d(x, 1), s.gap(x),
                x.mean((2, 3), keepdim=True), x.mean(-1), x.mean(), F.softmax(x, 1), F.log_softmax(x, -1))

    module = Lambda(fn, gap=nn.AdaptiveAvgPool2d((2, 2)))
    common = {"aten.max_pool2d.default": 2, "aten.avg_pool2d.default": 2, "aten._softmax.default": 1,
              "aten._log_softmax.default": 1}
    # Core ATen turns adaptive_avg_pool2d to 1x1 into a mean.
    graph = check(module, rand(2, 3, 6, 6))
    assert graph.op_counts() == {**common, "aten.adaptive_avg_pool2d.default": 1, "aten.mean.dim": 4}
    raw = raw_graph(module, rand(2, 3, 6, 6))
    assert raw.op_counts() == {**common, "aten.adaptive_avg_pool2d.default": 2, "aten.mean.dim": 3}


def test_adaptive_max_pool_dividing_the_input_is_a_max_pool():
    def fn(s, x):
        return F.adaptive_max_pool2d(x, (2, 3)), s.pool(x), F.adaptive_max_pool2d(x, (None, 1))

    graph = check(Lambda(fn, pool=nn.AdaptiveMaxPool2d(1)), rand(2, 3, 6, 9))
    assert graph.op_counts() == {"aten.max_pool2d.default": 3}
    assert [n.attrs["kernel_size"] for n in graph.nodes] == [[3, 3], [6, 9], [1, 9]]


def test_adaptive_max_pool_not_dividing_the_input_is_refused_with_the_sizes():
    with pytest.raises(NotImplementedError, match=r"adaptive_max_pool2d\.default from \[6, 6\] to \[4, 4\]"):
        cortexm.export(nn.AdaptiveMaxPool2d(4).eval(), (rand(1, 2, 6, 6),))


def test_repeat_is_unsqueezes_and_cats_of_copies():
    def fn(s, x):
        return x.repeat(1, 2, 3), x.repeat(2, 1, 1, 1), x.repeat(1, 1, 1)

    graph = check(Lambda(fn), rand(2, 3, 4))
    assert graph.op_counts() == {"aten.cat.default": 3, "aten.unsqueeze_copy.default": 1}


def test_repeat_of_zero_is_refused_naming_the_repeats():
    with pytest.raises(NotImplementedError, match=r"aten\.repeat\.default with repeats \[0, 1, 1\]"):
        cortexm.export(Lambda(lambda s, x: x.repeat(0, 1, 1)), (rand(2, 3, 4),))


def test_max_pool_indices_used_is_an_error():
    module = Lambda(lambda s, x: s.pool(x)[1].float(), pool=nn.MaxPool2d(2, return_indices=True))
    with pytest.raises(NotImplementedError, match=r"aten\.max_pool2d_with_indices\.default in module 'pool'"):
        cortexm.export(module, (rand(1, 1, 4, 4),))


def test_upsample_nearest():
    def fn(s, x):
        return (F.interpolate(x, scale_factor=2), F.interpolate(x, size=(5, 7)), F.interpolate(x, scale_factor=1.5),
                s.up(x))

    graph = check(Lambda(fn, up=nn.Upsample(scale_factor=(1, 3))), rand(1, 2, 4, 4))
    sizes = [n.attrs["output_size"] for n in graph.nodes]
    assert sizes == [[8, 8], [5, 7], [6, 6], [4, 12]]


def test_upsample_scale_the_graph_cannot_express():
    module = Lambda(lambda s, x: F.interpolate(x, scale_factor=(1, 1.7)))
    with pytest.raises(NotImplementedError, match="scale factor 1.7"):
        cortexm.export(module, (rand(1, 1, 1, 5),))


# --- quantized_decomposed -------------------------------------------------------------------


def quantized_module(runtime_scales=False):
    import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers the ops)

    qd = torch.ops.quantized_decomposed

    class Q(nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(0)
            self.register_buffer("w", torch.randint(-127, 128, (4, 2, 3, 3), dtype=torch.int8, generator=g))
            self.register_buffer("w_scales", torch.rand(4, generator=g) * 0.01 + 0.001)
            self.register_buffer("w_zps", torch.zeros(4, dtype=torch.int64))
            self.register_buffer("ch_scales", torch.rand(4, generator=g) * 0.05 + 0.01)
            self.register_buffer("scale", torch.tensor(0.05))
            self.register_buffer("zp", torch.tensor(3))

        def forward(self, x):
            q = qd.quantize_per_tensor.default(x, 0.02, -5, -128, 127, torch.int8)
            x = qd.dequantize_per_tensor.default(q, 0.02, -5, -128, 127, torch.int8)
            w = qd.dequantize_per_channel.default(self.w, self.w_scales, self.w_zps, 0, -127, 127, torch.int8)
            y = F.conv2d(x, w)
            y = qd.quantize_per_tensor.tensor(y, self.scale, self.zp, -128, 127, torch.int8)
            y = qd.dequantize_per_tensor.tensor(y, self.scale, self.zp, -128, 127, torch.int8)
            scales = self.ch_scales * 1.0 if runtime_scales else self.ch_scales
            p = qd.quantize_per_channel.default(y, scales, self.w_zps, 1, -128, 127, torch.int8)
            return qd.dequantize_per_channel.default(p, scales, None, 1, -128, 127, torch.int8)

    return Q()


def test_quantized_decomposed_ops():
    module = quantized_module()
    graph = check(module, rand(1, 2, 6, 6), rtol=0, atol=0)
    q = graph.nodes[0]
    assert q.op == "quantized_decomposed.quantize_per_tensor.default"
    assert q.attrs["scale"] == 0.02 and q.attrs["zero_point"] == -5 and q.attrs["dtype"] == "int8"
    assert q.outputs[0].qparams["scales"] == [0.02]
    deq_w = [n for n in graph.nodes if n.op == "quantized_decomposed.dequantize_per_channel.default"][0]
    assert deq_w.inputs[0].dtype == "int8" and deq_w.attrs["axis"] == 0
    np.testing.assert_allclose(deq_w.attrs["scales"], module.w_scales.numpy(), rtol=1e-7)
    assert deq_w.attrs["zero_points"] == [0] * 4
    counts = graph.op_counts()
    assert counts["quantized_decomposed.quantize_per_tensor.default"] == 2
    assert counts["quantized_decomposed.quantize_per_channel.default"] == 1
    assert len(graph.constants) == 1  # the int8 weight; qparams live in attributes


def test_quantized_decomposed_runtime_qparams_unsupported():
    with pytest.raises(NotImplementedError, match=r"quantize_per_channel.*scales computed at run time"):
        cortexm.export(quantized_module(runtime_scales=True), (rand(1, 2, 6, 6),))


# --- errors, sources, signature -------------------------------------------------------------


class ErfInv(nn.Module):
    def forward(self, x):
        return torch.erfinv(x)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = ErfInv()

    def forward(self, x):
        return self.conv(x)


def test_unsupported_op_names_op_and_module_path():
    module = nn.Sequential()
    module.add_module("encoder", nn.Sequential(nn.ReLU(), nn.ReLU(), nn.ReLU(), Block()))
    with pytest.raises(cortexm.UnsupportedError) as info:
        cortexm.export(module, (rand(2, 3) * 0.1,))
    assert isinstance(info.value, NotImplementedError)
    assert str(info.value) == ("cortexm.export: aten.erfinv.default in module 'encoder.3.conv' is not supported: "
                               "rewrite it with ops docs/ops.md lists as exported, or compute it outside the model "
                               "(cortexm.check(model, example_inputs) lists every such op at once)")


def test_unsupported_cast_and_graph_refusals_name_the_module():
    with pytest.raises(NotImplementedError, match=r"aten\._to_copy\.default to torch\.int32 in the top-level module"):
        cortexm.export(Lambda(lambda s, x: x.to(torch.int32)), (rand(2, 3),))


def test_conv_transpose2d_exports_and_runs_as_torch():
    for up in (nn.ConvTranspose2d(2, 3, 2), nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1,
                                                                output_padding=1, groups=2),
               nn.ConvTranspose1d(3, 2, 4, stride=3, dilation=2)):
        x = rand(1, up.in_channels, 5, 4) if isinstance(up, nn.ConvTranspose2d) else rand(2, 3, 7)
        graph = cortexm.export(Lambda(lambda s, x: s.up(x), up=up), (x,))
        assert graph.op_counts() == {"aten.convolution.default": 1}
        want = up(x).detach().numpy()
        got = graph.run(x.numpy())
        assert got.shape == want.shape
        assert np.max(np.abs(got - want)) < 1e-5


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.head = nn.Linear(4, 2)

    def forward(self, image, extra):
        y = self.stem(image)
        pooled = y.mean((2, 3))
        return self.head(pooled), (y, pooled + extra)


def test_inputs_outputs_sources_and_layout():
    module = randomize_bn(Net())
    image, extra = rand(1, 3, 5, 5), rand(1, 4, seed=1)
    graph = check(module, image, extra)
    assert [v.name for v in graph.inputs] == ["image", "extra"]
    assert [v.shape for v in graph.inputs] == [(1, 3, 5, 5), (1, 4)]
    assert [v.shape for v in graph.outputs] == [(1, 2), (1, 4, 5, 5), (1, 4)]
    for v in list(graph.inputs) + list(graph.outputs):
        assert v.dim_order == tuple(range(len(v.shape)))
    sources = {n.op: n.source for n in graph.nodes}
    assert sources["aten.convolution.default"] == "stem.0"
    assert sources["aten.relu.default"] == "stem.2"
    assert sources["aten.linear.default"] == "head"
    assert sources["aten.mean.dim"] == ""
    assert {c.name for c in graph.constants} >= {"head.weight", "head.bias"}
    assert module.training is False


def test_train_mode_flags_restored_and_bn_evaluated():
    module = randomize_bn(Net()).train()
    module.head.eval()
    graph = cortexm.export(module, (rand(1, 3, 5, 5), rand(1, 4)))
    assert module.training and module.stem[1].training and not module.head.training
    assert "aten.mul.Tensor" not in graph.op_counts()  # BN folded in eval mode


@pytest.mark.filterwarnings("ignore:.*LeafSpec:FutureWarning")  # torch.export's own
def test_exported_program_accepted():
    module = randomize_bn(Net()).eval()
    inputs = (rand(1, 3, 5, 5), rand(1, 4))
    ep = torch.export.export(module, inputs, strict=False)
    graph = cortexm.export(ep)
    compare(graph, module, inputs, 1e-5, 1e-5)
    assert graph.op_counts() == cortexm.export(module, inputs).op_counts()
    with pytest.raises(ValueError, match="ExportedProgram"):
        cortexm.export(ep, inputs)
    with pytest.raises(ValueError, match="example_inputs"):
        cortexm.export(module)
    with pytest.raises(TypeError):
        cortexm.export(lambda x: x, inputs)


def test_dynamic_shapes_fixed_at_the_example():
    module = Lambda(lambda s, x: s.lin(x).reshape(x.shape[0], -1, 2), lin=nn.Linear(4, 6))
    x = rand(3, 4)
    batch = torch.export.Dim("batch", min=2, max=16)
    graph = cortexm.export(module, (x,), dynamic_shapes={"xs": ({0: batch},)})
    assert graph.inputs[0].shape == (3, 4)
    compare(graph, module, (x,), 1e-5, 1e-5)


# --- the model zoo --------------------------------------------------------------------------

try:
    import cortexm.models as zoo

    ZOO = zoo.names()
except ImportError:  # the zoo is optional
    ZOO = []


@pytest.mark.parametrize("name", ZOO)
def test_model_zoo_exports_and_matches_torch(name, tmp_path):
    model, inputs, _ = zoo.get(name)
    graph = cortexm.export(model, inputs)
    with torch.no_grad():
        ref = [r.numpy() for r in flat(model(*inputs))]
    arrays = [x.numpy() for x in inputs]
    out = graph.run(*arrays)
    out = list(out) if isinstance(out, tuple) else [out]
    assert len(out) == len(ref)
    for o, r in zip(out, ref):
        np.testing.assert_allclose(o, r, rtol=1e-4, atol=1e-4 * float(np.abs(r).max()))

    path = tmp_path / f"{name}.cmg"
    graph.save(path)
    loaded = cortexm.Graph.load(path)
    assert loaded.op_counts() == graph.op_counts()
    again = loaded.run(*arrays)
    again = list(again) if isinstance(again, tuple) else [again]
    for a, o in zip(again, out):
        assert a.dtype == o.dtype and np.array_equal(a, o)


def test_handler_tables_refuse_an_op_handled_twice():
    from cortexm._export.handlers import HANDLERS, HandlerTable

    a = HandlerTable()
    a.handles("aten.relu.default")(lambda cx, args: None)
    with pytest.raises(ValueError, match="aten.relu.default has two handlers"):
        a.handles("aten.relu.default")(lambda cx, args: None)
    # the families' table: a second family module handling an op fails at import
    with pytest.raises(ValueError, match="aten.relu.default has two handlers: unary and"):
        HANDLERS.handles("aten.relu.default")(lambda cx, args: None)


def test_every_unsupported_op_is_listed_at_once_with_its_module_path():
    """Export does not stop at the first unsupported op: one UnsupportedError lists each (op, module)
    once, in graph order; nodes that only read a refused value are not listed."""
    module = nn.Sequential()
    module.add_module("first", Lambda(lambda s, x: torch.cumsum(x, -1) + 1))  # add reads cumsum: not listed
    module.add_module("second", Lambda(lambda s, x: torch.erfinv(x * 0.1) * torch.erfinv(x * 0.2)))
    module.add_module("third", Lambda(lambda s, x: torch.flip(torch.relu(x), [0])))
    with pytest.raises(cortexm.UnsupportedError) as info:
        cortexm.export(module.eval(), (rand(2, 3),))
    instead = {op: suggestion(op) for op in ("aten.cumsum.default", "aten.erfinv.default", "aten.flip.default")}
    assert info.value.problems == [
        ("aten.cumsum.default", "first", "cortexm.export: aten.cumsum.default in module 'first' is not supported: "
                                         + instead["aten.cumsum.default"]),
        ("aten.erfinv.default", "second", "cortexm.export: aten.erfinv.default in module 'second' is not supported: "
                                          + instead["aten.erfinv.default"]),
        ("aten.flip.default", "third", "cortexm.export: aten.flip.default in module 'third' is not supported: "
                                       + instead["aten.flip.default"]),
    ]
    assert str(info.value).splitlines() == [
        "cortexm.export: 3 unsupported ops:",
        "  aten.cumsum.default in module 'first' is not supported: " + instead["aten.cumsum.default"],
        "  aten.erfinv.default in module 'second' is not supported: " + instead["aten.erfinv.default"],
        "  aten.flip.default in module 'third' is not supported: " + instead["aten.flip.default"],
    ]


def test_a_handler_refusal_is_listed_with_the_unknown_ops():
    module = nn.Sequential()
    module.add_module("cast", Lambda(lambda s, x: x.to(torch.int32).float()))
    module.add_module("act", Lambda(lambda s, x: torch.cumsum(x, -1)))
    with pytest.raises(cortexm.UnsupportedError) as info:
        cortexm.export(module.eval(), (rand(2, 3),))
    assert [(op, where) for op, where, _ in info.value.problems] == [("aten._to_copy.default", "cast"),
                                                                    ("aten.cumsum.default", "act")]
    assert "aten._to_copy.default to torch.int32 in module 'cast' is not supported" in str(info.value)
