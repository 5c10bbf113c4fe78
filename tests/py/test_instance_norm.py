"""Instance norm and the 16x8 group / instance norm kernel.

nn.InstanceNorm1d / 2d (F.instance_norm with the input's statistics) export as one
aten.instance_norm graph op (its name, not the aten internal batch norm over an [1, N * C, *] view),
run in float as group norm with one group per channel (the program's GroupNorm float fallback is
bit-exact with the interpreter) and lower to cortex_m.quantized_group_norm (int8) or
cortex_m.quantized_group_norm_s16 (precision="16x8"); GroupNorm lowers to the latter in 16x8 too.
With running statistics (track_running_stats=True, eval) instance norm is batch norm's per-channel
affine. The kernels are checked against an independent Python-integer reference of their
arithmetic (src/ops/group_norm/runtime/group_norm_kernels.h), the programs against the interpreter
on the host and on QEMU's Cortex-M55 and Cortex-M4; the SQNR against torch's float model is
printed (pytest -s) and bounded."""

import math
import shutil

import numpy as np
import pytest

import cortexm
from numpy_reference.common import requantize, wrap_int32
from test_group_norm import deployed_sqnr, randomize, samples

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

IN = "aten.instance_norm.default"
GN = "aten.group_norm.default"
QGN = "cortex_m.quantized_group_norm.default"
QGN16 = "cortex_m.quantized_group_norm_s16.default"
HAS_QEMU = bool(shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++"))
needs_qemu = pytest.mark.skipif(not HAS_QEMU, reason="needs qemu-system-arm and arm-none-eabi-g++ "
                                "(scripts/setup.sh installs them)")


def quantize_and_lower(module, shape, precision="int8", target="cortex-m55+int8", scale=1.0, offset=0.0):
    graph = cortexm.export(module.eval(), samples(shape, 1, 1, scale, offset)[0])
    qgraph = cortexm.quantize(graph, samples(shape, 32, 2, scale, offset), progress=False, precision=precision)
    return qgraph, cortexm.lower(qgraph, target)


# --- export and float ------------------------------------------------------------------------------

class FunctionalInstanceNorm(nn.Module):
    def forward(self, x):
        return F.instance_norm(x, eps=1e-3)


EXPORTED = [  # id, module, input shape, eps, affine
    ("2d", nn.InstanceNorm2d(4), (2, 4, 5, 3), 1e-5, False),
    ("2d-affine", nn.InstanceNorm2d(6, affine=True), (1, 6, 4, 4), 1e-5, True),
    ("1d-affine", nn.InstanceNorm1d(3, affine=True, eps=1e-2), (2, 3, 7), 1e-2, True),
    ("functional", FunctionalInstanceNorm(), (3, 5, 6), 1e-3, False),
]


@pytest.mark.parametrize("name,module,shape,eps,affine", EXPORTED, ids=[c[0] for c in EXPORTED])
def test_exports_as_one_instance_norm_op_and_runs_as_torch(name, module, shape, eps, affine):
    module = randomize(module)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1)) * 3 + 1
    graph = cortexm.export(module, (x,))
    assert [n.op for n in graph.nodes] == [IN]
    node = graph.nodes[0]
    assert node.attrs["eps"] == pytest.approx(eps)
    assert (node.inputs[1] is not None, node.inputs[2] is not None) == (affine, affine)
    np.testing.assert_allclose(graph.run(x.numpy()), module(x).detach().numpy(), atol=1e-5, rtol=1e-5)


def test_unbatched_instance_norm_1d_exports_between_views():
    module = randomize(nn.InstanceNorm1d(3, affine=True))
    x = torch.randn(3, 11, generator=torch.Generator().manual_seed(2))
    graph = cortexm.export(module, (x,))
    assert IN in graph.op_counts()
    np.testing.assert_allclose(graph.run(x.numpy()), module(x).detach().numpy(), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("module,shape", [(nn.InstanceNorm2d(4, affine=True), (2, 4, 5, 3)),
                                          (nn.InstanceNorm1d(3), (1, 3, 9))], ids=["2d-affine", "1d"])
def test_float_fallback_program_is_bit_exact_with_the_graph(module, shape):
    module = randomize(module, 1)
    graph = cortexm.export(module, (torch.randn(*shape),))
    program = cortexm.to_program(graph)
    assert program.float_ops == 1
    assert [op["kernel"] for op in program.ops()] == ["GroupNorm"]
    for seed in range(3):
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * 10 + seed
        assert np.asarray(program.run(x.numpy())).tobytes() == np.asarray(graph.run(x.numpy())).tobytes()


class ConvInstanceNormRunning(nn.Module):
    def __init__(self, fold):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3)
        self.norm = nn.InstanceNorm2d(4, affine=True, track_running_stats=True)
        self.fold = fold

    def forward(self, x):
        y = self.conv(x)
        return self.norm(y if self.fold else torch.relu(y))


