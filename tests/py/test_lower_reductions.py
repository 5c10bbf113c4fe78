"""Issue 18's reductions: aten.sum.dim_IntList exports, runs as the Sum float fallback (summed in
double, bit-identical with the interpreter) and lowers to cortex_m.quantized_mean with the
multiplier of s_in / s_out (TFLite's SUM: no 1/count fold), bit-exact with the numpy reference.
aten.amax / amin export, run as FloatAmax / FloatAmin, and lower to cortex_m.quantized_amax /
quantized_amin on the int8 / int16 values at the input's qparams (exact), run by the Amax / Amin
kernels, on QEMU's M55 too. aten.argmax / argmin export, run as FloatArgmax / FloatArgmin
(torch's first index, NaN first) and lower to cortex_m.quantized_argmax / quantized_argmin on the int8 / int16
values (the same index: a positive scale keeps order and ties), run by the Argmax / Argmin kernels."""

import shutil

import numpy as np
import pytest

import cortexm
from numpy_reference.quantized_graph import QuantizedGraphReference

torch = pytest.importorskip("torch")
nn = torch.nn

MEAN = "cortex_m.quantized_mean.default"


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class ConvSum(nn.Module):
    """A sum over H, W of a conv's output (NHWC in the lowered graph) and over channels."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return y.sum(dim=(2, 3)) * 0.01, y.sum(dim=1, keepdim=True)


SUMS = {
    "last_dim": (Fn(lambda x: x.sum(-1)), (3, 5, 7)),
    "middle_keepdim": (Fn(lambda x: x.sum(1, keepdim=True)), (2, 9, 4)),
    "two_dims": (Fn(lambda x: x.sum((1, -1))), (3, 5, 7)),
    "everything": (Fn(lambda x: x.sum()), (4, 11)),
    "conv": (ConvSum(), (1, 3, 6, 5)),
}


def samples(n, seed, shape, amplitude=2.0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(*shape, generator=g) * amplitude,) for _ in range(n)]


def lower(module, shape):
    graph = cortexm.export(module.eval(), samples(1, 1, shape)[0])
    qgraph = cortexm.quantize(graph, samples(8, 2, shape), progress=False)
    return graph, qgraph, cortexm.lower(qgraph, "cortex-m55+int8")


def as_tuple(v):
    return v if isinstance(v, tuple) else (v,)


def check_integer_lowering(qgraph, lowered, shape):
    """lowered == the numpy reference, and its program (no float op) == lowered."""
    reference = QuantizedGraphReference(qgraph)
    for (x,) in samples(4, 3, shape):
        for got, want in zip(as_tuple(lowered.run(x.numpy())), reference.run(x.numpy())):
            np.testing.assert_array_equal(got, want)
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0
    for (x,) in samples(2, 4, shape):
        for got, want in zip(as_tuple(program.run(x.numpy())), as_tuple(lowered.run(x.numpy()))):
            assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("name", sorted(SUMS))
def test_sum_lowers_to_quantized_mean_bit_exact_with_the_reference(name):
    module, shape = SUMS[name]
    graph, qgraph, lowered = lower(module, shape)
    assert graph.op_counts().get("aten.sum.dim_IntList", 0) >= 1
    for (x,) in samples(2, 5, shape):
        for got, want in zip(as_tuple(graph.run(x.numpy())), as_tuple(module(x))):
            np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-5, atol=1e-5)
    counts = lowered.op_counts()
    assert "aten.sum.dim_IntList" not in counts and counts.get(MEAN, 0) >= 1, counts
    assert QuantizedGraphReference(qgraph).integer_ops.count(MEAN) == counts[MEAN]
    check_integer_lowering(qgraph, lowered, shape)


def test_float_sum_program_is_bit_identical_with_the_graph():
    module, shape = SUMS["two_dims"]
    graph = cortexm.export(module.eval(), samples(1, 1, shape)[0])
    program = cortexm.to_program(graph)
    assert program.float_ops == 1
    for (x,) in samples(3, 6, shape, amplitude=1e3):
        assert np.asarray(program.run(x.numpy())).tobytes() == np.asarray(graph.run(x.numpy())).tobytes()


def test_sum_over_dims_apart_in_memory_stays_float_with_the_reason():
    """As a mean: the kernel reduces one block of dims; (0, 2) of a contiguous [3, 5, 7] is not."""
    shape = (3, 5, 7)
    graph, qgraph, lowered = lower(Fn(lambda x: x.sum((0, 2))), shape)
    node = next(n for n in lowered.nodes if n.op == "aten.sum.dim_IntList")
    assert "one block in the input's memory order" in node.meta["lowering"]
    program = cortexm.to_program(lowered)
    assert program.float_ops == 1
    reference = QuantizedGraphReference(qgraph)
    for (x,) in samples(2, 3, shape):
        np.testing.assert_array_equal(lowered.run(x.numpy()), reference.run(x.numpy())[0])
        assert np.asarray(program.run(x.numpy())).tobytes() == np.asarray(lowered.run(x.numpy())).tobytes()


def test_sum_with_an_integer_dtype_is_refused():
    with pytest.raises(NotImplementedError, match=r"sum.*dtype=torch.int32"):
        cortexm.export(Fn(lambda x: x.sum(1, dtype=torch.int32)).eval(), samples(1, 1, (2, 3))[0])


def test_sum_with_a_repeated_dim_names_node_and_attribute():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3])
    with pytest.raises(ValueError, match=r"total.*'dim' = \[1, -1\] names dim 1 more than once"):
        g.call("aten.sum.dim_IntList", [x], {"dim": [1, -1], "keepdim": False}, name="total")


# --- amax / amin ---------------------------------------------------------------------------------


class ConvExtrema(nn.Module):
    """amax over H, W of a conv's (channels-last) output, amin over channels."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return y.amax(dim=(2, 3)), y.amin(dim=1, keepdim=True)


