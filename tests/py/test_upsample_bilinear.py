"""aten.upsample_bilinear2d (.vec and .default) exports to one graph op with output_size,
align_corners and, where torch's half-pixel coordinate divides by them, its scales; it runs as the
FloatUpsampleBilinear2d float fallback (torch's float32 arithmetic, bit-identical with the graph
interpreter) and lowers on int8 / int16 to cortex_m.quantized_upsample_bilinear2d, TFLite Micro's
RESIZE_BILINEAR at the input's qparams, equal to the numpy reference of TFLite's integer
arithmetic (numpy_reference/resize_bilinear.py). The loader refuses steps that are not finite."""

import shutil

import numpy as np
import pytest

import cortexm
from numpy_reference.quantize import dequantize_per_tensor, quantize_per_tensor
from numpy_reference.resize_bilinear import resize_bilinear_integer

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

OP = "aten.upsample_bilinear2d.default"
LOWERED = "cortex_m.quantized_upsample_bilinear2d.default"


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def interpolate(**kwargs):
    return Fn(lambda x: F.interpolate(x, mode="bilinear", **kwargs))


# name: (module, input shape); awkward shapes: 1x1 input, odd sizes, non-integer and < 1 scales.
CASES = {
    "x2": (interpolate(scale_factor=2, align_corners=False), (1, 3, 4, 5)),
    "x2_corners": (interpolate(scale_factor=2, align_corners=True), (1, 3, 4, 5)),
    "size_odd": (interpolate(size=(7, 3), align_corners=False), (2, 2, 5, 4)),
    "size_odd_corners": (interpolate(size=(7, 3), align_corners=True), (2, 2, 5, 4)),
    "scale_1_7": (interpolate(scale_factor=1.7, align_corners=False), (1, 2, 5, 6)),
    "scales_mixed": (interpolate(scale_factor=(1.5, 0.6), align_corners=False), (1, 2, 5, 9)),
    "scales_mixed_corners": (interpolate(scale_factor=(2.5, 0.7), align_corners=True), (1, 2, 3, 9)),
    "one_pixel": (interpolate(size=(3, 4), align_corners=False), (1, 2, 1, 1)),
    "one_pixel_corners": (interpolate(size=(3, 4), align_corners=True), (1, 2, 1, 1)),
    "to_one_pixel": (interpolate(size=(1, 1), align_corners=True), (1, 2, 4, 3)),
    "recomputed": (interpolate(scale_factor=1.3, align_corners=False, recompute_scale_factor=True), (1, 1, 7, 7)),
    "same_size": (interpolate(size=(5, 6), align_corners=False), (1, 2, 5, 6)),
    "scale_1_5": (interpolate(scale_factor=1.5, align_corners=False), (1, 2, 4, 6)),
    "scales_exact": (interpolate(scale_factor=(1.5, 0.5), align_corners=False), (1, 2, 4, 8)),
}
# torch steps by 1 / scale where out != in * scale; TFLite's integer kernel by in / out: float.
BY_SCALE = ("scale_1_7", "scales_mixed")


def samples(n, seed, shape, amplitude=2.0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=g) * amplitude for _ in range(n)]


def export(module, shape):
    return cortexm.export(module.eval(), (samples(1, 1, shape)[0],))


def test_export_forms_and_attributes():
    graph = export(CASES["scales_mixed"][0], (1, 2, 5, 9))
    (node,) = [n for n in graph.nodes if n.op == OP]
    assert node.attrs["output_size"] == [7, 5] and node.attrs["align_corners"] is False
    assert node.attrs["scales"] == [1.5, 0.6]
    (node,) = [n for n in export(CASES["x2_corners"][0], (1, 3, 4, 5)).nodes if n.op == OP]
    assert node.attrs["output_size"] == [8, 10] and node.attrs["align_corners"] is True
    assert node.attrs["scales"] == []  # align_corners steps by (in - 1) / (out - 1)
    (node,) = [n for n in export(CASES["size_odd"][0], (2, 2, 5, 4)).nodes if n.op == OP]
    assert node.attrs["scales"] == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_float_graph_matches_torch_and_the_program_is_bit_identical(name):
    """Each output is torch's float32 convex combination of at most four inputs with the same
    float32 weights; only the rounding of the two products and sums per row and the final one can
    differ (torch's build may contract them into FMAs): at most a few float32 ulps of the largest
    input, so the bound is 8 ulps of max |x|."""
    module, shape = CASES[name]
    graph = export(module, shape)
    assert graph.op_counts().get(OP) == 1
    program = cortexm.to_program(graph)
    assert program.float_ops == 1
    for x in samples(4, 5, shape):
        got = graph.run(x.numpy())
        want = module(x).numpy()
        assert got.shape == want.shape
        atol = 8 * np.finfo(np.float32).eps * float(np.abs(x.numpy()).max())
        np.testing.assert_allclose(got, want, rtol=0, atol=atol)
        assert np.asarray(program.run(x.numpy())).tobytes() == got.tobytes()


def quantize_input(qgraph, x):
    """x by the graph's input quantize (numpy) and that quantize's attributes."""
    q = next(n for n in qgraph.nodes if n.op == "quantized_decomposed.quantize_per_tensor.default"
             and n.inputs[0].name == qgraph.inputs[0].name)
    a = q.attrs
    return quantize_per_tensor(x, a["scale"], a["zero_point"], a["quant_min"], a["quant_max"], np.dtype(a["dtype"])), a


