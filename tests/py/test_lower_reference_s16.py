"""The 16x8 path (CortexMQuantizer(activation_dtype="int16", fuse_magnitude=True)) against the
independent integer reference (numpy_reference.quantized_graph, its int16 groups written from the
quantized graph's qparams with CMSIS-NN / TFLite 16x8 arithmetic): silero_vad and small torch
modules lowered are bit-exact with it, and the lowered graph's cortex_m ops are exactly the groups
the reference computes in integers; so are hand-built Q/DQ graphs for what the quantizer does not
make (int16 <-> int8 requantizes, int16 tables and clamps with awkward qparams, means, convs with
an int8 output, tails). Also: a quantized bias beyond float32's 2^24 reaches the 16x8 kernels as
the same integer."""

import collections
import math
from fractions import Fraction

import numpy as np
import pytest

import cortexm
import zoo
from numpy_reference.quantized_graph import DQ_CHANNEL, QuantizedGraphReference
from test_lower_reference import lsb_unit

torch = pytest.importorskip("torch")
nn = torch.nn

BOUNDARY = ("cortex_m.quantize_per_tensor.default", "cortex_m.dequantize_per_tensor.default")
# What a lowered 16x8 graph may leave as aten ops: moving int16 values, no arithmetic.
DATA_MOVEMENT = {"aten.cat.default", "aten.select_copy.int", "aten.slice_copy.Tensor",
                 "aten.squeeze_copy.dims", "aten.unsqueeze_copy.default", "aten.view_copy.default",
                 "aten.split_with_sizes_copy.default", "aten.reflection_pad1d.default",
                 "aten.permute_copy.default", "dim_order_ops._clone_dim_order.default"}
CONV_S16 = "cortex_m.quantized_conv2d_s16.default"
LINEAR_S16 = "cortex_m.quantized_linear_s16.default"
ACTIVATION_S16 = "cortex_m.quantized_activation_s16.default"
REQUANTIZE_S16 = "cortex_m.requantize_s16.default"
# Quantizer settings (zoo.QUANTIZERS) and calibration samples: 16x8 as S16 measured it, and with
# GPTQ weights as shipped (256 steps determine every layer's GPTQ, test_silero_16x8.py).
SILERO_SETTINGS = [("16x8", 16), ("16x8_gptq", 256)]


def as_list(out):
    return list(out) if isinstance(out, tuple) else [out]


def lowered_ops(lowered):
    return collections.Counter(n.op for n in lowered.nodes
                               if n.op.startswith("cortex_m.") and n.op not in BOUNDARY)


def float_compute_ops(lowered):
    """The aten ops of a lowered graph that compute (not only move values)."""
    return sorted({n.op for n in lowered.nodes
                   if not n.op.startswith("cortex_m.") and n.op not in DATA_MOVEMENT})


def check_ops(name, reference, lowered):
    want, got = collections.Counter(reference.integer_ops), lowered_ops(lowered)
    assert got == want and sum(got.values()) > 0, (
        f"{name}: lowered but not integer in the reference {dict(got - want)}; "
        f"integer in the reference but not lowered {dict(want - got)}")
    return got


def check_bit_exact(name, reference, lowered, inputs):
    for k, x in enumerate(inputs):
        want = reference.run(*x)
        got = as_list(lowered.run(*x))
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert g.dtype == w.dtype and g.shape == w.shape, (name, k, i)
            mismatch = int(np.count_nonzero(g != w))
            assert mismatch == 0, f"{name} input {k} output {i}: {mismatch} of {g.size} differ"