@pytest.mark.parametrize("fold", [True, False], ids=["folded-into-conv", "mul-add"])
def test_running_statistics_are_a_per_channel_affine(fold):
    """track_running_stats=True in eval mode: the running mean / var normalize, as batch norm's do."""
    module = randomize(ConvInstanceNormRunning(fold), 4)
    with torch.no_grad():
        module.norm.running_mean.copy_(torch.tensor([0.5, -1.0, 2.0, 0.0]))
        module.norm.running_var.copy_(torch.tensor([0.25, 4.0, 1.0, 9.0]))
    x = torch.randn(2, 2, 6, 5, generator=torch.Generator().manual_seed(5))
    graph = cortexm.export(module, (x,))
    ops = graph.op_counts()
    assert IN not in ops and GN not in ops
    assert ("aten.mul.Tensor" in ops) == (not fold), ops
    np.testing.assert_allclose(graph.run(x.numpy()), module(x).detach().numpy(), atol=1e-5, rtol=1e-5)
    _, lowered = quantize_and_lower(module, (2, 2, 6, 5))
    assert cortexm.to_program(lowered).float_ops == 0


def test_errors_and_the_report_name_instance_norm():
    """A too-large channel stays float with a reason that names instance norm's own remedy (the
    program runs it as the GroupNorm float fallback between quantize / dequantize, bit-exact with
    the lowered graph), and the quantization report's pattern says instance_norm."""
    module = randomize(nn.InstanceNorm2d(2), 6)
    shape = (1, 2, 300, 300)
    qgraph, lowered = quantize_and_lower(module, shape)
    assert lowered.op_counts().get(IN) == 1 and QGN not in lowered.op_counts()
    [node] = [n for n in lowered.nodes if n.op == IN]
    assert "a channel of 90000 values" in node.meta["lowering"], node.meta
    assert "more groups" not in node.meta["lowering"]
    program = cortexm.to_program(lowered)
    assert program.float_ops == 1 and "GroupNorm" in [op["kernel"] for op in program.ops()]
    [(x,)] = samples(shape, 1, 3)
    assert np.asarray(program.run(x.numpy())).tobytes() == np.asarray(lowered.run(x.numpy())).tobytes()
    patterns = {r.pattern for r in cortexm.quantization_report(qgraph).rows if r.op == IN}
    assert patterns == {"instance_norm"}, patterns


# --- the kernels against an independent reference ----------------------------------------------

def reference_norm(q, node, fraction_bits):
    """The kernels' arithmetic (group_norm_kernels.h) in Python integers: q [N, C, *] ints (logical
    order); node: the lowered norm node (attributes, int16 weight and int32 bias constants)."""
    a = node.attrs
    n_batch, channels = q.shape[:2]
    groups = a["num_groups"]
    sets = q.astype(np.int64).reshape(n_batch, groups, -1)
    n = sets.shape[2]
    spatial = n // (channels // groups)

    def per_value(index, default):
        v = node.inputs[index] if len(node.inputs) > index else None
        data = np.full(channels, default, np.int64) if v is None else np.asarray(v.data, np.int64)
        return np.repeat(data.reshape(groups, -1), spatial, axis=1)

    weight, bias = per_value(1, 1), per_value(2, 0)
    out = np.empty_like(sets)
    ps = a["product_shift"]
    for b in range(n_batch):
        for g in range(groups):
            x = sets[b, g]
            total = int(x.sum())
            w = n * int((x * x).sum()) - total * total + a["eps_term"] or 1
            k = (62 - w.bit_length()) // 2  # w * 4^k in [2^60, 2^62)
            root = math.isqrt(w << (2 * k))
            inv = ((1 << 62) + root) // (2 * root)  # 2^61 / root, halves up
            z_shift = 61 - fraction_bits - k
            d = n * x - total
            z = (d * inv + (1 << (z_shift - 1))) >> z_shift
            t = z * weight[g]
            if ps:
                t = (t + (1 << (ps - 1))) >> ps
            acc = wrap_int32(wrap_int32(t) + bias[g])
            v = wrap_int32(requantize(acc, a["output_multiplier"], a["output_shift"]) + a["output_zero_point"])
            out[b, g] = np.clip(v, a["activation_min"], a["activation_max"])
    return out.reshape(q.shape)


def norm_node(lowered):
    [node] = [n for n in lowered.nodes if n.op in (QGN, QGN16)]
    return node