@pytest.mark.parametrize("precision", ["int8", "16x8"])
@pytest.mark.parametrize("name", sorted(set(CASES) - set(BY_SCALE)))
def test_lowered_equals_the_numpy_tflite_reference(name, precision):
    module, shape = CASES[name]
    graph = export(module, shape)
    qgraph = cortexm.quantize(graph, [(x,) for x in samples(8, 2, shape)],
                              cortexm.CortexMQuantizer(precision=precision), progress=False)
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    assert OP not in lowered.op_counts()
    (node,) = [n for n in lowered.nodes if n.op == LOWERED]
    assert node.inputs[0].dtype == node.outputs[0].dtype == ("int8" if precision == "int8" else "int16")
    assert node.inputs[0].qparams == node.outputs[0].qparams
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0
    out_h, out_w = node.attrs["output_size"]
    for x in samples(4, 3, shape):
        x = x.numpy()
        q, a = quantize_input(qgraph, x)
        want = dequantize_per_tensor(resize_bilinear_integer(q, out_h, out_w, node.attrs["align_corners"]),
                                     a["scale"], a["zero_point"])
        got = np.asarray(lowered.run(x))
        np.testing.assert_array_equal(got, want)
        assert np.asarray(program.run(x)).tobytes() == got.tobytes()


class ConvUpsample(nn.Module):
    """A channels-last conv output (NHWC in the lowered graph) upsampled."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return F.interpolate(torch.relu(self.conv(x)), scale_factor=1.5, mode="bilinear", align_corners=False)


def test_channels_last_conv_output_is_lowered_and_the_program_matches():
    shape = (1, 3, 4, 6)
    module = ConvUpsample().eval()
    graph = cortexm.export(module, (samples(1, 1, shape)[0],))
    qgraph = cortexm.quantize(graph, [(x,) for x in samples(8, 2, shape)], progress=False)
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    assert lowered.op_counts().get(LOWERED) == 1 and OP not in lowered.op_counts()
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0
    for x in samples(2, 4, shape):
        got = np.asarray(program.run(x.numpy()))
        assert got.tobytes() == np.asarray(lowered.run(x.numpy())).tobytes()
        # one int8 step of the conv output's scale per rounding, far below the signal
        np.testing.assert_allclose(got, module(x).detach().numpy(), atol=0.1)


@pytest.mark.parametrize("name", BY_SCALE)
def test_a_scale_torch_steps_by_stays_float_with_the_reason(name):
    module, shape = CASES[name]
    graph = export(module, shape)
    qgraph = cortexm.quantize(graph, [(x,) for x in samples(4, 2, shape)], progress=False)
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    (node,) = [n for n in lowered.nodes if n.op == OP]
    assert "torch steps by 1 / scale_factor" in node.meta["lowering"]
    assert LOWERED not in lowered.op_counts()


def test_a_ratio_past_10_bit_coordinates_stays_float_with_the_reason():
    # 2 -> 1300 rows: TFLite's step rounds to 2/1024 and its last row would read row 2 of 2.
    module = interpolate(size=(1300, 2), align_corners=False)
    shape = (1, 1, 2, 2)
    graph = export(module, shape)
    qgraph = cortexm.quantize(graph, [(x,) for x in samples(4, 2, shape)], progress=False)
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    assert lowered.op_counts().get(OP) == 1 and LOWERED not in lowered.op_counts()
    (node,) = [n for n in lowered.nodes if n.op == OP]
    assert "upsamples too far for 10-bit source coordinates" in node.meta["lowering"]


def test_bad_attributes_name_node_and_value():
    g = cortexm.Graph()
    x = g.add_input("x", [1, 2, 3, 3])
    with pytest.raises(ValueError, match=r"up.*'output_size' = \[4\] must be \(OH, OW\)"):
        g.call(OP, [x], {"output_size": [4], "align_corners": False}, name="up")
    with pytest.raises(ValueError, match=r"up.*'output_size' = \[0, 4\] must be positive"):
        g.call(OP, [x], {"output_size": [0, 4], "align_corners": False}, name="up")
    with pytest.raises(ValueError, match=r"up.*'scales' has 1 values"):
        g.call(OP, [x], {"output_size": [4, 4], "align_corners": False, "scales": [2.0]}, name="up")


@pytest.mark.skipif(shutil.which("flatc") is None, reason="flatc not installed")
@pytest.mark.parametrize("field,value", [("step_h", float("nan")), ("step_w", float("inf")),
                                         ("step_h", -1.0), ("step_w", 1e30)])
def test_the_loader_refuses_steps_out_of_range(tmp_path, field, value):
    from test_program import from_json, op_named, to_json

    graph = export(CASES["scale_1_7"][0], (1, 2, 5, 6))
    node = next(n for n in graph.nodes if n.op == OP)
    doc = to_json(cortexm.to_program(graph).data, tmp_path)
    op_named(doc, node.name)["params"][field] = value
    with pytest.raises(ValueError, match=field):
        cortexm.Program(bytes(from_json(doc, tmp_path)))


@pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")
def test_on_qemu_m55_bit_identical_with_the_host():
    from cortexm import qemu

    module, shape = CASES["scales_exact"]
    graph = export(module, shape)
    qgraph = cortexm.quantize(graph, [(x,) for x in samples(8, 2, shape)], progress=False)
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    x = samples(1, 6, shape)[0].numpy()
    programs = (cortexm.to_program(lowered, target="cortex-m55+int8"),
                cortexm.to_program(graph, target="cortex-m55+int8"))
    assert programs[0].float_ops == 0 and programs[1].float_ops == 1
    for program in programs:
        result = qemu.run(program, [x], "cortex-m55")
        (got,) = result.outputs
        want = np.asarray(program.run(x))
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
