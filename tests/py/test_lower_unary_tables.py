"""Issue 18's elementwise ops: leaky_relu, elu (and celu / selu, which export as elus), exp, log,
rsqrt, neg, reciprocal, softplus, mish and prelu export as graph ops, run as float fallback in a
program when not quantized (the FloatUnary kernel, bit-identical with the interpreter), and lower
to cortex_m.quantized_activation (int8: a 256-entry table of the op's float kernel, bit-exact with
the numpy reference) or quantized_activation_s16 (16x8). A per-channel prelu lowers to int8 relu /
clamp / mul / add; x / y (y computed at run time) to a reciprocal table and quantized_mul."""

import shutil

import numpy as np
import pytest

import cortexm
from numpy_reference.quantized_graph import QuantizedGraphReference

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

TABLE = "cortex_m.quantized_activation.default"
TABLE_S16 = "cortex_m.quantized_activation_s16.default"
INT16 = cortexm.CortexMQuantizer(activation_dtype="int16")
QEMU = pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                          reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def positive(fn):
    """fn on |x| + 0.05: log, rsqrt and reciprocal see positive inputs only (abs and the add
    are tables too)."""
    return lambda x: fn(x.abs() + 0.05)


# name: (function, the graph op it exports as)
OPS = {
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.173), "aten.leaky_relu.default"),
    "leaky_relu_default": (F.leaky_relu, "aten.leaky_relu.default"),
    "elu": (lambda x: F.elu(x, 0.61), "aten.elu.default"),
    "celu": (lambda x: F.celu(x, 1.7), "aten.elu.default"),
    "selu": (F.selu, "aten.elu.default"),
    "exp": (torch.exp, "aten.exp.default"),
    "log": (positive(torch.log), "aten.log.default"),
    "rsqrt": (positive(torch.rsqrt), "aten.rsqrt.default"),
    "neg": (torch.neg, "aten.neg.default"),
    "reciprocal": (positive(torch.reciprocal), "aten.reciprocal.default"),
    "softplus": (lambda x: F.softplus(x, beta=2.5, threshold=3.0), "aten.softplus.default"),
    "mish": (F.mish, "aten.mish.default"),
    "prelu_one_slope": (nn.PReLU(init=0.3), "aten.leaky_relu.default"),
}


def samples(n, seed, shapes=((3, 5, 7),), amplitude=2.5):
    g = torch.Generator().manual_seed(seed)
    return [tuple(torch.randn(*s, generator=g) * amplitude for s in shapes) for _ in range(n)]


def export(module, shapes=((3, 5, 7),)):
    return cortexm.export(module.eval(), samples(1, 1, shapes)[0])


def lower(module, shapes=((3, 5, 7),), quantizer=None):
    graph = export(module, shapes)
    qgraph = cortexm.quantize(graph, samples(8, 2, shapes), quantizer, progress=False)
    return graph, qgraph, cortexm.lower(qgraph, "cortex-m55+int8")


def module_of(name):
    fn = OPS[name][0]
    return fn if isinstance(fn, nn.Module) else Fn(fn)


def as_tuple(v):
    return v if isinstance(v, tuple) else (v,)


@pytest.mark.parametrize("name", sorted(OPS))
def test_exported_op_matches_torch_in_float(name):
    module, op = module_of(name), OPS[name][1]
    graph = export(module)
    assert graph.op_counts().get(op, 0) == 1, graph.op_counts()
    for (x,) in samples(3, 7):
        want = module(x).detach().numpy()
        # Transcendental functions in double rounded once (torch's float32 libm differs by an ulp).
        np.testing.assert_allclose(graph.run(x.numpy()), want, rtol=3e-7, atol=1e-30)


@pytest.mark.parametrize("name", sorted(OPS))
def test_int8_lowers_to_tables_bit_exact_with_the_reference(name):
    _, qgraph, lowered = lower(module_of(name))
    counts = lowered.op_counts()
    assert OPS[name][1] not in counts and counts.get(TABLE, 0) >= 1, counts
    assert not [op for op in counts if op.startswith("aten.") and "copy" not in op], counts
    reference = QuantizedGraphReference(qgraph)
    assert reference.integer_ops.count(TABLE) == counts[TABLE]
    for (x,) in samples(4, 3, amplitude=4.0):
        np.testing.assert_array_equal(lowered.run(x.numpy()), reference.run(x.numpy())[0])