def kernel_inputs(node, shape, dtype, seed):
    """Integer inputs for the lowered node: random, constant sets, and the dtype's extremes."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    cases = [rng.integers(info.min, info.max + 1, shape).astype(dtype),
             np.clip(rng.normal(0, info.max / 8, shape), info.min, info.max).astype(dtype),
             np.full(shape, 7, dtype)]
    extremes = np.full(shape, info.min, dtype)
    extremes.reshape(shape[0], -1)[:, ::3] = info.max
    return cases + [extremes]


def kernel_program(node, shape, dtype):
    """The lowered node alone, on an integer input: a graph the interpreter runs and its program."""
    g = cortexm.Graph()
    x = g.add_input("q", list(shape), dtype)
    consts = [None if v is None else g.add_constant(v.name, np.asarray(v.data)) for v in node.inputs[1:]]
    g.outputs = [g.call(node.op, [x, *consts], dict(node.attrs))]
    return g, cortexm.to_program(g)


KERNEL_CASES = [  # id, module, input shape, precision
    ("group-int8", nn.GroupNorm(3, 12), (2, 12, 5, 4), "int8"),
    ("instance-int8", nn.InstanceNorm2d(5, affine=True), (2, 5, 6, 7), "int8"),
    ("group-16x8", nn.GroupNorm(4, 8), (2, 8, 7, 3), "16x8"),
    ("instance-16x8", nn.InstanceNorm1d(6, affine=True), (3, 6, 33), "16x8"),
    ("instance-16x8-not-affine", nn.InstanceNorm2d(3), (1, 3, 9, 9), "16x8"),
    ("group-16x8-large-set", nn.GroupNorm(1, 2), (1, 2, 128, 128), "16x8"),
]


@pytest.mark.parametrize("name,module,shape,precision", KERNEL_CASES, ids=[c[0] for c in KERNEL_CASES])
def test_kernels_match_the_independent_reference(name, module, shape, precision):
    _, lowered = quantize_and_lower(randomize(module, 7), shape, precision)
    node = norm_node(lowered)
    assert node.op == (QGN16 if precision == "16x8" else QGN)
    dtype = np.int16 if precision == "16x8" else np.int8
    graph, program = kernel_program(node, shape, dtype)
    fraction_bits = 16 if precision == "16x8" else 12
    for q in kernel_inputs(node, shape, dtype, 8):
        want = reference_norm(q, node, fraction_bits).astype(dtype)
        got = np.asarray(graph.run(q))
        assert got.dtype == dtype and got.tobytes() == want.tobytes(), name
        assert np.asarray(program.run(q)).tobytes() == want.tobytes(), name


def test_16x8_channels_last_kernel_equals_the_reference():
    """A conv's channels-last int16 output read in place: the program's kernel (channels-last bytes)
    equals the interpreter (logical data)."""
    module = ConvNormsRelu().eval()
    _, lowered = quantize_and_lower(module, SHAPE, "16x8")
    nodes = [n for n in lowered.nodes if n.op == QGN16]
    assert len(nodes) == 2 and all(tuple(n.inputs[0].dim_order) == (0, 2, 3, 1) for n in nodes)
    program = cortexm.to_program(lowered)
    for (x,) in samples(SHAPE, 3, 4):
        assert np.asarray(program.run(x.numpy())).tobytes() == np.asarray(lowered.run(x.numpy())).tobytes()


def test_16x8_graph_op_rejects_bad_arguments():
    ok = {"num_groups": 2, "eps_term": 0, "product_shift": 4, "output_multiplier": 1 << 30, "output_shift": 0}

    def make(shape, attrs, dtype="int16"):
        g = cortexm.Graph()
        x = g.add_input("x", list(shape), dtype)
        g.outputs = [g.call(QGN16, [x, None, None], attrs)]
        return g

    make((1, 4, 8), ok)
    for bad, match in [({"output_zero_point": 1}, "output_zero_point"), ({"activation_min": -32769}, "activation_min"),
                       ({"activation_max": 32768}, "activation_max"), ({"product_shift": 32}, "product_shift"),
                       ({"num_groups": 3}, "num_groups")]:
        with pytest.raises(ValueError, match=match):
            make((1, 4, 8), {**ok, **bad})
    with pytest.raises(ValueError, match="group_size.*32768 for int16"):
        make((1, 1, 32769), {**ok, "num_groups": 1})
    with pytest.raises(ValueError, match="int16"):
        make((1, 4, 8), ok, "int8")


@pytest.mark.skipif(shutil.which("flatc") is None, reason="flatc not installed")
@pytest.mark.parametrize("field,value,match", [
    ("output_offset", 1, "output_offset"), ("activation_min", -40000, "activation"),
    ("activation_max", 40000, "activation"), ("num_groups", 3, "num_groups"), ("eps_term", -1, "eps_term")])
def test_the_loader_rejects_bad_16x8_params_tables(tmp_path, field, value, match):
    from test_program import from_json, to_json

    _, lowered = quantize_and_lower(randomize(nn.GroupNorm(4, 8), 12), (2, 8, 3, 3), "16x8")
    doc = to_json(cortexm.to_program(lowered).data, tmp_path)
    op = [o for o in doc["ops"] if o["kernel"] == "QuantizedGroupNormS16"][0]
    op["params"][field] = value
    with pytest.raises(ValueError, match=match):
        cortexm.Program(from_json(doc, tmp_path))


@pytest.mark.skipif(shutil.which("flatc") is None, reason="flatc not installed")
def test_the_loader_rejects_a_16x8_group_too_large(tmp_path):
    """The int8 kernel takes sets up to 65536 values, the int16 one up to 32768: the loader checks the
    int16 bound."""
    from test_program import from_json, to_json

    _, lowered = quantize_and_lower(randomize(nn.GroupNorm(2, 2), 12), (1, 2, 129, 129), "16x8")
    doc = to_json(cortexm.to_program(lowered).data, tmp_path)
    op = [o for o in doc["ops"] if o["kernel"] == "QuantizedGroupNormS16"][0]
    op["params"]["num_groups"] = 1  # one set of 2 * 129 * 129 = 33282 values
    with pytest.raises(ValueError, match="group_size"):
        cortexm.Program(from_json(doc, tmp_path))


# --- models: int8 and 16x8, host and QEMU ----------------------------------------------------------

class ConvNormsRelu(nn.Module):
    """conv -> GroupNorm -> relu -> conv -> InstanceNorm2d (affine) -> conv: both norms on a conv's
    channels-last output, one with a folded relu."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.group = nn.GroupNorm(2, 8)
        self.conv2 = nn.Conv2d(8, 6, 3, padding=1)
        self.instance = nn.InstanceNorm2d(6, affine=True)
        self.conv3 = nn.Conv2d(6, 4, 1)
        randomize(self.group, 1)
        randomize(self.instance, 2)

    def forward(self, x):
        y = torch.relu(self.group(self.conv1(x)))
        return self.conv3(self.instance(self.conv2(y)))


