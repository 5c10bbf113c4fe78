"""Group norm: nn.GroupNorm / F.group_norm (aten.native_group_norm) export as one aten.group_norm
graph op, which runs in float (the interpreter and a program's GroupNorm float fallback compute the
same bits) until it is lowered to cortex_m.quantized_group_norm (src/ops/group_norm/), or
cortex_m.quantized_group_norm_s16 at precision="16x8": the program's kernel is bit-exact with the
interpreter's reference (the layer-norm reference per (batch, group) set), on contiguous and
channels-last inputs, on the host and on QEMU's Cortex-M55 (test_instance_norm.py: both norms, int8
and 16x8, on the M55 and the M4); the SQNR against torch's float model is printed (pytest -s) and
bounded."""

import shutil

import numpy as np
import pytest

import cortexm
from sqnr import sqnr_db

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

GN = "aten.group_norm.default"
QGN = "cortex_m.quantized_group_norm.default"
QGN16 = "cortex_m.quantized_group_norm_s16.default"
CLONE = "dim_order_ops._clone_dim_order.default"


def randomize(module, seed=0):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return module.eval()


class Functional(nn.Module):
    def __init__(self, groups, channels, affine):
        super().__init__()
        self.groups = groups
        self.w = nn.Parameter(torch.ones(channels)) if affine else None
        self.b = nn.Parameter(torch.zeros(channels)) if affine else None

    def forward(self, x):
        return F.group_norm(x, self.groups, self.w, self.b, eps=1e-3)


# --- float ---------------------------------------------------------------------------------------

EXPORTED = [  # id, module, input shape, eps, has weight and bias
    ("affine", nn.GroupNorm(4, 8), (2, 8, 5, 3), 1e-5, True),
    ("not-affine", nn.GroupNorm(2, 6, affine=False), (1, 6, 4, 4), 1e-5, False),
    ("functional", Functional(3, 6, True), (2, 6, 7), 1e-3, True),
    ("functional-no-weights", Functional(1, 5, False), (3, 5), 1e-3, False),
    ("groups-equal-channels-3d", nn.GroupNorm(4, 4, eps=1e-2), (1, 4, 3, 2, 5), 1e-2, True),
]


@pytest.mark.parametrize("name,module,shape,eps,affine", EXPORTED, ids=[c[0] for c in EXPORTED])
def test_exports_as_one_group_norm_op_and_runs_as_torch(name, module, shape, eps, affine):
    module = randomize(module)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1)) * 3 + 1
    graph = cortexm.export(module, (x,))
    assert [n.op for n in graph.nodes] == [GN]
    node = graph.nodes[0]
    assert node.attrs["eps"] == pytest.approx(eps)
    assert (node.inputs[1] is not None, node.inputs[2] is not None) == (affine, affine)
    want = module(x).detach().numpy()
    # float32 results: torch sums in float32, the interpreter in double.
    np.testing.assert_allclose(graph.run(x.numpy()), want, atol=1e-5, rtol=1e-5)


class UsesStatistics(nn.Module):
    def forward(self, x):
        y, mean, rstd = torch.ops.aten.native_group_norm(x, None, None, 1, 4, 4, 2, 1e-5)
        return y + mean.sum()


def test_a_used_mean_output_is_refused_by_name():
    with pytest.raises(cortexm.UnsupportedError, match="aten.native_group_norm.default.*mean output is used"):
        cortexm.export(UsesStatistics().eval(), (torch.randn(1, 4, 2, 2),))