@pytest.mark.parametrize("name", ["elu", "softplus", "mish", "exp", "reciprocal", "leaky_relu"])
def test_16x8_lowers_to_interpolated_tables_bit_exact_with_the_reference(name):
    _, qgraph, lowered = lower(module_of(name), quantizer=INT16)
    counts = lowered.op_counts()
    assert OPS[name][1] not in counts and counts.get(TABLE_S16, 0) >= 1, counts
    reference = QuantizedGraphReference(qgraph)
    assert reference.integer_ops.count(TABLE_S16) == counts[TABLE_S16]
    for (x,) in samples(4, 3):
        np.testing.assert_array_equal(lowered.run(x.numpy()), reference.run(x.numpy())[0])


class AllTables(nn.Module):
    """Every new table op in one model."""

    def forward(self, x):
        a = F.leaky_relu(x, 0.2) + F.elu(x, 0.8)
        b = F.softplus(x, 1.5) * F.mish(x)
        c = torch.exp(-x.abs()) + torch.log(x.abs() + 0.1) - torch.rsqrt(x * x + 0.5)
        return torch.cat([a, b, c, torch.neg(x), torch.reciprocal(x.abs() + 0.25)], dim=1)


def test_program_runs_the_tables_bit_exact_with_the_lowered_graph():
    _, _, lowered = lower(AllTables())
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0
    for (x,) in samples(3, 5):
        got, want = as_tuple(program.run(x.numpy())), as_tuple(lowered.run(x.numpy()))
        assert all(a.dtype == b.dtype and a.tobytes() == b.tobytes() for a, b in zip(got, want))


class FloatOps(nn.Module):
    """Every new op with nothing else a program could not hold in float (log, rsqrt and
    reciprocal read exp's positive output)."""

    def forward(self, x):
        e = torch.exp(x)
        return torch.cat([F.leaky_relu(x, 0.2), F.elu(x, 0.8), F.selu(x), F.celu(x, 0.4),
                          F.softplus(x, 1.5, 2.0), F.mish(x), e, torch.log(e), torch.rsqrt(e),
                          torch.neg(x), torch.reciprocal(e)], dim=1)


def test_float_program_runs_the_ops_bit_exact_with_the_graph():
    """Not quantized: each op is the FloatUnary float fallback with its constants."""
    graph = export(FloatOps())
    program = cortexm.to_program(graph)
    assert program.float_ops == 11
    for (x,) in samples(3, 5):
        got, want = as_tuple(program.run(x.numpy())), as_tuple(graph.run(x.numpy()))
        assert all(a.tobytes() == b.tobytes() for a, b in zip(got, want))


@QEMU
def test_tables_and_float_fallback_on_qemu_are_bit_identical_with_the_host():
    from cortexm import qemu

    _, _, lowered = lower(AllTables())
    x = samples(1, 6)[0][0].numpy()
    for program in (cortexm.to_program(lowered, target="cortex-m55+int8"),
                    cortexm.to_program(export(FloatOps()), target="cortex-m55+int8")):
        result = qemu.run(program, [x], "cortex-m55")
        host = as_tuple(program.run(x))
        assert len(result.outputs) == len(host)
        for got, want in zip(result.outputs, host):
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


# --- prelu with a slope per channel ------------------------------------------------------------


class ConvPrelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 5, 3, padding=1)
        self.act = nn.PReLU(5)
        with torch.no_grad():
            self.act.weight.copy_(torch.tensor([0.25, -0.5, 0.0, 1.3, 0.07]))

    def forward(self, x):
        return self.act(self.conv(x))