EXTREMA = {
    "amax_last": (Fn(lambda x: x.amax(-1)), (3, 5, 7)),
    "amin_keepdim": (Fn(lambda x: x.amin((1, 2), keepdim=True)), (2, 9, 4)),
    "amax_apart": (Fn(lambda x: x.amax((0, 2))), (3, 5, 7)),
    "amin_everything": (Fn(lambda x: torch.amin(x, dim=())), (4, 11)),
    "conv": (ConvExtrema(), (1, 3, 6, 5)),
}
EXTREMUM_OPS = ("aten.amax.default", "aten.amin.default")
LOWERED_EXTREMUM_OPS = ("cortex_m.quantized_amax.default", "cortex_m.quantized_amin.default")


@pytest.mark.parametrize("name", sorted(EXTREMA))
def test_amax_amin_lower_to_integer_ops_bit_exact_with_the_reference(name):
    module, shape = EXTREMA[name]
    graph, qgraph, lowered = lower(module, shape)
    for (x,) in samples(2, 5, shape):
        x[(0,) * len(shape)] = float("nan")
        for got, want in zip(as_tuple(graph.run(x.numpy())), as_tuple(module(x))):
            if name != "conv":  # the conv's float sums are not torch's
                np.testing.assert_array_equal(got, want.detach().numpy())
    assert not [n for n in lowered.nodes if n.op in EXTREMUM_OPS]
    nodes = [n for n in lowered.nodes if n.op in LOWERED_EXTREMUM_OPS]
    assert nodes and all(n.inputs[0].dtype == "int8" and n.outputs[0].dtype == "int8" for n in nodes)
    assert all(n.inputs[0].qparams == n.outputs[0].qparams for n in nodes)
    check_integer_lowering(qgraph, lowered, shape)


