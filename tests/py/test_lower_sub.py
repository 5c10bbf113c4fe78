"""aten.sub.Tensor lowered to cortex_m.quantized_sub (TFLite Micro's SUB: quantized_add's rescaling,
the second input subtracted): `a - b`, broadcasting, a gate's difference, bit-exact with the numpy
reference built from the quantized graph, within 1 LSB of fake-quant, and the program
bit-identical on the host runtime and on QEMU's Cortex-M55 and M4. (`1 - x`, a constant operand:
tests/py/test_lower_rnn.py.)"""

import shutil

import numpy as np
import pytest

import cortexm
from numpy_reference.elementwise import add_params, sub
from numpy_reference.quantized_graph import QuantizedGraphReference

torch = pytest.importorskip("torch")
nn = torch.nn

SUB = "cortex_m.quantized_sub.default"


class Sub(nn.Module):
    def forward(self, x, y):
        return x - y


class GateDifference(nn.Module):
    """(y - sigmoid(x)) * x: a difference between a gate and an activation."""

    def forward(self, x, y):
        return (y - torch.sigmoid(x)) * x


class SubThenAdd(nn.Module):
    def forward(self, x, y):
        return (x - y) + (y - x * 0.5)


CASES = [  # module, shape of x, shape of y, quantized_sub count
    (Sub(), (2, 3, 5), (2, 3, 5), 1),
    (Sub(), (2, 3, 5), (3, 1), 1),
    (Sub(), (1, 7), (3, 1, 1), 1),
    (GateDifference(), (4, 9), (4, 9), 1),
    (SubThenAdd(), (2, 11), (11,), 2),
]


def samples(shapes, n, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return [tuple(torch.randn(*s, generator=g) * scale for s in shapes) for _ in range(n)]


def lower(module, shapes, target="cortex-m55+int8"):
    graph = cortexm.export(module.eval(), samples(shapes, 1, 1)[0])
    qgraph = cortexm.quantize(graph, samples(shapes, 8, 2), progress=False)
    return qgraph, cortexm.lower(qgraph, target)


@pytest.mark.parametrize("module,shape_x,shape_y,count", CASES,
                         ids=[f"{type(c[0]).__name__}-{c[1]}-{c[2]}" for c in CASES])
def test_sub_lowers_bit_exact_with_the_reference(module, shape_x, shape_y, count):
    qgraph, lowered = lower(module, (shape_x, shape_y))
    counts = lowered.op_counts()
    assert counts.get(SUB) == count, counts
    assert "aten.sub.Tensor" not in counts
    reference = QuantizedGraphReference(qgraph)
    assert reference.integer_ops.count(SUB) == count
    for x, y in samples((shape_x, shape_y), 4, 3):
        got = lowered.run(x.numpy(), y.numpy())
        np.testing.assert_array_equal(got, reference.run(x.numpy(), y.numpy())[0])
        # Within 1 LSB of the fake-quantized graph for a plain subtraction.
        if isinstance(module, Sub):
            out = lowered.outputs[0]
            scale = [n for n in lowered.nodes if n.op == SUB][0].outputs[0].qparams["scales"][0]
            fake = qgraph.run(x.numpy(), y.numpy())
            assert np.max(np.abs(np.asarray(got) - np.asarray(fake))) <= scale * 1.0001, out.name


def test_sub_kernel_matches_tflite_sub_formula():
    """The graph op on awkward qparams against the numpy SUB written from TFLite's formula."""
    rng = np.random.default_rng(5)
    for sa, sb, so, zpa, zpb, zpo in [(0.031, 0.047, 0.061, 17, -9, 3), (0.9, 0.0007, 0.45, -128, 127, -128),
                                      (0.0007, 0.9, 0.45, 127, -128, 127), (0.02, 0.02, 0.02, 0, 0, 0)]:
        a = rng.integers(-128, 128, (3, 1, 5), dtype=np.int8)
        b = rng.integers(-128, 128, (1, 4, 1), dtype=np.int8)
        (ma, sha), (mb, shb), (mo, sho) = add_params(sa, sb, so)
        g = cortexm.Graph()
        x, y = g.add_input("x", [3, 1, 5], "int8"), g.add_input("y", [1, 4, 1], "int8")
        out = g.call(SUB, [x, y], {"self_zero_point": zpa, "self_multiplier": ma, "self_shift": sha,
                                   "other_zero_point": zpb, "other_multiplier": mb, "other_shift": shb,
                                   "output_zero_point": zpo, "output_multiplier": mo, "output_shift": sho,
                                   "activation_min": -100, "activation_max": 120})
        g.outputs = [out]
        want = sub(a, zpa, ma, sha, b, zpb, mb, shb, zpo, mo, sho, -100, 120)
        np.testing.assert_array_equal(g.run(a, b), want)


def test_program_runs_bit_exact_with_the_lowered_graph():
    shapes = ((2, 11), (11,))
    _, lowered = lower(SubThenAdd(), shapes)
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0
    for x, y in samples(shapes, 4, 5):
        got, want = program.run(x.numpy(), y.numpy()), lowered.run(x.numpy(), y.numpy())
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


@pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")
@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4"])
def test_sub_on_qemu_is_bit_identical_with_the_host(cpu):
    from cortexm import qemu

    shapes = ((4, 9), (4, 9))
    _, lowered = lower(GateDifference(), shapes, target=f"{cpu}+int8")
    program = cortexm.to_program(lowered, target=f"{cpu}+int8")
    inputs = [t.numpy() for t in samples(shapes, 1, 6)[0]]
    result = qemu.run(program, inputs, cpu)
    host = program.run(*inputs)
    host = list(host) if isinstance(host, tuple) else [host]
    for got, want in zip(result.outputs, host):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