def test_graph_op_checks_its_arguments():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 6, 4], "float32")
    w = g.add_constant("w", np.ones(4, np.float32))
    with pytest.raises(ValueError, match="num_groups' = 4 must divide the 6 channels"):
        g.call(GN, [x, None, None], {"num_groups": 4, "eps": 1e-5})
    with pytest.raises(ValueError, match="num_groups' = 0"):
        g.call(GN, [x, None, None], {"num_groups": 0, "eps": 1e-5})
    with pytest.raises(ValueError, match=r"weight .* must have shape \[6\]"):
        g.call(GN, [x, w, None], {"num_groups": 3, "eps": 1e-5})
    with pytest.raises(ValueError, match="eps"):
        g.call(GN, [x, None, None], {"num_groups": 3, "eps": -1.0})
    y = g.add_input("y", [6], "float32")
    with pytest.raises(ValueError, match="rank >= 2"):
        g.call(GN, [y, None, None], {"num_groups": 1, "eps": 1e-5})


@pytest.mark.parametrize("module,shape", [(nn.GroupNorm(4, 8), (2, 8, 5, 3)),
                                          (nn.GroupNorm(3, 3, affine=False), (1, 3, 9)),
                                          (nn.GroupNorm(1, 6), (2, 6, 2, 2, 3))],
                         ids=["affine", "not-affine", "3d"])
def test_float_fallback_program_is_bit_exact_with_the_graph(module, shape):
    module = randomize(module, 1)
    graph = cortexm.export(module, (torch.randn(*shape),))
    program = cortexm.to_program(graph)
    assert program.float_ops == 1
    for seed in range(3):
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * 10 + seed
        assert np.asarray(program.run(x.numpy())).tobytes() == np.asarray(graph.run(x.numpy())).tobytes()


# --- int8: cortex_m.quantized_group_norm -----------------------------------------------------------

def samples(shape, n, seed, scale=1.0, offset=0.0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(*shape, generator=g) * scale + offset,) for _ in range(n)]


def deployed_sqnr(module, lowered, shape) -> float:
    """The program of lowered, with no float op, run on 8 samples: each output byte-identical with
    lowered's; returns the SQNR of the outputs against module's (torch float)."""
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0
    xs = samples(shape, 8, 9)
    got = []
    for (x,) in xs:
        out = np.asarray(program.run(x.numpy()))
        assert out.tobytes() == np.asarray(lowered.run(x.numpy())).tobytes()
        got.append(out)
    return sqnr_db([module(x).detach().numpy() for (x,) in xs], got)


def quantize_and_lower(module, shape, scale=1.0, offset=0.0, target="cortex-m55+int8", precision="int8"):
    graph = cortexm.export(module.eval(), samples(shape, 1, 1, scale, offset)[0])
    qgraph = cortexm.quantize(graph, samples(shape, 32, 2, scale, offset), progress=False, precision=precision)
    return qgraph, cortexm.lower(qgraph, target)


INT8_CASES = [  # id, module, input shape, input scale, input offset
    ("4-groups", nn.GroupNorm(4, 16), (2, 16, 6, 6), 1.0, 0.0),
    ("one-group", nn.GroupNorm(1, 6), (1, 6, 5, 7), 1.0, 0.0),
    ("groups-equal-channels", nn.GroupNorm(5, 5), (2, 5, 3, 3), 1.0, 0.0),
    ("3-channels-per-group-odd-spatial", nn.GroupNorm(4, 12), (1, 12, 7, 5), 1.0, 0.0),
    ("not-affine", nn.GroupNorm(2, 6, affine=False), (2, 6, 4, 3), 1.0, 0.0),
    ("1d", nn.GroupNorm(2, 10), (3, 10, 9), 1.0, 0.0),
    ("2d-input", nn.GroupNorm(3, 9), (4, 9), 1.0, 0.0),
    ("one-spatial-element", nn.GroupNorm(2, 8), (2, 8, 1, 1), 1.0, 0.0),
    ("large-scale", nn.GroupNorm(2, 4), (1, 4, 5, 5), 300.0, 0.0),
    ("tiny-scale", nn.GroupNorm(2, 4), (1, 4, 5, 5), 1e-3, 0.0),
    ("offset-zero-point", nn.GroupNorm(3, 6), (1, 6, 4, 4), 0.5, 2.0),
]