@pytest.mark.parametrize("setting, samples", SILERO_SETTINGS, ids=[s for s, _ in SILERO_SETTINGS])
def test_silero_vad_16x8_is_integer_and_bit_exact_with_the_reference(setting, samples,
                                                                      record_property):
    _, example, calibration, _ = zoo.exported("silero_vad")
    qgraph = zoo.quantized("silero_vad", samples, setting)
    lowered = zoo.lowered("silero_vad", samples=samples, quantizer=setting)
    reference = QuantizedGraphReference(qgraph)
    ops = check_ops("silero_vad 16x8", reference, lowered)
    # Every compute op is a cortex_m one on both sides: the STFT conv and magnitude, the encoder's
    # convs with their relus, the LSTM's linears, adds, muls and sigmoid / tanh tables, the
    # decoder's relu (a requantize), conv and sigmoid; the mean over one step is a view.
    assert float_compute_ops(lowered) == []
    assert ops[CONV_S16] == 6 and ops[LINEAR_S16] == 2 and ops[ACTIVATION_S16] == 6
    assert ops["cortex_m.quantized_magnitude_s16.default"] == 1
    assert ops["cortex_m.quantized_add_s16.default"] == 2
    assert ops["cortex_m.quantized_mul_s16.default"] == 3
    inputs = [[t.numpy() for t in example]]
    inputs += [[t.numpy() for t in s] for s in calibration(3, seed=11)]
    check_bit_exact("silero_vad 16x8", reference, lowered, inputs)
    # Streaming: each step reads the state the previous one wrote (equal on both sides).
    chunks = [s[0].numpy() for s in calibration(4, seed=12)]
    state = inputs[0][1]
    for k, chunk in enumerate(chunks):
        want = reference.run(chunk, state)
        got = as_list(lowered.run(chunk, state))
        for g, w in zip(got, want):
            assert np.array_equal(g, w), f"stream step {k}"
        state = got[1]
    # Op by op, from the same int16 inputs: the exact kernels within 1 LSB of the float op
    # quantized; a table within its linear interpolation's error bound.
    deviation = reference.group_deviation(*inputs[0])
    for group, (group_ops, worst, _) in deviation.items():
        bound = table_bound(qgraph, group) if ACTIVATION_S16 in group_ops else 1
        assert worst <= bound, (group, group_ops, worst, bound)
    # The outputs' distance from the fake-quantized graph, in LSB (int16) of each output's scale,
    # for the terminal summary's table (tests/py/conftest.py).
    lsb = []
    for x in inputs:
        for g, f, unit in zip(as_list(lowered.run(*x)), as_list(qgraph.run(*x)),
                              [lsb_unit(v) for v in qgraph.outputs]):
            lsb.append(np.abs(g.astype(np.float64) - f.astype(np.float64)).ravel() / unit)
    lsb = np.concatenate(lsb)
    record_property("lsb_vs_fake_quant", {
        "model": f"silero_vad {setting}", "inputs": len(inputs),
        "cortex_m_ops": sum(ops.values()), "max_lsb": round(float(lsb.max()), 3),
        "mean_lsb": round(float(lsb.mean()), 4),
        "op_max_lsb": max(d[1] for d in deviation.values())})


# max |f''| of the table functions silero uses.
SECOND_DERIVATIVE_MAX = {"aten.sigmoid.default": 1.0 / (6.0 * math.sqrt(3.0)),
                         "aten.tanh.default": 4.0 / (3.0 * math.sqrt(3.0))}


def table_bound(qgraph, quantize_name):
    """LSB bound of a 513-entry int16 table of f from f quantized: linear interpolation over
    segments of h = 65535 s_in / 512 is off by at most h^2 / 8 max |f''|, plus the rounding of
    the entries and of the result."""
    q = next(n for n in qgraph.nodes if n.name == quantize_name)
    op = q.inputs[0].producer
    s_in = float(op.inputs[0].producer.attrs["scale"])
    h = 65535.0 * s_in / 512.0
    return math.ceil(h * h / 8.0 * SECOND_DERIVATIVE_MAX[op.op] / float(q.attrs["scale"])) + 2


# --- small torch modules in 16x8 ---------------------------------------------------------------


class ConvRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 6, 5, stride=2, padding=2)

    def forward(self, x):
        return torch.relu(self.conv(x))


class Conv2dHardtanh(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 5, 3, padding=1, groups=1)

    def forward(self, x):
        return torch.nn.functional.hardtanh(self.conv(x), -0.5, 0.75)


class LinearRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(13, 9)
        self.fc2 = nn.Linear(9, 7, bias=False)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class AddMul(nn.Module):
    def forward(self, x, y):
        return (x + y) * y + x


