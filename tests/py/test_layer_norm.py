"""Layer norm: nn.LayerNorm / F.layer_norm (aten.native_layer_norm) and a hand-written layer norm
export as one aten.layer_norm graph op, which runs in float (the interpreter and a program's
LayerNorm float fallback compute the same bits) until it is lowered to
cortex_m.quantized_layer_norm: bit-exact with the numpy reference (tests/py/numpy_reference/
layer_norm.py), the program with the lowered graph, QEMU's Cortex-M55 and M4 with the host; the
SQNR against float is printed (pytest -s) and bounded."""

import shutil

import numpy as np
import pytest

import cortexm
from numpy_reference.layer_norm import layer_norm
from numpy_reference.quantized_graph import QuantizedGraphReference
from sqnr import sqnr_db

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

LN = "aten.layer_norm.default"


def randomize(module, seed=0):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return module.eval()


class Functional(nn.Module):
    def __init__(self, affine):
        super().__init__()
        self.w = nn.Parameter(torch.ones(16)) if affine else None
        self.b = nn.Parameter(torch.zeros(16)) if affine else None

    def forward(self, x):
        return F.layer_norm(x, (16,), self.w, self.b, eps=1e-3)


class HandWritten(nn.Module):
    """try18.py's layer norm: (x - m) / sqrt(v + eps) * w + b."""

    def __init__(self):
        super().__init__()
        self.w, self.b = nn.Parameter(torch.ones(16)), nn.Parameter(torch.zeros(16))

    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        v = ((x - m) ** 2).mean(-1, keepdim=True)
        return (x - m) / torch.sqrt(v + 1e-5) * self.w + self.b


class VarRsqrt(nn.Module):
    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        v = x.var(-1, unbiased=False, keepdim=True)
        return (x - m) * torch.rsqrt(v + 1e-5)