def lowered_node(lowered):
    [node] = [n for n in lowered.nodes if n.op == QGN]
    return node


@pytest.mark.parametrize("name,module,shape,scale,offset", INT8_CASES, ids=[c[0] for c in INT8_CASES])
def test_program_kernel_is_bit_exact_with_the_reference(name, module, shape, scale, offset):
    module = randomize(module, 3)
    qgraph, lowered = quantize_and_lower(module, shape, scale, offset)
    counts = lowered.op_counts()
    assert counts.get(QGN) == 1 and GN not in counts, counts
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0
    out_scale = lowered_node(lowered).outputs[0].qparams["scales"][0]
    got_all, want_all, fake_all = [], [], []
    for (x,) in samples(shape, 4, 4, scale, offset):
        got = np.asarray(lowered.run(x.numpy()))  # the interpreter's reference
        assert np.asarray(program.run(x.numpy())).tobytes() == got.tobytes()
        got_all.append(got)
        want_all.append(module(x).detach().numpy())
        fake_all.append(qgraph.run(x.numpy()))
    got, want, fake = (np.concatenate(a) for a in (got_all, want_all, fake_all))
    # Within 1 LSB of the fake-quantized graph (float group norm between Q / DQ).
    assert np.max(np.abs(got - fake)) <= out_scale * 1.0001
    sqnr = sqnr_db(want, got)
    print(f"group norm {name}: SQNR vs float {sqnr:.2f} dB (fake-quantized {sqnr_db(want, fake):.2f} dB)")
    assert sqnr > 25, sqnr


S16_CASES = [c for c in INT8_CASES if c[0] != "offset-zero-point"] + [
    ("large-set", nn.GroupNorm(2, 4), (1, 4, 90, 90), 1.0, 0.0)]


@pytest.mark.parametrize("name,module,shape,scale,offset", S16_CASES, ids=[c[0] for c in S16_CASES])
def test_16x8_program_kernel_is_bit_exact_with_the_reference(name, module, shape, scale, offset):
    """precision="16x8": cortex_m.quantized_group_norm_s16, within 1 LSB (int16) of the fake-quantized
    graph."""
    module = randomize(module, 3)
    qgraph, lowered = quantize_and_lower(module, shape, scale, offset, precision="16x8")
    counts = lowered.op_counts()
    assert counts.get(QGN16) == 1 and GN not in counts and QGN not in counts, counts
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0
    [node] = [n for n in lowered.nodes if n.op == QGN16]
    out_scale = node.outputs[0].qparams["scales"][0]
    got_all, want_all, fake_all = [], [], []
    for (x,) in samples(shape, 3, 4, scale, offset):
        got = np.asarray(lowered.run(x.numpy()))
        assert np.asarray(program.run(x.numpy())).tobytes() == got.tobytes()
        got_all.append(got)
        want_all.append(module(x).detach().numpy())
        fake_all.append(qgraph.run(x.numpy()))
    got, want, fake = (np.concatenate(a) for a in (got_all, want_all, fake_all))
    # In output LSBs (float64: float32 differences are too coarse at int16's resolution); without a
    # weight too (the lowering's weight of ones keeps z's Q.16 fraction: 2 LSB without it).
    lsb = np.abs(np.rint(got.astype(np.float64) / out_scale) - np.rint(fake.astype(np.float64) / out_scale))
    assert lsb.max() <= 1, lsb.max()
    sqnr = sqnr_db(want, got)
    print(f"group norm 16x8 {name}: {lsb.max():.0f} LSB from the fake-quantized graph, SQNR vs float {sqnr:.2f} dB (fake-quantized {sqnr_db(want, fake):.2f} dB)")
    assert sqnr > 60, sqnr