def test_amax_in_16x8_runs_on_int16():
    module, shape = EXTREMA["amin_keepdim"]
    graph = cortexm.export(module.eval(), samples(1, 1, shape)[0])
    qgraph = cortexm.quantize(graph, samples(8, 2, shape), cortexm.CortexMQuantizer(activation_dtype="int16"),
                              progress=False)
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    node = next(n for n in lowered.nodes if n.op == "cortex_m.quantized_amin.default")
    assert node.inputs[0].dtype == "int16"
    reference = QuantizedGraphReference(qgraph)
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0
    for (x,) in samples(3, 3, shape):
        np.testing.assert_array_equal(lowered.run(x.numpy()), reference.run(x.numpy())[0])
        assert np.asarray(program.run(x.numpy())).tobytes() == np.asarray(lowered.run(x.numpy())).tobytes()


def test_float_amax_amin_program_is_bit_identical_with_the_graph():
    shape = (3, 5, 7)
    graph = cortexm.export(Fn(lambda x: (x.amax((0, 2)), x.amin(1, keepdim=True))).eval(), samples(1, 1, shape)[0])
    program = cortexm.to_program(graph)
    counts = graph.op_counts()
    assert counts.get("aten.amax.default") == 1 and counts.get("aten.amin.default") == 1
    assert program.float_ops == 2
    for (x,) in samples(3, 6, shape):
        x[1, 2, 3] = float("nan")
        for got, want in zip(as_tuple(program.run(x.numpy())), as_tuple(graph.run(x.numpy()))):
            assert got.tobytes() == want.tobytes()


def test_amax_over_an_empty_dim_names_node_and_dim():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 0, 3])
    with pytest.raises(ValueError, match=r"peak.*empty reduced dim 1"):
        g.call("aten.amax.default", [x], {"dim": [1], "keepdim": False}, name="peak")


@pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")
def test_amax_amin_and_sum_on_qemu_are_bit_identical_with_the_host():
    from cortexm import qemu

    class Reductions(nn.Module):
        def forward(self, x):
            return x.amax(-1), x.amin((0, 2)), x.sum(1)

    shape = (3, 5, 7)
    module = Reductions()
    graph, _, lowered = lower(module, shape)
    x = samples(1, 6, shape)[0][0].numpy()
    programs = (cortexm.to_program(lowered, target="cortex-m55+int8"),
                cortexm.to_program(graph, target="cortex-m55+int8"))
    assert programs[0].float_ops == 0
    assert programs[1].float_ops == 3
    for program in programs:
        result = qemu.run(program, [x], "cortex-m55")
        host = as_tuple(program.run(x))
        assert len(result.outputs) == len(host)
        for got, want in zip(result.outputs, host):
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


# --- argmax / argmin -----------------------------------------------------------------------------


class ConvArgmax(nn.Module):
    """argmax over channels of a conv's (channels-last) output, argmin over every element."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return y.argmax(dim=1), y.argmin()


# On the graph input: the lowered index is np.argmax / np.argmin of the numpy-quantized input.
INDEX_ON_INPUT = {
    "argmax_last": (lambda x: x.argmax(-1), lambda q: q.argmax(-1), (3, 5, 7)),
    "argmin_middle_keepdim": (lambda x: x.argmin(1, keepdim=True), lambda q: q.argmin(1)[:, None], (2, 9, 4)),
    "argmax_every_element": (lambda x: x.argmax(), lambda q: q.argmax(), (4, 11)),
    "argmin_first": (lambda x: torch.argmin(x, dim=0), lambda q: q.argmin(0), (6, 3)),
}
INDEX_OPS = ("aten.argmax.default", "aten.argmin.default")
LOWERED_INDEX_OPS = ("cortex_m.quantized_argmax.default", "cortex_m.quantized_argmin.default")


def quantized_input(qgraph, x):
    """x quantized by the graph's input quantize, in numpy (tests/py/numpy_reference)."""
    from numpy_reference.quantize import quantize_per_tensor

    q = next(n for n in qgraph.nodes if n.op == "quantized_decomposed.quantize_per_tensor.default"
             and n.inputs[0].name == qgraph.inputs[0].name)
    a = q.attrs
    return quantize_per_tensor(x, a["scale"], a["zero_point"], a["quant_min"], a["quant_max"], np.dtype(a["dtype"]))