class SquareByMul(nn.Module):
    """One x - m node squared by mul, the weight first, eps first, no bias."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(16))

    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        d = x - m
        v = (d * d).mean(dim=2, keepdim=True)
        return self.w * (d * torch.rsqrt(1e-3 + v))


class BiasOnly(nn.Module):
    def __init__(self):
        super().__init__()
        self.b = nn.Parameter(torch.zeros(16))

    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        v = ((x - m) ** 2).mean(-1, keepdim=True)
        return (x - m) / torch.sqrt(v + 1e-5) + self.b


FUSED = [  # module, eps, has weight, has bias
    (nn.LayerNorm(16), 1e-5, True, True),
    (nn.LayerNorm(16, bias=False), 1e-5, True, False),
    (nn.LayerNorm([3, 16], elementwise_affine=False), 1e-5, False, False),
    (Functional(True), 1e-3, True, True),
    (Functional(False), 1e-3, False, False),
    (HandWritten(), 1e-5, True, True),
    (VarRsqrt(), 1e-5, False, False),
    (SquareByMul(), 1e-3, True, False),
    (BiasOnly(), 1e-5, False, True),
]


@pytest.mark.parametrize("module,eps,weight,bias", FUSED, ids=lambda c: type(c).__name__ if isinstance(c, nn.Module) else None)
def test_exports_as_one_layer_norm_op(module, eps, weight, bias):
    module = randomize(module)
    x = torch.randn(2, 3, 16)
    graph = cortexm.export(module, (x,))
    assert [n.op for n in graph.nodes] == [LN]
    node = graph.nodes[0]
    assert node.attrs["eps"] == pytest.approx(eps)
    assert (node.inputs[1] is not None, node.inputs[2] is not None) == (weight, bias)
    np.testing.assert_allclose(graph.run(x.numpy()), module(x).detach().numpy(), atol=2e-6, rtol=1e-5)


class MeanAlsoOutput(nn.Module):
    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        d = x - m
        return d / torch.sqrt((d * d).mean(-1, keepdim=True) + 1e-5), m


class NotLastDim(nn.Module):
    def forward(self, x):
        m = x.mean(1, keepdim=True)
        return (x - m) / torch.sqrt(((x - m) ** 2).mean(1, keepdim=True) + 1e-5)


class WeightFromInput(nn.Module):
    def forward(self, x, w):
        m = x.mean(-1, keepdim=True)
        return (x - m) / torch.sqrt(((x - m) ** 2).mean(-1, keepdim=True) + 1e-5) * w


class Unbiased(nn.Module):
    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        return (x - m) * torch.rsqrt(x.var(-1, keepdim=True) + 1e-5)


class OtherMean(nn.Module):
    """The variance of another tensor: not a layer norm."""

    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        y = x * 2
        my = y.mean(-1, keepdim=True)
        return (x - m) / torch.sqrt(((y - my) ** 2).mean(-1, keepdim=True) + 1e-5)


def test_near_misses_are_left_alone():
    x = torch.randn(2, 3, 16)
    for module in (MeanAlsoOutput(), NotLastDim(), OtherMean()):
        graph = cortexm.export(module.eval(), (x,))
        assert LN not in [n.op for n in graph.nodes], type(module).__name__
        got = graph.run(x.numpy())
        want = module(x)
        got = got if isinstance(got, (tuple, list)) else [got]
        want = want if isinstance(want, tuple) else [want]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w.numpy(), atol=1e-5, rtol=1e-5)
    # The weight is computed at run time: the normalization fuses, the product stays a mul.
    graph = cortexm.export(WeightFromInput().eval(), (x, torch.randn(16)))
    assert [n.op for n in graph.nodes] == [LN, "aten.mul.Tensor"]
    # An unbiased variance is no layer norm (and var has no graph op: export refuses it).
    with pytest.raises(cortexm.UnsupportedError, match="aten.var.correction"):
        cortexm.export(Unbiased().eval(), (x,))


class UsesStatistics(nn.Module):
    def forward(self, x):
        y, mean, rstd = torch.ops.aten.native_layer_norm(x, [16], None, None, 1e-5)
        return y + mean


def test_a_used_mean_output_is_refused_by_name():
    with pytest.raises(cortexm.UnsupportedError, match="aten.native_layer_norm.default.*mean output is used"):
        cortexm.export(UsesStatistics().eval(), (torch.randn(2, 16),))


def test_graph_op_checks_its_arguments():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 5, 8], "float32")
    w = g.add_constant("w", np.ones(5, np.float32))
    with pytest.raises(ValueError, match="normalized_shape.*trailing dims"):
        g.call(LN, [x, None, None], {"normalized_shape": [5], "eps": 1e-5})
    with pytest.raises(ValueError, match="weight \\[5\\] must have shape normalized_shape \\[8\\]"):
        g.call(LN, [x, w, None], {"normalized_shape": [8], "eps": 1e-5})
    with pytest.raises(ValueError, match="eps"):
        g.call(LN, [x, None, None], {"normalized_shape": [8], "eps": -1.0})


@pytest.mark.parametrize("module", [nn.LayerNorm(16), nn.LayerNorm([3, 16], elementwise_affine=False),
                                    BiasOnly()], ids=["affine", "two-dims", "bias-only"])
def test_float_fallback_program_is_bit_exact_with_the_graph(module):
    module = randomize(module, 1)
    x = torch.randn(2, 3, 16)
    graph = cortexm.export(module, (x,))
    program = cortexm.to_program(graph)
    assert program.float_ops == 1
    for seed in range(3):
        x = torch.randn(2, 3, 16, generator=torch.Generator().manual_seed(seed)) * 10 + seed
        assert np.asarray(program.run(x.numpy())).tobytes() == np.asarray(graph.run(x.numpy())).tobytes()


# --- int8: cortex_m.quantized_layer_norm -----------------------------------------------------------

QLN = "cortex_m.quantized_layer_norm.default"


def samples(shape, n, seed, scale=1.0, offset=0.0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(*shape, generator=g) * scale + offset,) for _ in range(n)]


def quantize_and_lower(module, shape, scale=1.0, offset=0.0, target="cortex-m55+int8"):
    graph = cortexm.export(module.eval(), samples(shape, 1, 1, scale, offset)[0])
    qgraph = cortexm.quantize(graph, samples(shape, 32, 2, scale, offset), progress=False)
    return qgraph, cortexm.lower(qgraph, target)


INT8_CASES = [  # id, module, input shape, input scale, input offset
    ("affine-16", nn.LayerNorm(16), (1, 5, 16), 1.0, 0.0),
    ("affine-768", nn.LayerNorm(768), (1, 3, 768), 1.0, 0.0),
    ("odd-7", nn.LayerNorm(7), (4, 7), 1.0, 0.0),
    ("row-1", nn.LayerNorm(1), (6, 1), 1.0, 0.0),
    ("no-affine", nn.LayerNorm(32, elementwise_affine=False), (2, 3, 32), 1.0, 0.0),
    ("weight-only-two-dims", nn.LayerNorm([3, 8], bias=False), (2, 3, 8), 1.0, 0.0),
    ("bias-only", BiasOnly(), (2, 3, 16), 1.0, 0.0),
    ("hand-written", HandWritten(), (1, 5, 16), 1.0, 0.0),
    ("var-rsqrt", VarRsqrt(), (3, 16), 1.0, 0.0),
    ("large-scale", nn.LayerNorm(24), (2, 24), 300.0, 0.0),
    ("tiny-scale", nn.LayerNorm(24), (2, 24), 1e-3, 0.0),
    ("offset-zero-point", nn.LayerNorm(20), (3, 20), 0.5, 2.0),
]


@pytest.mark.parametrize("name,module,shape,scale,offset", INT8_CASES, ids=[c[0] for c in INT8_CASES])
def test_lowered_layer_norm_is_bit_exact_with_the_numpy_reference(name, module, shape, scale, offset):
    module = randomize(module, 3)
    qgraph, lowered = quantize_and_lower(module, shape, scale, offset)
    counts = lowered.op_counts()
    assert counts.get(QLN) == 1, counts
    assert LN not in counts
    reference = QuantizedGraphReference(qgraph)
    assert reference.integer_ops == [QLN]
    out_scale = [n for n in lowered.nodes if n.op == QLN][0].outputs[0].qparams["scales"][0]
    got_all, want_all, fake_all = [], [], []
    for (x,) in samples(shape, 4, 4, scale, offset):
        got = lowered.run(x.numpy())
        np.testing.assert_array_equal(got, reference.run(x.numpy())[0])
        got_all.append(got)
        want_all.append(module(x).detach().numpy())
        fake_all.append(qgraph.run(x.numpy()))
    got, want, fake = (np.concatenate(a) for a in (got_all, want_all, fake_all))
    # Within 1 LSB of the fake-quantized graph (float layer norm between Q / DQ).
    assert np.max(np.abs(got - fake)) <= out_scale * 1.0001
    if name == "row-1":
        return  # a one-element row normalizes to 0: the output is the bias alone
    sqnr = sqnr_db(want, got)
    print(f"layer norm {name}: SQNR vs float {sqnr:.2f} dB (fake-quantized {sqnr_db(want, fake):.2f} dB)")
    assert sqnr > 25, sqnr


def test_constant_rows_give_the_bias():
    """Variance 0: W is the eps term alone (or 1 without it), every d is 0, the output the bias."""
    module = randomize(nn.LayerNorm(16), 5)
    qgraph, lowered = quantize_and_lower(module, (2, 16))
    reference = QuantizedGraphReference(qgraph)
    x = np.zeros((2, 16), np.float32)
    x[0] = 0.75
    x[1] = -1.5
    got = lowered.run(x)
    np.testing.assert_array_equal(got, reference.run(x)[0])
    scale = [n for n in lowered.nodes if n.op == QLN][0].outputs[0].qparams["scales"][0]
    bias = module.bias.detach().numpy()
    assert np.max(np.abs(got - bias[None, :])) <= 1.01 * scale


def make_graph(x_shape, normalized_rank, attrs, weight=None, bias=None):
    g = cortexm.Graph()
    x = g.add_input("x", list(x_shape), "int8")
    w = None if weight is None else g.add_constant("w", np.asarray(weight, np.int16))
    b = None if bias is None else g.add_constant("b", np.asarray(bias, np.int32))
    g.outputs = [g.call(QLN, [x, w, b], {"normalized_rank": normalized_rank, **attrs})]
    return g


def test_graph_op_matches_the_formula_on_awkward_params():
    rng = np.random.default_rng(7)
    for n, eps_term, product_shift, zp, (mult, shift), lo, hi, affine in [
            (768, 0, 9, 3, (1518500250, -6), -128, 127, True),
            (5, 1 << 60, 0, -128, (2**31 - 1, 30), -100, 120, True),
            (9, 12345, 31, 127, (1073741824, 20), -128, 127, True),
            (1, 0, 0, 0, (1073741824, -12), -128, 127, False),
            (64, 0, 4, -7, (1300000000, -10), -128, 127, False),
            (65536, 3, 10, 0, (1100000000, -12), -128, 127, True)]:
        x = rng.integers(-128, 128, (2, n), dtype=np.int8)
        x[1] = x[1, 0]  # a constant row
        wq = rng.integers(-32767, 32768, n).astype(np.int16) if affine else None
        bq = rng.integers(-2**20, 2**20, n).astype(np.int32) if affine else None
        attrs = {"eps_term": eps_term, "product_shift": product_shift, "output_zero_point": zp,
                 "output_multiplier": mult, "output_shift": shift, "activation_min": lo, "activation_max": hi}
        g = make_graph(x.shape, 1, attrs, wq, bq)
        want = layer_norm(x, 1, None if wq is None else wq.astype(np.int64),
                          None if bq is None else bq.astype(np.int64), eps_term, product_shift, zp, mult,
                          shift, lo, hi)
        np.testing.assert_array_equal(g.run(x), want, err_msg=f"n={n}")


def test_graph_op_rejects_bad_arguments():
    ok = {"eps_term": 0, "product_shift": 0, "output_zero_point": 0, "output_multiplier": 1 << 30,
          "output_shift": 0}
    for bad, match in [({"product_shift": 32}, "product_shift"), ({"eps_term": -1}, "eps_term"),
                       ({"eps_term": (1 << 60) + 1}, "eps_term"), ({"output_shift": 31}, "output_shift"),
                       ({"output_zero_point": 128}, "output_zero_point")]:
        with pytest.raises(ValueError, match=match):
            make_graph((2, 8), 1, {**ok, **bad})
    with pytest.raises(ValueError, match="normalized_rank"):
        make_graph((2, 8), 3, ok)
    with pytest.raises(ValueError, match="row_size"):
        make_graph((1, 65537), 1, ok)
    with pytest.raises(ValueError, match="weight .* must hold 8"):
        make_graph((2, 8), 1, ok, weight=np.ones(7))


def test_program_is_bit_exact_with_the_lowered_graph():
    module = randomize(nn.LayerNorm(48), 6)
    _, lowered = quantize_and_lower(module, (2, 5, 48))
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0
    for (x,) in samples((2, 5, 48), 4, 8):
        assert np.asarray(program.run(x.numpy())).tobytes() == np.asarray(lowered.run(x.numpy())).tobytes()


class Try18LayerNorm(nn.Module):
    """/work/notes/try18.py's 'layernorm' model: a linear, then a hand-written layer norm."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 16)
        self.w, self.b = nn.Parameter(torch.ones(16)), nn.Parameter(torch.zeros(16))

    def forward(self, x):
        x = self.a(x)
        m = x.mean(-1, keepdim=True)
        v = ((x - m) ** 2).mean(-1, keepdim=True)
        return (x - m) / torch.sqrt(v + 1e-5) * self.w + self.b


class EncoderBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 32)
        self.norm = nn.LayerNorm(32)

    def forward(self, x):
        return self.norm(x + torch.relu(self.fc(x)))


@pytest.mark.parametrize("module,shape", [(Try18LayerNorm(), (1, 5, 16)), (EncoderBlock(), (1, 16, 32))],
                         ids=["try18-hand-written", "nn.LayerNorm-block"])
def test_end_to_end_with_no_float_op(module, shape):
    torch.manual_seed(0)
    module = module.eval()
    qgraph, lowered = quantize_and_lower(module, shape)
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0
    assert lowered.op_counts().get(QLN) == 1
    reference = QuantizedGraphReference(qgraph)
    xs = samples(shape, 4, 9)
    got = [np.asarray(program.run(x.numpy())) for (x,) in xs]
    for (x,), g in zip(xs, got):
        np.testing.assert_array_equal(g, reference.run(x.numpy())[0])
    sqnr = sqnr_db(np.concatenate([module(x).detach().numpy() for (x,) in xs]), np.concatenate(got))
    print(f"{type(module).__name__}: SQNR vs float {sqnr:.2f} dB")
    assert sqnr > 25, sqnr


@pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")
def test_hand_written_layer_norm_on_qemu_m55_is_bit_identical_with_the_host():
    from cortexm import qemu

    torch.manual_seed(0)
    shape = (1, 5, 16)
    _, lowered = quantize_and_lower(Try18LayerNorm().eval(), shape)
    assert lowered.op_counts().get(QLN) == 1
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0
    xs = [x.numpy() for (x,) in samples(shape, 3, 12)]
    for got, x in zip(qemu.run_cases(program, xs, "cortex-m55"), xs):
        assert np.asarray(got).tobytes() == np.asarray(program.run(x)).tobytes()


@pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")
@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4"])
def test_layer_norm_on_qemu_is_bit_identical_with_the_host(cpu):
    from cortexm import qemu

    torch.manual_seed(0)
    module = nn.Sequential(nn.Linear(16, 768), nn.LayerNorm(768), nn.Linear(768, 8), nn.LayerNorm(8, bias=False))
    module = randomize(module, 10)
    shape = (1, 3, 16)
    _, lowered = quantize_and_lower(module, shape, target=f"{cpu}+int8")
    assert lowered.op_counts().get(QLN) == 2
    program = cortexm.to_program(lowered, target=f"{cpu}+int8")
    assert program.float_ops == 0
    for (x,) in samples(shape, 2, 11):
        inputs = [x.numpy()]
        result = qemu.run(program, inputs, cpu)
        host = program.run(*inputs)
        host = list(host) if isinstance(host, tuple) else [host]
        for got, want in zip(result.outputs, host):
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


@pytest.mark.skipif(shutil.which("flatc") is None, reason="flatc not installed")
@pytest.mark.parametrize("field,value,match", [
    ("product_shift", 32, "product_shift"), ("eps_term", -1, "eps_term"), ("shift", 31, "output_shift"),
    ("output_offset", 200, "output_offset"), ("normalized_rank", 4, "normalized_rank")])
def test_the_loader_rejects_bad_params_tables(tmp_path, field, value, match):
    from test_program import from_json, to_json

    _, lowered = quantize_and_lower(randomize(nn.LayerNorm(8), 12), (2, 3, 8))
    doc = to_json(cortexm.to_program(lowered).data, tmp_path)
    op = [o for o in doc["ops"] if o["kernel"] == "QuantizedLayerNorm"][0]
    op["params"][field] = value
    with pytest.raises(ValueError, match=match):
        cortexm.Program(from_json(doc, tmp_path))


@pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")
@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4"])
def test_float_fallback_layer_norm_on_qemu_is_bit_identical_with_the_host(cpu):
    module = randomize(nn.LayerNorm(48), 13)
    x = torch.randn(4, 6, 48, generator=torch.Generator().manual_seed(14)) * 3
    program = cortexm.to_program(cortexm.export(module, (x,)), target=f"{cpu}+int8")
    assert program.float_ops == 1
    got = cortexm.run_on_qemu(program, [x.numpy()], cpu=cpu)
    assert got.tobytes() == np.asarray(program.run(x.numpy())).tobytes()
