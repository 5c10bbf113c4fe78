"""int16 add / mul lowered (CortexMQuantizer(activation_dtype="int16")): aten.add / aten.mul with
int16 inputs and output -> cortex_m.quantized_add_s16 / quantized_mul_s16, a relu after them folded
into their activation range; the lowered output within 1 LSB of the fake-quantized graph and
bit-exact with the numpy reference (multipliers derived independently from the qparams); int8 mixed
with int16 stays float and says why."""

import shutil

import numpy as np
import pytest

import cortexm
from numpy_reference.elementwise import add_s16, add_s16_params, mul_params, mul_s16
from numpy_reference.quantize import dequantize_per_tensor, quantize_per_tensor

torch = pytest.importorskip("torch")
nn = torch.nn

BINARY_S16 = ("cortex_m.quantized_add_s16.default", "cortex_m.quantized_mul_s16.default")


class Add(nn.Module):
    def forward(self, x, y):
        return x + y


class Mul(nn.Module):
    def forward(self, x, y):
        return x * y


class Square(nn.Module):
    def forward(self, x, y):
        return x * x + y


class ReluAfterAdd(nn.Module):
    def forward(self, x, y):
        return torch.relu(x + y)


class ReluAfterMul(nn.Module):
    def forward(self, x, y):
        return torch.relu(x * y)


class Gate(nn.Module):
    """An LSTM cell's c' = f * c + i * g in small, with a broadcast gate."""

    def forward(self, x, y):
        return torch.relu(x * y + y * 0.5 * x)


class Gate16(nn.Module):
    """relu(x * y + x * x) with y broadcast: two muls, an add, a relu."""

    def forward(self, x, y):
        return torch.relu(x * y + x * x)


CASES = [  # module, shape of x, shape of y, expected (add_s16, mul_s16) counts
    (Add(), (2, 3, 5), (2, 3, 5), (1, 0)),
    (Mul(), (2, 3, 5), (2, 3, 5), (0, 1)),
    (Add(), (2, 3, 5), (3, 1), (1, 0)),
    (Mul(), (4, 7), (7,), (0, 1)),
    (Mul(), (1, 7), (3, 1, 1), (0, 1)),
    (Square(), (2, 9), (2, 9), (1, 1)),
    (ReluAfterAdd(), (2, 3, 5), (2, 3, 5), (1, 0)),
    (ReluAfterMul(), (3, 11), (11,), (0, 1)),
    (Gate16(), (3, 11), (11,), (1, 2)),
]