def test_constant_groups_give_the_bias():
    """Variance 0: every d is 0, the output is each channel's bias."""
    module = randomize(nn.GroupNorm(2, 4), 5)
    qgraph, lowered = quantize_and_lower(module, (1, 4, 3, 3))
    x = np.zeros((1, 4, 3, 3), np.float32)
    x[0, :2] = 0.75
    x[0, 2:] = -1.5
    got = lowered.run(x)
    assert np.asarray(cortexm.to_program(lowered).run(x)).tobytes() == np.asarray(got).tobytes()
    scale = lowered_node(lowered).outputs[0].qparams["scales"][0]
    bias = module.bias.detach().numpy()
    assert np.max(np.abs(got - bias[None, :, None, None])) <= 1.01 * scale


def test_a_group_too_large_for_the_kernel_stays_float_with_the_reason():
    module = randomize(nn.GroupNorm(1, 2), 6)
    _, lowered = quantize_and_lower(module, (1, 2, 200, 200))
    assert QGN not in lowered.op_counts()
    assert GN in lowered.op_counts()


def test_a_group_too_large_for_the_int16_kernel_stays_float_with_the_reason():
    """The int16 kernel takes sets of up to 32768 values (the int8 one 65536)."""
    module = randomize(nn.GroupNorm(1, 2), 6)
    _, lowered = quantize_and_lower(module, (1, 2, 130, 130), precision="16x8")
    assert QGN16 not in lowered.op_counts() and GN in lowered.op_counts()
    [node] = [n for n in lowered.nodes if n.op == GN]
    assert "a group of 33800 values" in node.meta["lowering"] and "up to 32768" in node.meta["lowering"]
    assert "use more groups" in node.meta["lowering"]


class ConvGroupNormRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 12, 3, padding=1)
        self.norm = nn.GroupNorm(4, 12)
        self.conv2 = nn.Conv2d(12, 6, 3)

    def forward(self, x):
        return self.conv2(torch.relu(self.norm(self.conv(x))))


def test_conv_group_norm_relu_deploys_int8_channels_last_bit_exact():
    """The relu folds into the norm, which reads the conv's channels-last output in place (the only
    layout copies are the model's input and output, as without it), and the program's kernel
    (channels-last bytes) equals the reference (logical data)."""
    torch.manual_seed(0)
    module = ConvGroupNormRelu().eval()
    shape = (1, 3, 11, 9)
    _, lowered = quantize_and_lower(module, shape)
    counts = lowered.op_counts()
    assert counts == {"cortex_m.quantize_per_tensor.default": 1, CLONE: 2, "cortex_m.quantized_conv2d.default": 2,
                      QGN: 1, "cortex_m.dequantize_per_tensor.default": 1}, counts
    node = lowered_node(lowered)
    assert tuple(node.inputs[0].dim_order) == tuple(node.outputs[0].dim_order) == (0, 2, 3, 1)
    assert node.attrs["activation_min"] == node.outputs[0].qparams["zero_points"][0]  # the relu
    sqnr = deployed_sqnr(module, lowered, shape)
    print(f"conv -> GroupNorm -> relu -> conv: SQNR vs torch float {sqnr:.2f} dB")
    assert sqnr > 25, sqnr


def test_quantized_graph_op_rejects_bad_arguments():
    ok = {"num_groups": 2, "eps_term": 0, "product_shift": 0, "output_zero_point": 0,
          "output_multiplier": 1 << 30, "output_shift": 0}

    def make(shape, attrs, weight=None):
        g = cortexm.Graph()
        x = g.add_input("x", list(shape), "int8")
        w = None if weight is None else g.add_constant("w", np.asarray(weight, np.int16))
        g.outputs = [g.call(QGN, [x, w, None], attrs)]
        return g

    for bad, match in [({"product_shift": 32}, "product_shift"), ({"eps_term": -1}, "eps_term"),
                       ({"eps_term": (1 << 60) + 1}, "eps_term"), ({"output_shift": 31}, "output_shift"),
                       ({"output_zero_point": 128}, "output_zero_point"), ({"num_groups": 3}, "num_groups"),
                       ({"num_groups": 0}, "num_groups")]:
        with pytest.raises(ValueError, match=match):
            make((2, 8, 3), {**ok, **bad})
    with pytest.raises(ValueError, match="group_size"):
        make((1, 2, 65537), {**ok, "num_groups": 1})
    with pytest.raises(ValueError, match=r"weight .* must have shape \[8\]"):
        make((2, 8, 3), ok, weight=np.ones(7))