@pytest.mark.parametrize("precision", ["int8", "16x8"])
@pytest.mark.parametrize("name", sorted(INDEX_ON_INPUT))
def test_argmax_argmin_lower_to_integer_index_ops_equal_to_numpy(name, precision):
    fn, numpy_fn, shape = INDEX_ON_INPUT[name]
    graph = cortexm.export(Fn(fn).eval(), samples(1, 1, shape)[0])
    qgraph = cortexm.quantize(graph, samples(8, 2, shape), cortexm.CortexMQuantizer(precision=precision),
                              progress=False)
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    assert not [n for n in lowered.nodes if n.op in INDEX_OPS]
    (node,) = [n for n in lowered.nodes if n.op in LOWERED_INDEX_OPS]
    assert node.inputs[0].dtype == ("int8" if precision == "int8" else "int16")
    assert node.outputs[0].dtype == "int64" and node.outputs[0].qparams is None
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0
    for (x,) in samples(4, 3, shape, amplitude=0.05):  # small values: quantization makes ties
        x = x.numpy()
        want = numpy_fn(quantized_input(qgraph, x))  # numpy takes the first of equal values
        got = np.asarray(program.run(x))
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, np.asarray(lowered.run(x)))
        np.testing.assert_array_equal(got.reshape(np.shape(want)), want)


def test_argmax_of_a_channels_last_conv_output_is_the_float_graphs_index():
    shape = (1, 3, 6, 5)
    graph, qgraph, lowered = lower(ConvArgmax(), shape)
    assert len([n for n in lowered.nodes if n.op in LOWERED_INDEX_OPS]) == 2
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0
    for (x,) in samples(3, 7, shape):
        for got, want in zip(program.run(x.numpy()), qgraph.run(x.numpy())):
            np.testing.assert_array_equal(got, want)  # an index on the integers == on their dequantized floats


def test_float_argmax_argmin_program_matches_torch_with_ties_and_nan():
    shape = (3, 5, 7)
    module = Fn(lambda x: (x.argmax(-1), x.argmin(1, keepdim=True), x.argmax()))
    graph = cortexm.export(module.eval(), samples(1, 1, shape)[0])
    program = cortexm.to_program(graph)
    assert program.float_ops == 3
    for (x,) in samples(3, 6, shape):
        x[0, 1, :] = 1.5  # ties: the first index, as torch
        x[2, :, 4] = -3.0
        x[1, 2, 3] = float("nan")  # NaN wins, as torch
        for got, want in zip(program.run(x.numpy()), module(x)):
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, want.numpy())


def test_argmax_over_two_dims_names_node_and_attribute():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3, 4])
    with pytest.raises(ValueError, match=r"best.*'dim' = \[0, 2\] must name one dim or none"):
        g.call("aten.argmax.default", [x], {"dim": [0, 2], "keepdim": False}, name="best")


@pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")
def test_argmax_argmin_on_qemu_are_bit_identical_with_the_host():
    from cortexm import qemu

    shape = (3, 5, 7)
    module = Fn(lambda x: (x.argmax(-1), x.argmin()))
    graph, _, lowered = lower(module, shape)
    x = samples(1, 6, shape)[0][0].numpy()
    programs = (cortexm.to_program(lowered, target="cortex-m55+int8"),
                cortexm.to_program(graph, target="cortex-m55+int8"))
    assert programs[0].float_ops == 0 and programs[1].float_ops == 2
    for program in programs:
        result = qemu.run(program, [x], "cortex-m55")
        host = as_tuple(program.run(x))
        for got, want in zip(result.outputs, host):
            assert got.dtype == want.dtype == np.int64 and got.tobytes() == want.tobytes()
