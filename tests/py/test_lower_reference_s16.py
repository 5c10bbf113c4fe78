"""The 16x8 path (CortexMQuantizer(activation_dtype="int16", fuse_magnitude=True)) against the
independent integer reference (numpy_reference.quantized_graph, its int16 groups written from the
quantized graph's qparams with CMSIS-NN / TFLite 16x8 arithmetic): silero_vad and small torch
modules lowered are bit-exact with it, and the lowered graph's cortex_m ops are exactly the groups
the reference computes in integers. Also: a quantized bias beyond float32's 2^24 reaches the 16x8
kernels as the same integer."""

import collections
import math
from fractions import Fraction

import numpy as np
import pytest

import cortexm
import zoo
from numpy_reference.quantized_graph import DQ_CHANNEL, QuantizedGraphReference

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
SILERO_SAMPLES = 16  # calibration samples, as the 16x8 measurements use


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


def test_silero_vad_16x8_is_integer_and_bit_exact_with_the_reference():
    _, example, calibration, _ = zoo.exported("silero_vad")
    qgraph = zoo.quantized("silero_vad", SILERO_SAMPLES, "16x8")
    lowered = zoo.lowered("silero_vad", samples=SILERO_SAMPLES, quantizer="16x8")
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