class Gate(nn.Module):
    """An LSTM cell's gate arithmetic: sigmoid / tanh tables, products, sum; the new c read twice
    (tanh and the output), so a relu of it cannot fold and is a requantize."""

    def forward(self, x, c):
        i, f, g, o = x.chunk(4, dim=-1)
        c2 = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c2)
        return torch.cat([h, c2], dim=0), torch.relu(h.unsqueeze(-1)).mean(-1)


class FrontEnd(nn.Module):
    """silero's front end at a small size: reflection pad, a strided conv as STFT, real and
    imaginary halves, magnitude, conv + relu."""

    def __init__(self, bins=9, hop=8):
        super().__init__()
        self.bins, self.hop = bins, hop
        self.stft = nn.Conv1d(1, 2 * bins, 2 * hop, stride=hop, bias=False)
        self.enc = nn.Conv1d(bins, 8, 3, padding=1)

    def forward(self, x):
        x = torch.nn.functional.pad(x, (0, self.hop), mode="reflect").unsqueeze(1)
        spec = self.stft(x)
        re, im = spec[:, :self.bins], spec[:, self.bins:]
        return torch.relu(self.enc(torch.sqrt(re * re + im * im)))


def random_inputs(shapes, n, seed):
    g = torch.Generator().manual_seed(seed)
    return [tuple(torch.randn(*s, generator=g) for s in shapes) for _ in range(n)]


def lower_16x8(module, shapes):
    torch.manual_seed(0)
    module = module.eval()
    graph = cortexm.export(module, random_inputs(shapes, 1, 1)[0])
    quantizer = cortexm.CortexMQuantizer(**zoo.QUANTIZERS["16x8"])
    qgraph = cortexm.quantize(graph, random_inputs(shapes, 8, 2), quantizer, progress=False)
    return qgraph, cortexm.lower(qgraph, "cortex-m55+int8")


MODULES = [
    ("conv1d_relu", ConvRelu, [(2, 3, 23)], {CONV_S16: 1}),
    ("conv2d_hardtanh", Conv2dHardtanh, [(1, 4, 5, 7)], {CONV_S16: 1}),
    ("linear_relu", LinearRelu, [(3, 13)], {LINEAR_S16: 2}),
    ("add_mul", AddMul, [(2, 6), (2, 6)], {"cortex_m.quantized_add_s16.default": 2,
                                           "cortex_m.quantized_mul_s16.default": 1}),
    ("gate", Gate, [(1, 32), (1, 8)], {ACTIVATION_S16: 5, "cortex_m.quantized_mul_s16.default": 3,
                                        "cortex_m.quantized_add_s16.default": 1,
                                        REQUANTIZE_S16: 2}),
    ("front_end", FrontEnd, [(1, 64)], {"cortex_m.quantized_magnitude_s16.default": 1,
                                        CONV_S16: 2}),
]


@pytest.mark.parametrize("name, module, shapes, expected", MODULES, ids=[m[0] for m in MODULES])
def test_16x8_module_is_bit_exact_with_the_reference(name, module, shapes, expected):
    qgraph, lowered = lower_16x8(module(), shapes)
    reference = QuantizedGraphReference(qgraph)
    ops = check_ops(name, reference, lowered)
    for op, count in expected.items():
        assert ops[op] == count, (name, op, dict(ops))
    assert float_compute_ops(lowered) == [], name
    inputs = [[t.numpy() for t in s] for s in random_inputs(shapes, 3, 5)]
    # Inputs beyond the calibrated range saturate at the int16 ends.
    inputs.append([3.0 * x for x in inputs[0]])
    check_bit_exact(name, reference, lowered, inputs)


# --- the int64 bias of the 16x8 convs / linears ---------------------------------------------------