@pytest.mark.skipif(shutil.which("flatc") is None, reason="flatc not installed")
@pytest.mark.parametrize("field,value,match", [
    ("num_groups", 0, "num_groups"), ("num_groups", 5, "num_groups"), ("num_groups", 16, "num_groups"),
    ("num_groups", -2, "num_groups"), ("product_shift", 32, "product_shift"), ("product_shift", -1, "product_shift"),
    ("eps_term", -1, "eps_term"), ("eps_term", (1 << 60) + 1, "eps_term"), ("shift", 31, "output_shift"),
    ("multiplier", -5, "output_multiplier"), ("output_offset", 200, "output_offset"),
    ("activation_min", -200, "activation"), ("activation_max", 300, "activation")])
def test_the_loader_rejects_bad_params_tables(tmp_path, field, value, match):
    from test_program import from_json, to_json

    _, lowered = quantize_and_lower(randomize(nn.GroupNorm(4, 8), 12), (2, 8, 3, 3))
    doc = to_json(cortexm.to_program(lowered).data, tmp_path)
    op = [o for o in doc["ops"] if o["kernel"] == "QuantizedGroupNorm"][0]
    op["params"][field] = value
    with pytest.raises(ValueError, match=match):
        cortexm.Program(from_json(doc, tmp_path))


@pytest.mark.skipif(shutil.which("flatc") is None, reason="flatc not installed")
@pytest.mark.parametrize("field,value,match", [("num_groups", 3, "num_groups"), ("num_groups", 0, "num_groups"),
                                               ("eps", float("nan"), "eps"), ("eps", -1.0, "eps")])
def test_the_loader_rejects_bad_float_params_tables(tmp_path, field, value, match):
    from test_program import from_json, to_json

    graph = cortexm.export(randomize(nn.GroupNorm(2, 4), 13), (torch.randn(1, 4, 3, 3),))
    doc = to_json(cortexm.to_program(graph).data, tmp_path)
    op = [o for o in doc["ops"] if o["kernel"] == "GroupNorm"][0]
    op["params"][field] = value
    with pytest.raises(ValueError, match=match):
        cortexm.Program(from_json(doc, tmp_path))


@pytest.mark.skipif(shutil.which("flatc") is None, reason="flatc not installed")
def test_the_loader_rejects_a_weight_of_the_wrong_length(tmp_path):
    from test_program import from_json, to_json

    _, lowered = quantize_and_lower(randomize(nn.GroupNorm(4, 8), 12), (2, 8, 3, 3))
    doc = to_json(cortexm.to_program(lowered).data, tmp_path)
    op = [o for o in doc["ops"] if o["kernel"] == "QuantizedGroupNorm"][0]
    weight = doc["tensors"][op["inputs"][1]]
    weight["shape"] = [4]
    with pytest.raises(ValueError, match="weight"):
        cortexm.Program(from_json(doc, tmp_path))


@pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")
def test_conv_group_norm_relu_on_qemu_m55_is_bit_identical_with_the_host():
    from cortexm import qemu

    torch.manual_seed(0)
    shape = (1, 3, 11, 9)
    _, lowered = quantize_and_lower(ConvGroupNormRelu().eval(), shape)
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0 and lowered.op_counts().get(QGN) == 1
    xs = [x.numpy() for (x,) in samples(shape, 3, 12)]
    for got, x in zip(qemu.run_cases(program, xs, "cortex-m55"), xs):
        assert np.asarray(got).tobytes() == np.asarray(program.run(x)).tobytes()
