"""CortexMQuantizer's int16_activations (named values int16 in an int8 graph) and fuse_magnitude
(sqrt(a * a + b * b) with the power left unquantized), and what they do for silero_vad's front
end in the fake-quantized graph."""

import math

import numpy as np
import pytest

import cortexm
from cortexm.ops import binary
from cortexm.quantizer import observers, patterns

Q = "quantized_decomposed.quantize_per_tensor.default"
DQ = "quantized_decomposed.dequantize_per_tensor.default"


def rand(shape, seed, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def magnitude_graph(square_read_twice=False, cross=False):
    """out = sqrt(a * a + b * b) on two (2, 5, 7) inputs; optionally a * a is an output too, or the
    first term is a * view(a), the same numbers but not the same value."""
    g = cortexm.Graph()
    a, b = g.add_input("a", [2, 5, 7]), g.add_input("b", [2, 5, 7])
    other = g.call("aten.view_copy.default", [a], {"size": [2, 5, 7]}, name="a_view") if cross else a
    aa = g.call("aten.mul.Tensor", [a, other], name="aa")
    bb = g.call("aten.mul.Tensor", [b, b], name="bb")
    power = g.call("aten.add.Tensor", [aa, bb], name="power")
    out = g.call("aten.sqrt.default", [power], name="mag")
    g.outputs = [out, aa] if square_read_twice else [out]
    return g


def samples(g, n=6, seed=0):
    # Components over ~50 dB of level, as STFT bins are.
    return [tuple(rand(v.shape, seed * 100 + 10 * i + k, scale=10.0 ** (-(i % 3))) for k, v in enumerate(g.inputs))
            for i in range(n)]


def quantize(g, **config):
    return cortexm.quantize(g, samples(g), cortexm.CortexMQuantizer(**config), progress=False)


def node(g, name):
    return next(n for n in g.nodes if n.name == name)


def quantize_attrs(g, value_name):
    (q,) = [u for u in g.value(value_name).users if u.op == Q]
    return q.attrs


def test_magnitude_is_not_fused_by_default():
    qg = quantize(magnitude_graph())
    for name in ("aa", "bb", "power", "mag"):
        assert [u.op for u in node(qg, name).outputs[0].users] == [Q], name
    assert node(qg, "mag").meta["pattern"] == "sqrt"


def test_fused_magnitude_quantizes_only_its_inputs_and_output():
    g = magnitude_graph()
    qg = quantize(g, fuse_magnitude=True)
    for name in ("aa", "bb", "power", "mag"):
        assert node(qg, name).meta["pattern"] == "magnitude", name
    for name in ("aa", "bb", "power"):
        assert [u.op for u in node(qg, name).outputs[0].users] != [Q], name
    assert [u.op for u in node(qg, "mag").outputs[0].users] == [Q]
    assert all(v.producer.op == DQ for v in node(qg, "aa").inputs + node(qg, "bb").inputs)
    # The output is the quantized float32 magnitude of the dequantized inputs.
    for a, b in samples(g, 3, seed=5):
        got = qg.run(a, b)

        def fq(x, attrs):
            q = observers.quantize_array(x, attrs["scale"], attrs["zero_point"], attrs["quant_min"], attrs["quant_max"])
            return ((q - attrs["zero_point"]) * attrs["scale"]).astype(np.float32)

        da, db = fq(a, quantize_attrs(qg, "a")), fq(b, quantize_attrs(qg, "b"))
        want = fq(np.sqrt(da * da + db * db), quantize_attrs(qg, "mag"))
        np.testing.assert_array_equal(got, want)


def test_fused_magnitude_is_more_accurate_than_the_quantized_power():
    g = magnitude_graph()
    plain, fused = quantize(g), quantize(g, fuse_magnitude=True)
    errors = {}
    for label, qg in (("plain", plain), ("fused", fused)):
        err = []
        for a, b in samples(g, 6, seed=9):
            err.append(np.abs(qg.run(a, b) - np.sqrt(a * a + b * b)))
        errors[label] = float(np.concatenate([e.ravel() for e in err]).mean())
    assert errors["fused"] < 0.5 * errors["plain"], errors


@pytest.mark.parametrize("square_read_twice,cross,reason", [
    (True, False, "has other readers"),
    (False, True, "is not a square"),
])
def test_magnitude_needs_private_squares(square_read_twice, cross, reason):
    g = magnitude_graph(square_read_twice, cross)
    view = cortexm.quantizer.annotator.GraphView(g, cortexm.CortexMQuantizer(fuse_magnitude=True))
    with pytest.raises(patterns.NoMatch, match=reason):
        binary.check_magnitude(view, node(g, "mag"))
    qg = quantize(g, fuse_magnitude=True)
    assert node(qg, "mag").meta["pattern"] == "sqrt"  # each op its own pattern, as without the option


def int16_graph():
    """y = relu(x) (shares x's qparams) + z; s = softmax(y) (fixed qparams)."""
    g = cortexm.Graph()
    x, z = g.add_input("x", [2, 9]), g.add_input("z", [2, 9])
    r = g.call("aten.relu.default", [x], name="r")
    y = g.call("aten.add.Tensor", [r, z], name="y")
    s = g.call("aten._softmax.default", [y], {"dim": 1, "half_to_float": False}, name="s")
    g.outputs = [y, s]
    return g


def test_int16_activations_are_symmetric_int16_and_their_followers_too():
    qg = quantize(int16_graph(), int16_activations=["x", "y"])
    for name in ("x", "r", "y"):
        a = quantize_attrs(qg, name)
        assert (a["dtype"], a["zero_point"], a["quant_min"], a["quant_max"]) == ("int16", 0, -32768, 32767), name
    assert quantize_attrs(qg, "z")["dtype"] == "int8"
    assert quantize_attrs(qg, "s")["dtype"] == "int8"
    assert quantize_attrs(qg, "x")["scale"] < quantize_attrs(quantize(int16_graph()), "x")["scale"] / 100


def test_int16_activations_may_name_a_fixed_qparams_output():
    a = quantize_attrs(quantize(int16_graph(), int16_activations=["s"]), "s")
    assert (a["dtype"], a["scale"], a["zero_point"]) == ("int16", 1 / 32768, 0)


@pytest.mark.parametrize("names,error,message", [
    (["nope"], ValueError, "'nope', which is not a value of the graph"),
    (["r"], ValueError, "takes its qparams from 'x'; name 'x' instead"),
    ("x", TypeError, "not one string"),
    ([3], TypeError, "holds 3"),
])
def test_int16_activations_reject_what_they_cannot_name(names, error, message):
    with pytest.raises(error, match=message):
        quantize(int16_graph(), int16_activations=names)


def test_repr_shows_the_options():
    q = cortexm.CortexMQuantizer(int16_activations=("x", "b"), fuse_magnitude=True)
    assert repr(q).endswith("int16_activations=['b', 'x'], fuse_magnitude=True)")


# --- silero_vad ----------------------------------------------------------------------------------

# The front end of silero_vad: the waveform, the STFT conv's output and the magnitude.
SILERO_FRONT_END = ("x", "convolution", "sqrt")


def test_silero_int16_front_end_and_fused_magnitude_track_float():
    """Fake-quantized, 16 calibration samples (seed 0), 16 evaluation samples (seed 1). Measured:
    all int8 max 0.94 / mean 0.16 (quiet inputs quantize to a few LSB of the waveform and
    vanish), int16 front end with the fused magnitude max 0.067 / mean 0.011 (64 samples)."""
    pytest.importorskip("torch")
    import torch

    model, example, calibration = cortexm.models.get("silero_vad")
    graph = cortexm.export(model, example)
    evals = list(calibration(16, seed=1))
    with torch.no_grad():
        want = np.concatenate([model(*s)[0].numpy() for s in evals])
    errors = {}
    for label, quantizer in (
            ("int8", cortexm.CortexMQuantizer()),
            ("mixed", cortexm.CortexMQuantizer(int16_activations=SILERO_FRONT_END, fuse_magnitude=True))):
        qg = cortexm.quantize(graph, calibration(16), quantizer, progress=False)
        got = np.concatenate([qg.run(*[t.numpy() for t in s])[0] for s in evals])
        errors[label] = np.abs(got - want)
    print({k: (float(e.max()), float(e.mean())) for k, e in errors.items()})
    assert errors["int8"].max() > 0.2  # what the int16 front end is for
    assert errors["mixed"].max() < 0.08 and errors["mixed"].mean() < 0.015


# --- int16 inputs of sigmoid / tanh keep a range up to their saturation point --------------------


def saturating_graph(op, also_relu=False):
    g = cortexm.Graph()
    x = g.add_input("x", [1, 64])
    outs = [g.call(op, [x], name="f")]
    if also_relu:
        outs.append(g.call("aten.mul.Tensor", [x, x], name="sq"))
    g.outputs = outs
    return g


@pytest.mark.parametrize("op,bound", [("aten.sigmoid.default", math.log(2 * 32768 - 1)),
                                      ("aten.tanh.default", math.atanh(1 - 1 / 65536))])
def test_int16_input_of_sigmoid_and_tanh_reaches_the_saturation_point(op, bound):
    """Calibrated on [-2, 2], an int16 input read only by sigmoid / tanh still represents inputs
    out to where the output saturates: f(9) reads within 2 output steps, not f(2)."""
    g = saturating_graph(op)
    data = [(np.linspace(-2, 2, 64, dtype=np.float32).reshape(1, 64),)]
    qg = cortexm.quantize(g, data, cortexm.CortexMQuantizer("minmax", activation_dtype="int16"), progress=False)
    assert quantize_attrs(qg, "x")["scale"] == pytest.approx(bound / 32767.5, rel=1e-6)
    far = np.full((1, 64), 9.0, np.float32)
    want = {"aten.sigmoid.default": 1 / (1 + math.exp(-9)), "aten.tanh.default": math.tanh(9)}[op]
    assert abs(float(np.asarray(qg.run(far)).max()) - want) <= 2 / 32768
    # int8 keeps the observed range (a wider one would cost several output steps), as does an
    # int16 value with another reader
    assert quantize_attrs(cortexm.quantize(g, data, cortexm.CortexMQuantizer("minmax"), progress=False),
                          "x")["scale"] == pytest.approx(4 / 255, rel=1e-6)
    qg2 = cortexm.quantize(saturating_graph(op, also_relu=True), data,
                           cortexm.CortexMQuantizer("minmax", activation_dtype="int16"), progress=False)
    assert quantize_attrs(qg2, "x")["scale"] == pytest.approx(2 / 32767.5, rel=1e-6)