def samples(shapes, n, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return [tuple(torch.randn(*s, generator=g) * scale for s in shapes) for _ in range(n)]


def lower(module, shapes, activation_dtype="int16", **quantizer_args):
    graph = cortexm.export(module.eval(), samples(shapes, 1, 1)[0])
    quantizer = cortexm.CortexMQuantizer(activation_dtype=activation_dtype, **quantizer_args)
    qgraph = cortexm.quantize(graph, samples(shapes, 8, 2), quantizer, progress=False)
    return qgraph, cortexm.lower(qgraph, "cortex-m55+int8")


def first_output(result):
    return np.asarray(result[0] if isinstance(result, (tuple, list)) else result)


def scale_of(value):
    assert value.qparams["zero_points"] == [0]
    return value.qparams["scales"][0]


def numpy_reference(lowered, inputs):
    """The lowered graph's int16 dataflow in numpy; multipliers from the qparams, not the attrs."""
    env = {}
    for value, x in zip(lowered.inputs, inputs):
        env[value.name] = np.asarray(x, np.float32)
    for node in lowered.nodes:
        ins = [env[v.name] for v in node.inputs]
        out = node.outputs[0]
        if node.op == "cortex_m.quantize_per_tensor.default":
            q = out.qparams
            env[out.name] = quantize_per_tensor(ins[0], q["scales"][0], 0, q["quant_min"],
                                                q["quant_max"], np.int16)
        elif node.op == "cortex_m.dequantize_per_tensor.default":
            env[out.name] = dequantize_per_tensor(ins[0], scale_of(node.inputs[0]), 0)
        elif node.op == "cortex_m.quantized_add_s16.default":
            sa, sb, so = (scale_of(v) for v in (*node.inputs, out))
            (ma, sha), (mb, shb), (mo, sho) = add_s16_params(sa, sb, so)
            assert [ma, sha, mb, shb, mo, sho] == [node.attrs[k] for k in (
                "self_multiplier", "self_shift", "other_multiplier", "other_shift",
                "output_multiplier", "output_shift")]
            env[out.name] = add_s16(ins[0], ma, sha, ins[1], mb, shb, mo, sho,
                                    node.attrs["activation_min"], node.attrs["activation_max"])
        elif node.op == "cortex_m.quantized_mul_s16.default":
            m, s = mul_params(*(scale_of(v) for v in (*node.inputs, out)))
            assert (m, s) == (node.attrs["output_multiplier"], node.attrs["output_shift"])
            env[out.name] = mul_s16(ins[0], ins[1], m, s, node.attrs["activation_min"],
                                    node.attrs["activation_max"])
        else:
            raise AssertionError(f"unexpected op {node.op} in the lowered graph")
    return [env[v.name] for v in lowered.outputs]


@pytest.mark.parametrize("module,shape_x,shape_y,counts", CASES,
                         ids=[f"{type(c[0]).__name__}-{c[1]}-{c[2]}" for c in CASES])
def test_int16_binary_lowers_within_one_lsb_and_bit_exact(module, shape_x, shape_y, counts):
    qgraph, lowered = lower(module, (shape_x, shape_y))
    ops = lowered.op_counts()
    assert (ops.get(BINARY_S16[0], 0), ops.get(BINARY_S16[1], 0)) == counts, ops
    assert not [op for op in ops if op.startswith("aten.")], ops  # relu folded, nothing float
    for node in lowered.nodes:
        if node.op in BINARY_S16:
            assert all(v.dtype == "int16" for v in (*node.inputs, *node.outputs))
    dq = next(n for n in lowered.nodes if n.op == "cortex_m.dequantize_per_tensor.default")
    out_scale = scale_of(dq.inputs[0])
    worst, off, total = 0.0, 0, 0
    for x, y in samples((shape_x, shape_y), 6, 3):
        inputs = (x.numpy(), y.numpy())
        got = first_output(lowered.run(*inputs))
        want = numpy_reference(lowered, inputs)[0]
        assert got.dtype == want.dtype and np.array_equal(got, want)
        fake = first_output(qgraph.run(*inputs))
        lsb = np.abs(fake - got) / out_scale
        worst = max(worst, float(lsb.max()))
        off += int(np.count_nonzero(lsb > 0.5))
        total += lsb.size
    assert worst <= 1.0 + 1e-3
    assert off <= 0.1 * total, (off, total)


@pytest.mark.parametrize("module", [ReluAfterAdd(), ReluAfterMul()])
def test_relu_folds_into_the_activation_range(module):
    _, lowered = lower(module, ((2, 3, 5), (2, 3, 5)))
    node = next(n for n in lowered.nodes if n.op in BINARY_S16)
    assert node.attrs["activation_min"] == 0 and node.attrs["activation_max"] >= 32767
    assert node.meta.get("fused_activation") == "aten.relu.default"


def test_int8_binary_lowering_is_unchanged():
    _, lowered = lower(Gate(), ((2, 3, 5), (2, 3, 5)), activation_dtype="int8")
    ops = lowered.op_counts()
    # x * y and (y * 0.5) * x; the scalar scaling is a table (quantized_activation).
    assert ops.get("cortex_m.quantized_mul.default") == 2 and ops.get("cortex_m.quantized_add.default") == 1
    assert not [op for op in ops if op in BINARY_S16], ops


def test_int8_mixed_with_int16_stays_float_and_says_why():
    _, lowered = lower(Add(), ((2, 3, 5), (2, 3, 5)), activation_dtype="int8",
                       int16_activations=("x",))
    add = next(n for n in lowered.nodes if n.op == "aten.add.Tensor")
    assert "self is int16, other int8" in add.meta["lowering"], add.meta
    assert "int16 add / mul kernels take int16 on all three" in add.meta["lowering"]


def test_silero_lstm_add_and_mul_lower_to_the_int16_ops():
    import zoo

    _, _, calibration, graph = zoo.exported("silero_vad")
    quantizer = cortexm.CortexMQuantizer(activation_dtype="int16", fuse_magnitude=True)
    lowered = cortexm.lower(cortexm.quantize(graph, calibration(2), quantizer, progress=False),
                            "cortex-m55+int8")
    ops = lowered.op_counts()
    assert "aten.add.Tensor" not in ops and "aten.mul.Tensor" not in ops, ops
    # The LSTM cell: c' = f * c + i * g, h' = o * tanh(c'), and the gates' two linears' sum.
    assert ops.get(BINARY_S16[0]) == 2 and ops.get(BINARY_S16[1]) == 3, ops


@pytest.mark.parametrize("module,shapes", [(Square(), ((2, 9), (2, 9))), (ReluAfterMul(), ((3, 11), (11,))),
                                           (Add(), ((2, 3, 5), (3, 1)))],
                         ids=["square-add", "mul-relu", "add-broadcast"])
def test_program_runs_bit_exact_with_the_lowered_graph(module, shapes):
    _, lowered = lower(module, shapes)
    inputs = tuple(t.numpy() for t in samples(shapes, 1, 4)[0])
    program = cortexm.to_program(lowered, bundle_inputs=inputs)
    assert program.float_ops == 0
    for sample in samples(shapes, 4, 5):
        args = [t.numpy() for t in sample]
        got, want = program.run(*args), lowered.run(*args)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        assert all(a.dtype == b.dtype and a.tobytes() == b.tobytes() for a, b in zip(got, want))
    assert program.verify() == 1


@pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")
@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4"])
def test_int16_add_and_mul_on_qemu_are_bit_identical_with_the_host(cpu):
    from cortexm import qemu

    shapes = ((3, 11), (11,))
    qgraph, lowered = lower(Gate16(), shapes)
    assert lowered.op_counts().get(BINARY_S16[1]) == 2, lowered.op_counts()
    program = cortexm.to_program(cortexm.lower(qgraph, f"{cpu}+int8"))
    inputs = [t.numpy() for t in samples(shapes, 1, 6)[0]]
    result = qemu.run(program, inputs, cpu)
    host = program.run(*inputs)
    host = list(host) if isinstance(host, tuple) else [host]
    assert len(result.outputs) == len(host)
    for got, want in zip(result.outputs, host):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
