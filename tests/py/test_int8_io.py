"""to_program(io="int8"): the program takes and gives the int8 tensors at the graph's quantize /
dequantize boundary, bit-exact with the values the float-I/O program computes inside, on the host
and on QEMU's Cortex-M55; each input's and output's scale and zero point are exposed."""

import shutil

import numpy as np
import pytest

import cortexm
from cortexm import qemu

needs_qemu = pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                                reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")

QUANTIZE = "cortex_m.quantize_per_tensor.default"
DEQUANTIZE = "cortex_m.dequantize_per_tensor.default"


def zoo_case(name):
    pytest.importorskip("torch")
    import zoo

    _, example, _, _ = zoo.exported(name)
    return zoo.lowered(name), [x.numpy() for x in example]


@pytest.fixture(scope="module")
def ds_cnn():
    return zoo_case("ds_cnn")


def boundary(lowered, inputs):
    """The int8 values the interpreter computes at the boundary: [what each input's quantize op
    makes], [what each output's dequantize op reads], and the quantize / dequantize nodes."""
    values = {}
    lowered.run(*inputs, observe=lambda node, outs: values.update(
        {v.name: a for v, a in zip(node.outputs, outs)}))
    quantizes = [v.users[0] for v in lowered.inputs]
    dequantizes = [v.producer for v in lowered.outputs]
    assert all(n.op == QUANTIZE for n in quantizes) and all(n.op == DEQUANTIZE for n in dequantizes)
    return ([values[n.outputs[0].name] for n in quantizes], [values[n.inputs[0].name] for n in dequantizes],
            quantizes, dequantizes)


def as_list(outs):
    return list(outs) if isinstance(outs, tuple) else [outs]


def test_int8_io_is_bit_exact_with_the_float_programs_int8_values(ds_cnn):
    lowered, inputs = ds_cnn
    float_program = cortexm.to_program(lowered)
    program = cortexm.to_program(lowered, io="int8")
    q_in, q_out, quantizes, dequantizes = boundary(lowered, inputs)
    assert program.num_ops == float_program.num_ops - len(quantizes) - len(dequantizes)
    kernels = [op["kernel"] for op in program.ops()]
    assert "QuantizePerTensor" not in kernels and "DequantizePerTensor" not in kernels

    for spec, node in zip(program.inputs, quantizes):
        assert spec["dtype"] == "int8"
        assert (spec["scale"], spec["zero_point"]) == (node.attrs["scale"], node.attrs["zero_point"])
    for spec, node in zip(program.outputs, dequantizes):
        assert spec["dtype"] == "int8"
        assert (spec["scale"], spec["zero_point"]) == (node.attrs["scale"], node.attrs["zero_point"])
    assert all(s["scale"] is None and s["zero_point"] is None for s in float_program.inputs + float_program.outputs)

    got = as_list(program.run(*q_in))
    assert [g.dtype for g in got] == [np.int8] * len(q_out)
    for g, want in zip(got, q_out):
        np.testing.assert_array_equal(g, want)
    # the float program's outputs are exactly these dequantized the way its dequantize kernel does
    for g, want, spec in zip(got, as_list(float_program.run(*inputs)), program.outputs):
        real = (g.astype(np.int32) - spec["zero_point"]).astype(np.float32) * np.float32(spec["scale"])
        assert real.tobytes() == want.tobytes()


def test_float_bundled_inputs_are_quantized_by_the_graphs_own_quantize(ds_cnn):
    lowered, inputs = ds_cnn
    q_in, q_out, _, _ = boundary(lowered, inputs)
    from_float = cortexm.to_program(lowered, io="int8", bundle_inputs=tuple(inputs))
    from_int8 = cortexm.to_program(lowered, io="int8", bundle_inputs=tuple(q_in))
    assert from_float.data == from_int8.data
    (bundled_in, expected), = from_float.bundled()
    np.testing.assert_array_equal(bundled_in[0], q_in[0])
    np.testing.assert_array_equal(expected[0], q_out[0])
    assert from_float.verify() == 1
    assert lowered.inputs[0].dtype == "float32" and lowered.outputs[0].dtype == "float32"  # the graph is untouched


@pytest.mark.parametrize("io", ["INT8", "INT16", "int32", "float32", "", None, 8])
def test_bad_io_values_are_refused_naming_the_argument(ds_cnn, io):
    with pytest.raises(ValueError, match=rf"to_program: io = {repr(io)} must be one of 'float', 'int8', 'int16'"):
        cortexm.to_program(ds_cnn[0], io=io)


def test_a_graph_without_a_quantized_boundary_is_refused_naming_the_tensor():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3], "float32")
    g.outputs = [g.call("aten.relu.default", [x], {})]
    with pytest.raises(ValueError, match=r"io='int8': input 0 'x' \(float32\) is read by '\w+' \(aten.relu.default\)"):
        cortexm.to_program(g, io="int8")

    q = {"scales": [0.05], "zero_points": [3]}
    g = cortexm.Graph()
    a = g.add_input("a", [1, 4], "int8", qparams=q)
    relu = g.call("aten.relu.default", [g.call("cortex_m.dequantize_per_tensor.default", [a], {
        "scale": 0.05, "zero_point": 3, "quant_min": -128, "quant_max": 127, "dtype": "int8"})], {})
    g.outputs = [relu]
    with pytest.raises(ValueError, match=r"io='int8': output 0 '\w+' \(float32\) is made by '\w+' \(aten.relu.default\)"):
        cortexm.to_program(g, io="int8")


def test_int8_inputs_and_outputs_stay():
    q = {"scales": [0.05], "zero_points": [3]}
    g = cortexm.Graph()
    a = g.add_input("a", [1, 3, 4, 5], "int8", qparams=q)
    g.outputs = [g.call("dim_order_ops._clone_dim_order.default", [a], {"dim_order": [0, 2, 3, 1]})]
    x = np.random.default_rng(2).integers(-128, 128, (1, 3, 4, 5)).astype(np.int8)
    program = cortexm.to_program(g, io="int8", bundle_inputs=(x,))
    assert program.data == cortexm.to_program(g, bundle_inputs=(x,)).data
    assert (program.inputs[0]["scale"], program.inputs[0]["zero_point"]) == (0.05, 3)


@needs_qemu
def test_int8_io_runs_bit_exact_on_qemu_m55(ds_cnn):
    lowered, inputs = ds_cnn
    program = cortexm.to_program(lowered, io="int8")
    q_in, q_out, _, _ = boundary(lowered, inputs)
    got = as_list(qemu.run_on_qemu(program, q_in, "cortex-m55"))
    for g, want in zip(got, q_out):
        assert g.dtype == np.int8
        np.testing.assert_array_equal(g, want)