class Denoiser1d(nn.Module):
    """A 1-D denoiser: conv -> InstanceNorm1d -> relu -> conv -> GroupNorm (not affine) -> conv."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.conv1 = nn.Conv1d(2, 8, 5, padding=2)
        self.instance = nn.InstanceNorm1d(8, affine=True)
        self.conv2 = nn.Conv1d(8, 8, 3, padding=1)
        self.group = nn.GroupNorm(4, 8, affine=False)
        self.conv3 = nn.Conv1d(8, 2, 1)
        randomize(self.instance, 3)

    def forward(self, x):
        y = torch.relu(self.instance(self.conv1(x)))
        return self.conv3(self.group(self.conv2(y)))


SHAPE = (1, 3, 10, 9)
MODELS = [("conv-norms-2d", ConvNormsRelu, SHAPE), ("denoiser-1d", Denoiser1d, (2, 2, 40))]


@pytest.mark.parametrize("precision", ["int8", "16x8"])
@pytest.mark.parametrize("name,make,shape", MODELS, ids=[m[0] for m in MODELS])
def test_models_deploy_with_no_float_op_bit_exact(name, make, shape, precision):
    module = make().eval()
    _, lowered = quantize_and_lower(module, shape, precision)
    counts = lowered.op_counts()
    norm_op = QGN16 if precision == "16x8" else QGN
    assert counts.get(norm_op) == 2 and IN not in counts and GN not in counts, counts
    sqnr = deployed_sqnr(module, lowered, shape)
    print(f"{name} {precision}: SQNR vs torch float {sqnr:.2f} dB")
    assert sqnr > (35 if precision == "16x8" else 20), sqnr


def qemu_matches_the_host(cpu, target):
    """ConvNormsRelu in int8 and in 16x8, lowered for cpu's target, runs bit-identically on QEMU."""
    from cortexm import qemu

    module = ConvNormsRelu().eval()
    xs = [x.numpy() for (x,) in samples(SHAPE, 3, 12)]
    for precision, norm_op in (("int8", QGN), ("16x8", QGN16)):
        _, lowered = quantize_and_lower(module, SHAPE, precision, target)
        program = cortexm.to_program(lowered, target=target)
        assert program.float_ops == 0 and lowered.op_counts().get(norm_op) == 2
        for got, x in zip(qemu.run_cases(program, xs, cpu), xs):
            assert np.asarray(got).tobytes() == np.asarray(program.run(x)).tobytes(), (cpu, precision)


@needs_qemu
def test_group_and_instance_norm_on_qemu_m55_are_bit_identical_with_the_host():
    qemu_matches_the_host("cortex-m55", "cortex-m55+int8")


@needs_qemu
def test_group_and_instance_norm_on_qemu_m4_are_bit_identical_with_the_host():
    qemu_matches_the_host("cortex-m4", "cortex-m4+int8")