def test_per_channel_prelu_is_exact_in_float_and_lowers_to_int8_ops():
    shapes = ((2, 3, 6, 5),)
    module = ConvPrelu()
    graph, qgraph, lowered = lower(module, shapes)
    counts = graph.op_counts()
    assert counts.get("aten.relu.default") == 1 and counts.get("aten.clamp.default") == 1, counts
    # The decomposition gives torch's float32 values (on the same input: the conv is not torch's).
    prelu = module.act.eval()
    float_graph = export(prelu, ((2, 5, 6, 5),))
    assert float_graph.op_counts().get("aten.mul.Tensor") == 1
    for (x,) in samples(2, 4, ((2, 5, 6, 5),)):
        x = x.clone()
        x[0, :, 0, 0] = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan")])
        want = prelu(x).detach().numpy()
        np.testing.assert_array_equal(float_graph.run(x.numpy()), want)
    lowered_counts = lowered.op_counts()
    assert not [op for op in lowered_counts if op.startswith("aten.") and "copy" not in op], lowered_counts
    assert lowered_counts.get("cortex_m.quantized_mul.default") == 1, lowered_counts
    reference = QuantizedGraphReference(qgraph)
    for (x,) in samples(3, 3, shapes):
        np.testing.assert_array_equal(lowered.run(x.numpy()), reference.run(x.numpy())[0])
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0


def test_prelu_with_a_weight_computed_at_run_time_is_refused():
    with pytest.raises(NotImplementedError, match=r"prelu.*weight computed at run time"):
        export(Fn(lambda x, w: torch.prelu(x, w.abs())), ((2, 3, 4), (3,)))


# --- bad attributes -----------------------------------------------------------------------------


@pytest.mark.parametrize("op, attrs, match", [
    ("aten.softplus.default", {"beta": 0.0, "threshold": 20.0}, r"'beta' = 0\.0+ must be finite and not 0"),
    ("aten.softplus.default", {"beta": 1.0, "threshold": float("nan")}, "'threshold' = nan"),
    ("aten.elu.default", {"alpha": float("inf"), "scale": 1.0, "input_scale": 1.0}, "'alpha' = inf"),
    ("aten.leaky_relu.default", {"negative_slope": float("nan")}, "'negative_slope' = nan"),
])
def test_bad_attributes_name_node_and_attribute(op, attrs, match):
    g = cortexm.Graph()
    x = g.add_input("x", [4])
    with pytest.raises(ValueError, match=match) as e:
        g.call(op, [x], attrs, name="act")
    assert "act" in str(e.value)


def test_celu_with_alpha_zero_is_refused():
    with pytest.raises(NotImplementedError, match="alpha=0"):
        export(Fn(lambda x: torch.ops.aten.celu.default(x, 0.0)))


# --- x / y, y computed at run time -------------------------------------------------------------


class Divide(nn.Module):
    def forward(self, x, y):
        return x / (y.abs() + 0.5)


def test_division_by_an_activation_lowers_to_reciprocal_table_and_mul():
    shapes = ((4, 9), (4, 9))
    graph, qgraph, lowered = lower(Divide(), shapes)
    assert graph.op_counts().get("aten.div.Tensor") == 1
    counts = lowered.op_counts()
    assert "aten.div.Tensor" not in counts and counts.get("cortex_m.quantized_mul.default") == 1, counts
    reference = QuantizedGraphReference(qgraph)
    want, got = [], []
    for x, y in samples(6, 3, shapes):
        out = lowered.run(x.numpy(), y.numpy())
        np.testing.assert_array_equal(out, reference.run(x.numpy(), y.numpy())[0])
        got.append(np.asarray(out, np.float64))
        want.append((x / (y.abs() + 0.5)).numpy().astype(np.float64))
    want, got = np.concatenate(want), np.concatenate(got)
    sqnr = 10 * np.log10(np.sum(want ** 2) / np.sum((want - got) ** 2))
    print(f"x / (|y| + 0.5) int8 SQNR against float: {sqnr:.1f} dB")
    assert sqnr > 28, sqnr  # measured 31.3 dB; see docs/lowering.md
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0


def test_quantize_leaves_the_float_graph_as_it_was():
    graph = export(Divide(), ((4, 9), (4, 9)))
    cortexm.quantize(graph, samples(2, 2, ((4, 9), (4, 9))), progress=False)
    assert graph.op_counts().get("aten.div.Tensor") == 1