class BigBias(nn.Module):
    """A conv and a linear whose biases are 10^7 to 10^8 units of s_in * s_w: integers beyond
    2^24, where a float32 holds only every 2nd to 8th integer."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 6, 3, padding=1)
        self.fc = nn.Linear(6 * 10, 6)
        with torch.no_grad():
            self.conv.bias.copy_(torch.tensor([30.3, -41.7, 23.1, -3.0, 6.9, 50.0]))
            self.fc.bias.copy_(torch.tensor([81.2, -63.3, 95.5, 4.0, -77.7, 90.1]))

    def forward(self, x):
        return self.fc(self.conv(x).flatten(1))


def dequantized_from(value):
    """The dequantize node behind value (through moves)."""
    node = value.producer
    while node.op not in ("quantized_decomposed.dequantize_per_tensor.default", DQ_CHANNEL):
        node = node.inputs[0].producer
    return node


def exact_biases(qgraph):
    """Each conv / linear's bias at the kernels' accumulator scale s_in * s_w[c], rounded (half to
    even) from the quantized integers in exact rational arithmetic; and the largest integer."""
    biases, largest = [], 0
    for node in qgraph.nodes:
        if node.op not in ("aten.convolution.default", "aten.linear.default"):
            continue
        s_in = float(dequantized_from(node.inputs[0]).attrs["scale"])
        s_w = dequantized_from(node.inputs[1]).attrs["scales"]
        dq = node.inputs[2].producer
        assert dq.op == DQ_CHANNEL and dq.inputs[0].dtype == "int32"
        ints = np.asarray(dq.inputs[0].data, np.int64)
        largest = max(largest, int(np.abs(ints).max()))
        biases.append(np.array([
            round(Fraction(int(q) - int(z)) * Fraction(float(s_b)) / Fraction(s_in * float(w)))
            for q, z, s_b, w in zip(ints, dq.attrs["zero_points"], dq.attrs["scales"], s_w)],
            np.int64))
    return biases, largest


def test_16x8_quantized_bias_beyond_2_24_reaches_the_kernels_exactly():
    qgraph, lowered = lower_16x8(BigBias(), [(2, 2, 10)])
    want, largest = exact_biases(qgraph)
    assert 2**24 < largest < 2**31 - 1  # beyond float32's integers, not saturated by the quantizer
    got = [np.asarray(n.inputs[2].data, np.int64) for n in lowered.nodes
           if n.op in (CONV_S16, LINEAR_S16)]
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        assert np.array_equal(g, w), g - w
    reference = QuantizedGraphReference(qgraph)
    check_ops("big_bias", reference, lowered)
    check_bit_exact("big_bias", reference, lowered,
                    [[t.numpy() for t in s] for s in random_inputs([(2, 2, 10)], 3, 5)])


# --- hand-built Q/DQ graphs: the int16 glue and tails the quantizer does not make ---------------

Q = "quantized_decomposed.quantize_per_tensor.default"
DQ = "quantized_decomposed.dequantize_per_tensor.default"


def q16(scale, lo=-32768, hi=32767):
    return {"scale": scale, "zero_point": 0, "quant_min": lo, "quant_max": hi, "dtype": "int16"}


def q8(scale, zero_point, lo=-128, hi=127):
    return {"scale": scale, "zero_point": zero_point, "quant_min": lo, "quant_max": hi,
            "dtype": "int8"}


def quantized(g, v, q):
    """quantize v by q and dequantize it again: the integer value of the Q/DQ form."""
    return g.call(DQ, [g.call(Q, [v], q)], q)


def check_graph(g, inputs, expected, seed=0):
    """Lowers the hand-built Q/DQ graph g; its cortex_m ops must be the reference's integer ops and
    exactly `expected` (op -> count); outputs bit-exact on random integers over the dtypes' whole
    ranges (inputs: (shape, dtype) pairs)."""
    lowered = cortexm.lower(g, "cortex-m55+int8")
    reference = QuantizedGraphReference(g)
    got = lowered_ops(lowered)
    assert got == collections.Counter(reference.integer_ops), (dict(got), reference.integer_ops)
    assert got == collections.Counter({f"cortex_m.{op}.default": n for op, n in expected.items()})
    rng = np.random.default_rng(seed)
    for _ in range(4):
        x = [rng.integers(np.iinfo(t).min, np.iinfo(t).max + 1, size=s).astype(t)
             for s, t in inputs]
        for k, (a, b) in enumerate(zip(as_list(lowered.run(*x)), reference.run(*x))):
            assert a.shape == b.shape and np.array_equal(a, b), f"output {k}"
    return lowered


@pytest.mark.parametrize("in_q, out_q", [
    (q16(3.1e-4), q16(1.7e-3, -30000, 30000)),
    (q16(1e-4), q16(1e-4)),
    (q16(2.2e-4), q8(0.013, -5)),
    (q16(2.2e-4), q8(0.5, 127, -100, 127)),
    (q8(0.021, 7), q16(4.4e-5)),
    (q8(0.9, -128), q16(1.3e-5, -20000, 20000)),
])
def test_hand_built_int16_requantize(in_q, out_q):
    g = cortexm.Graph()
    x = g.add_input("x", [3, 7], in_q["dtype"])
    g.outputs = [g.call(DQ, [g.call(Q, [g.call(DQ, [x], in_q)], out_q)], out_q)]
    check_graph(g, [((3, 7), np.dtype(in_q["dtype"]))], {"requantize_s16": 1})


UNARY_ATTRS = {"aten.sigmoid.default": {}, "aten.tanh.default": {}, "aten.silu.default": {},
               "aten.gelu.default": {"approximate": "tanh"}, "aten.hardswish.default": {},
               "aten.sqrt.default": {}, "aten.abs.default": {},
               "aten.pow.Tensor_Scalar": {"exponent": 1.5},
               "aten.add.Scalar": {"other": 0.3, "alpha": -2.0},
               "aten.sub.Scalar": {"other": 7.25, "alpha": 1.0}, "aten.mul.Scalar": {"other": 3.0},
               "aten.div.Scalar": {"other": -0.37}}


@pytest.mark.parametrize("op", sorted(UNARY_ATTRS))
@pytest.mark.parametrize("in_q, out_q", [(q16(3e-4), q16(1 / 32768)),
                                         (q16(1.3e-3), q16(2.1e-4, -30000, 32000))])
def test_hand_built_int16_table(op, in_q, out_q):
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3, 11], "int16")
    g.outputs = [quantized(g, g.call(op, [g.call(DQ, [x], in_q)], UNARY_ATTRS[op]), out_q)]
    check_graph(g, [((2, 3, 11), np.int16)], {"quantized_activation_s16": 1})


@pytest.mark.parametrize("op, attrs, out_q, expected", [
    ("aten.relu.default", {}, q16(2e-4), "requantize_s16"),
    ("aten.relu.default", {}, q16(7e-5, -1000, 30000), "requantize_s16"),
    ("aten.hardtanh.default", {"min_val": -0.3, "max_val": 0.5}, q16(3e-5), "requantize_s16"),
    ("aten.clamp.default", {"min": -1.5, "max": None}, q16(1e-4), "requantize_s16"),
    # No value left between the bounds (torch gives max): the table.
    ("aten.clamp.default", {"min": 0.5, "max": -0.5}, q16(1e-4), "quantized_activation_s16"),
    ("aten.hardsigmoid.default", {}, q16(1 / 32768), "quantized_activation_s16"),
])
def test_hand_built_int16_clamp_standing_alone(op, attrs, out_q, expected):
    g = cortexm.Graph()
    x = g.add_input("x", [4, 9], "int16")
    g.outputs = [quantized(g, g.call(op, [g.call(DQ, [x], q16(2e-4))], attrs), out_q)]
    check_graph(g, [((4, 9), np.int16)], {expected: 1})


@pytest.mark.parametrize("dims, out_q, expected", [
    ([1], q16(2e-4), {}),  # one element per mean at the same qparams: a view
    ([1, -1], q16(3.3e-4, -30000, 30000), {"requantize_s16": 1}),
    ([2], q16(2e-4), {"quantized_mean_s16": 1}),  # a real mean: quantized_mean_s16
])
def test_hand_built_int16_mean(dims, out_q, expected):
    g = cortexm.Graph()
    x = g.add_input("x", [2, 1, 5, 1], "int16")
    m = g.call("aten.mean.dim", [g.call(DQ, [x], q16(2e-4))], {"dim": dims, "keepdim": False})
    g.outputs = [quantized(g, m, out_q)]
    lowered = check_graph(g, [((2, 1, 5, 1), np.int16)], expected)
    assert not any(n.op == "aten.mean.dim" for n in lowered.nodes)


def conv_graph(tail, out_q, in_q=q16(2.5e-4), shape=(2, 3, 17), c_out=5, seed=3):
    """x (int16) -> conv1d (per-channel int8 weights, int32 bias at s_in * s_w) [-> tail] -> Q."""
    rng = np.random.default_rng(seed)
    s_in = in_q["scale"]
    s_w = [0.004 * (1 + 0.3 * c) for c in range(c_out)]
    w = rng.integers(-127, 128, size=(c_out, shape[1], 4)).astype(np.int8)
    b = rng.integers(-4_000_000, 4_000_000, size=c_out).astype(np.int32)

    def channel_attrs(scales, lo, hi, dtype):
        return {"scales": [float(v) for v in scales], "zero_points": [0] * len(scales),
                "axis": 0, "quant_min": lo, "quant_max": hi, "dtype": dtype}

    g = cortexm.Graph()
    x = g.add_input("x", list(shape), "int16")
    wdq = g.call(DQ_CHANNEL, [g.add_constant("w", w)], channel_attrs(s_w, -127, 127, "int8"))
    bdq = g.call(DQ_CHANNEL, [g.add_constant("b", b)],
                 channel_attrs([s_in * s for s in s_w], -(2**31), 2**31 - 1, "int32"))
    y = g.call("aten.convolution.default", [g.call(DQ, [x], in_q), wdq, bdq],
               {"stride": [2], "padding": [1], "dilation": [1], "transposed": False,
                "output_padding": [0], "groups": 1})
    if tail is not None:
        y = g.call(tail[0], [y], tail[1])
    g.outputs = [quantized(g, y, out_q)]
    return g, [(shape, np.int16)]


@pytest.mark.parametrize("tail, out_q, expected", [
    (None, q16(0.06), {"quantized_conv2d_s16": 1}),
    (("aten.hardtanh.default", {"min_val": -20.0, "max_val": 35.0}), q16(0.04),
     {"quantized_conv2d_s16": 1}),
    # An int8 output: the int16 value spanning its range, then requantize_s16 (with the tail).
    (None, q8(9.0, 3), {"quantized_conv2d_s16": 1, "requantize_s16": 1}),
    # A clamp tail on an int8 output: the conv's output takes the clamp's qparams when folded,
    # and the clamp is an int8 table (requantize_s16 has no place in ActivationFusion).
    (("aten.relu.default", {}), q8(7.0, -128),
     {"quantized_conv2d_s16": 1, "requantize_s16": 1, "quantized_activation": 1}),
    (("aten.hardsigmoid.default", {}), q8(1 / 256, -128),
     {"quantized_conv2d_s16": 1, "requantize_s16": 1}),
])
def test_hand_built_int16_conv(tail, out_q, expected):
    g, inputs = conv_graph(tail, out_q)
    check_graph(g, inputs, expected)


@pytest.mark.parametrize("tail, out_q, expected", [
    (None, q16(0.01), {"quantized_linear_s16": 1}),
    (("aten.hardsigmoid.default", {}), q16(1 / 32768), {"quantized_linear_s16": 1}),
    (("aten.clamp.default", {"min": -2.0, "max": 9.0}), q16(4e-3), {"quantized_linear_s16": 1}),
    (None, q8(0.05, 1), {}),  # int16 in, int8 out: float
])
def test_hand_built_int16_linear_per_tensor(tail, out_q, expected):
    """x (int16) -> linear (per-tensor int8 weights, int32 bias) [-> tail] -> Q."""
    rng = np.random.default_rng(4)
    s_in, s_w = 3e-4, 0.0061
    w = rng.integers(-127, 128, size=(6, 10)).astype(np.int8)
    b = rng.integers(-300_000, 300_000, size=6).astype(np.int32)
    g = cortexm.Graph()
    x = g.add_input("x", [3, 10], "int16")
    wdq = g.call(DQ, [g.add_constant("w", w)], q8(s_w, 0, -127, 127))
    bdq = g.call(DQ_CHANNEL, [g.add_constant("b", b)],
                 {"scales": [s_in * s_w] * 6, "zero_points": [0] * 6, "axis": 0,
                  "quant_min": -(2**31), "quant_max": 2**31 - 1, "dtype": "int32"})
    y = g.call("aten.linear.default", [g.call(DQ, [x], q16(s_in)), wdq, bdq], {})
    if tail is not None:
        y = g.call(tail[0], [y], tail[1])
    g.outputs = [quantized(g, y, out_q)]
    check_graph(g, [((3, 10), np.int16)], expected)
