"""Op level, through cortexm.export -> quantize -> lower: for each op the lowering makes a cortex_m
op of besides conv / linear / add / mul (softmax, log_softmax, the lookup-table activations,
requantize, cat, mean, maximum / minimum, bmm / mm, transposed conv, avg / adaptive pools), with
awkward shapes and qparams, the lowered graph's cortex_m ops are exactly the integer groups of
numpy_reference.quantized_graph and its int8 output is bit-identical to that reference, on
calibration-like inputs and on wider ones that saturate."""

import collections

import numpy as np
import pytest

import cortexm
from numpy_reference.quantized_graph import UNFUSED_ACTIVATION_OPS, QuantizedGraphReference

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

BOUNDARY = ("cortex_m.quantize_per_tensor.default", "cortex_m.dequantize_per_tensor.default")


def cm(name):
    return f"cortex_m.{name}.default"


def samples(shapes, n, seed, spread=1.7):
    g = torch.Generator().manual_seed(seed)
    # Off-center and unevenly scaled, so the zero points are not 0.
    return [tuple(torch.randn(s, generator=g) * spread + 0.4 for s in shapes) for _ in range(n)]


def check(module, shapes, expected, seed=0):
    """Lowers module; its cortex_m ops (boundary quantize / dequantize aside) must be the
    reference's integer ops and include `expected` (op -> count); outputs must be bit-exact."""
    torch.manual_seed(seed)
    module = module.eval()
    graph = cortexm.export(module, samples(shapes, 1, seed + 100)[0])
    qgraph = cortexm.quantize(graph, samples(shapes, 6, seed + 200), progress=False)
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    reference = QuantizedGraphReference(qgraph)
    got_ops = collections.Counter(n.op for n in lowered.nodes
                                  if n.op.startswith("cortex_m.") and n.op not in BOUNDARY)
    assert got_ops == collections.Counter(reference.integer_ops), (dict(got_ops),
                                                                   reference.integer_ops)
    for op, count in expected.items():
        assert got_ops[cm(op)] == count, (op, dict(got_ops))
    trials = samples(shapes, 3, seed + 300) + samples(shapes, 2, seed + 400, spread=6.0)
    for sample in trials:
        x = [t.numpy() for t in sample]
        want = reference.run(*x)
        got = lowered.run(*x)
        got = list(got) if isinstance(got, tuple) else [got]
        assert len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            assert g.shape == w.shape and g.dtype == w.dtype, k
            # Outputs are int8 values dequantized by one scale: equal floats, equal integers.
            assert np.array_equal(g, w), f"output {k}: {np.count_nonzero(g != w)} of {g.size} differ"
    within_one_lsb(reference, [t.numpy() for t in trials[-1]])
    return lowered


def within_one_lsb(reference, x):
    """Each integer op is within 1 LSB of its float op quantized, from the same int8 inputs."""
    deviation = reference.group_deviation(*x)
    assert deviation and max(d[1] for d in deviation.values()) <= 1, deviation


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *x):
        return self.fn(*x)


# --- softmax / log_softmax ---------------------------------------------------------------------

@pytest.mark.parametrize("shape,dim", [((2, 13), -1), ((3, 7, 5), 1), ((1, 4, 3, 5), 2),
                                       ((5, 1), 1), ((2, 300), 0)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax(shape, dim, log):
    fn = torch.log_softmax if log else torch.softmax
    # The conv-free input scale is set by the multiply: awkward on purpose.
    check(Fn(lambda x: fn(x * 2.3, dim=dim)), [shape],
          {"quantized_log_softmax" if log else "quantized_softmax": 1})


def test_softmax_of_a_linear():
    check(nn.Sequential(nn.Linear(12, 37), nn.Softmax(dim=-1)), [(3, 12)],
          {"quantized_linear": 1, "quantized_softmax": 1})


# --- lookup-table activations -------------------------------------------------------------------

TABLE_OPS = {
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "silu": F.silu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "hardswish": F.hardswish,
    "sqrt": lambda x: torch.sqrt(torch.relu(x)),  # the relu fuses into the conv
    "abs": torch.abs,
    "square": lambda x: x ** 2,
    "cube": lambda x: torch.pow(x, 3.0),
    "add_scalar": lambda x: x + 2.5,
    "sub_scalar": lambda x: x - 1.3,
    "mul_scalar": lambda x: x * -0.7,
    "div_scalar": lambda x: x / 3.0,
}


@pytest.mark.parametrize("name", sorted(TABLE_OPS))
def test_activation_table(name):
    fn = TABLE_OPS[name]
    # Between convs: the input qparams are a conv's, the output is quantized for the next one.
    check(nn.Sequential(nn.Conv2d(3, 5, 3), Fn(fn), nn.Conv2d(5, 2, 1)), [(1, 3, 7, 6)],
          {"quantized_conv2d": 2, "quantized_activation": 1}, seed=len(name))


def test_activation_chain_on_the_graph_input():
    # The scalar * and - are tables of their own, like sigmoid and tanh: nothing stays float.
    lowered = check(Fn(lambda x: torch.tanh(torch.sigmoid(x) * 3.0 - 1.0)), [(2, 3, 5)],
                    {"quantized_activation": 4})
    assert not any(op.startswith("aten.") for op in lowered.op_counts())


# --- requantize and cat --------------------------------------------------------------------------

class CatBranches(nn.Module):
    """Branches with their own qparams meeting in a cat (the quantizer requantizes them)."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.a = nn.Conv2d(3, 3, 3, padding=1)
        self.b = nn.Conv2d(3, 3, 1)

    def forward(self, x):
        return torch.cat([self.a(x), torch.sigmoid(self.b(x)), x * 5.0], dim=self.dim)


@pytest.mark.parametrize("dim", [1, -1])
def test_cat_of_differently_quantized_branches(dim):
    lowered = check(CatBranches(dim), [(1, 3, 5, 7)], {"quantized_conv2d": 2})
    assert lowered.op_counts()["cortex_m.requantize.default"] >= 2
    cats = [n for n in lowered.nodes if n.op == "aten.cat.default"]
    assert len(cats) == 1 and cats[0].outputs[0].dtype == "int8"


# --- mean -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dims,keepdim,op", [((2, 3), False, "quantized_mean"),  # TFLM MEAN, no pool
                                             ((-1, -2), True, "quantized_mean"),
                                             ((3,), True, "quantized_mean"),
                                             ((1,), False, "quantized_mean"),
                                             ((1, 2, 3), False, "quantized_mean")])
def test_mean(dims, keepdim, op):
    check(nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), Fn(lambda y: y.mean(dims, keepdim))),
          [(2, 3, 5, 7)], {"quantized_conv2d": 1, op: 1})


def test_mean_of_a_sequence():
    check(Fn(lambda x: (x * 1.9).mean(-1)), [(3, 11)], {"quantized_mean": 1})


# --- maximum / minimum ---------------------------------------------------------------------------

@pytest.mark.parametrize("fn,op", [(torch.maximum, "quantized_maximum"),
                                   (torch.minimum, "quantized_minimum")])
@pytest.mark.parametrize("other_shape", [(2, 3, 5), (1, 3, 1)])
def test_maximum_minimum(fn, op, other_shape):
    check(Fn(lambda a, b: fn(a * 0.6, b * 3.1)), [(2, 3, 5), other_shape], {op: 1})


# --- bmm / mm ------------------------------------------------------------------------------------

def test_bmm_of_a_transpose():
    check(Fn(lambda q, k: torch.bmm(q * 1.3, k.transpose(1, 2))), [(2, 5, 7), (2, 9, 7)],
          {"quantized_batch_matmul": 1})


def test_bmm():
    check(Fn(lambda a, b: torch.bmm(a, b * 0.4)), [(3, 4, 6), (3, 6, 5)],
          {"quantized_batch_matmul": 1})


def test_mm():
    check(Fn(lambda a, b: torch.mm(a * 2.0, b)), [(5, 3), (3, 7)], {"quantized_batch_matmul": 1})


# --- transposed convolution ----------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,tail", [
    (dict(kernel_size=3, stride=2, padding=1, output_padding=1), None),
    (dict(kernel_size=(2, 3), stride=(1, 2), padding=(0, 1), bias=False), None),
    (dict(kernel_size=4, stride=3, padding=2, output_padding=2), nn.ReLU()),
    (dict(kernel_size=1, stride=1), nn.Hardsigmoid()),
])
def test_transpose_conv2d(kwargs, tail):
    layers = [nn.ConvTranspose2d(5, 3, **kwargs)] + ([tail] if tail is not None else [])
    lowered = check(nn.Sequential(*layers), [(1, 5, 4, 6)], {"quantized_transpose_conv2d": 1})
    assert "aten.relu.default" not in lowered.op_counts()  # a ReLU tail folds into the kernel's range


@pytest.mark.parametrize("kwargs,tail", [
    (dict(kernel_size=3, stride=2, padding=1, output_padding=1), None),
    (dict(kernel_size=4, stride=3, padding=2, output_padding=2, bias=False), nn.ReLU()),
    (dict(kernel_size=1), None),
])
def test_transpose_conv1d(kwargs, tail):
    """ConvTranspose1d: a transposed conv2d over the (N, C, 1, W) view."""
    layers = [nn.ConvTranspose1d(5, 3, **kwargs)] + ([tail] if tail is not None else [])
    lowered = check(nn.Sequential(*layers), [(2, 5, 7)], {"quantized_transpose_conv2d": 1})
    assert "aten.convolution.default" not in lowered.op_counts()
    assert "aten.relu.default" not in lowered.op_counts()


# --- avg pool: count and rounding ----------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=(2, 3), stride=(1, 2)),
    dict(kernel_size=2, stride=3, padding=1, ceil_mode=True, count_include_pad=False),
])
def test_avg_pool2d(kwargs):
    check(nn.Sequential(nn.Conv2d(3, 4, 1), nn.AvgPool2d(**kwargs), nn.ReLU()), [(2, 3, 7, 9)],
          {"quantized_conv2d": 1, "quantized_avg_pool2d": 1})


# torch.export makes a mean over H, W of the (1, 1) one: TFLM's MEAN, not a pool.
@pytest.mark.parametrize("size,op", [((2, 3), "quantized_avg_pool2d"), ((1, 1), "quantized_mean"),
                                     ((3, 1), "quantized_avg_pool2d")])
def test_adaptive_avg_pool2d(size, op):
    check(nn.Sequential(nn.Conv2d(3, 4, 1), nn.AdaptiveAvgPool2d(size)), [(1, 3, 6, 9)],
          {"quantized_conv2d": 1, op: 1})


# --- activation tails on ops without a conv --------------------------------------------------------

@pytest.mark.parametrize("op,fn", [("quantized_add", lambda a, b: torch.relu(a + b)),
                                   ("quantized_mul", lambda a, b: F.hardtanh(a * b, -0.5, 1.5)),
                                   ("quantized_max_pool2d",
                                    lambda a, b: torch.clamp(F.max_pool2d(a + b, 3, 2, 1,
                                                                          ceil_mode=True), 0.1))])
def test_clamp_tails(op, fn):
    check(Fn(fn), [(1, 3, 6, 7), (1, 3, 6, 7)], {op: 1})


# --- clamps no op takes as its tail: fused by ActivationFusion, else a table ---------------------

@pytest.mark.parametrize("fn,expected", [
    # The product is read twice (silero's h): the relu cannot fold into the mul.
    (lambda a, b: (lambda p: (p, torch.relu(p)))(a * b), {"quantized_mul": 1, "quantized_activation": 1}),
    # ActivationFusion walks back through a view or an unsqueeze to the add ...
    (lambda a, b: torch.relu((a + b).view(1, 3, 42)), {"quantized_add": 1, "quantized_activation": 0}),
    (lambda a, b: F.hardtanh((a + b).unsqueeze(1), -0.3, 0.8), {"quantized_add": 1, "quantized_activation": 0}),
    # ... but not into an op without an activation range.
    (lambda a, b: torch.clamp(torch.cat([a, b], 1), -0.5), {"quantized_activation": 1}),
])
def test_unfused_clamps(fn, expected):
    check(Fn(fn), [(1, 3, 6, 7), (1, 3, 6, 7)], expected)


@pytest.mark.parametrize("fn,op,count", [
    (lambda y: F.relu6(torch.tanh(y) * 4.0), "quantized_activation", 3),  # tanh, * 4.0, relu6
    (lambda y: torch.relu(torch.softmax(y, 1)), "quantized_softmax", 1),
    (lambda y: F.hardtanh(y.mean(1), -0.2, 0.2), "quantized_mean", 1)])
def test_clamp_tails_without_an_activation_range(fn, op, count):
    check(nn.Sequential(nn.Conv2d(3, 6, 1), Fn(fn)), [(1, 3, 5, 4)], {op: count})


# --- hand-built graphs: qparams no quantizer picks ----------------------------------------------

Q = "quantized_decomposed.quantize_per_tensor.default"
DQ = "quantized_decomposed.dequantize_per_tensor.default"


def qattrs(scale, zero_point, lo=-128, hi=127):
    return {"scale": scale, "zero_point": zero_point, "quant_min": lo, "quant_max": hi,
            "dtype": "int8"}


def quantized(g, v, q):
    """quantize v by q and dequantize it again: the int8 value of the Q/DQ form."""
    return g.call(DQ, [g.call(Q, [v], q)], q)


def check_graph(g, shapes, expected, seed=0):
    """Lowers the hand-built Q/DQ graph g (int8 inputs); as check()."""
    lowered = cortexm.lower(g, "cortex-m55+int8")
    reference = QuantizedGraphReference(g)
    got_ops = collections.Counter(n.op for n in lowered.nodes
                                  if n.op.startswith("cortex_m.") and n.op not in BOUNDARY)
    assert got_ops == collections.Counter(reference.integer_ops), (dict(got_ops),
                                                                   reference.integer_ops)
    assert got_ops == collections.Counter({cm(op): n for op, n in expected.items()})
    rng = np.random.default_rng(seed)
    for _ in range(4):
        x = [rng.integers(-128, 128, size=s).astype(np.int8) for s in shapes]
        got = lowered.run(*x)
        got = list(got) if isinstance(got, tuple) else [got]
        for k, (a, b) in enumerate(zip(got, reference.run(*x))):
            assert a.shape == b.shape and np.array_equal(a, b), f"output {k}"
    within_one_lsb(reference, x)


@pytest.mark.parametrize("x_q,y_q,out_q,requantizes", [
    # y's integers may lie outside the output's narrow range: requantized (clamped) too.
    (qattrs(0.05, 3), qattrs(0.08, -2, -100, 90), qattrs(0.08, -2, -100, 90), 2),
    # Both inputs at the output's full-range qparams: the cat moves integers only.
    (qattrs(0.0731, -128), qattrs(0.0731, -128), qattrs(0.0731, -128), 0),
    (qattrs(0.013, 127), qattrs(0.9, -128), qattrs(0.31, 0, -127, 127), 2),
])
@pytest.mark.parametrize("dim", [1, -1])
def test_hand_built_cat_then_softmax(x_q, y_q, out_q, requantizes, dim):
    g = cortexm.Graph()
    shapes = [(2, 5, 3), (2, 5, 3)]
    x, y = (g.add_input(n, list(s), "int8") for n, s in zip("xy", shapes))
    cat = g.call("aten.cat.default", [g.call(DQ, [x], x_q), g.call(DQ, [y], y_q)], {"dim": dim})
    c = quantized(g, cat, out_q)
    s = g.call("aten._softmax.default", [c], {"dim": dim, "half_to_float": False})
    g.outputs = [quantized(g, s, qattrs(1 / 256, -128)), c]
    expected = {"quantized_softmax": 1}
    if requantizes:
        expected["requantize"] = requantizes
    check_graph(g, shapes, expected)


@pytest.mark.parametrize("in_q,out_q", [(qattrs(0.05, 3), qattrs(0.05, 3)),
                                        (qattrs(0.05, 3), qattrs(0.021, -90, -100, 90)),
                                        (qattrs(1.7, 127), qattrs(0.0039, -128))])
def test_hand_built_requantize(in_q, out_q):
    g = cortexm.Graph()
    x = g.add_input("x", [3, 7], "int8")
    g.outputs = [g.call(DQ, [g.call(Q, [g.call(DQ, [x], in_q)], out_q)], out_q)]
    check_graph(g, [(3, 7)], {"requantize": 1})


UNARY_ATTRS = {"aten.sigmoid.default": {}, "aten.tanh.default": {}, "aten.silu.default": {},
               "aten.gelu.default": {"approximate": "tanh"}, "aten.hardswish.default": {},
               "aten.sqrt.default": {}, "aten.abs.default": {},
               "aten.pow.Tensor_Scalar": {"exponent": 1.5},
               "aten.add.Scalar": {"other": 0.3, "alpha": -2.0},
               "aten.sub.Scalar": {"other": 7.25, "alpha": 1.0}, "aten.mul.Scalar": {"other": 3.0},
               "aten.div.Scalar": {"other": -0.37}}


@pytest.mark.parametrize("op", sorted(UNARY_ATTRS))
@pytest.mark.parametrize("in_q,out_q", [(qattrs(0.043, -128), qattrs(0.0117, 5, -110, 120)),
                                        (qattrs(0.0021, 127), qattrs(0.9, -128))])
def test_hand_built_activation_table(op, in_q, out_q):
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3, 11], "int8")
    y = g.call(op, [g.call(DQ, [x], in_q)], UNARY_ATTRS[op])
    g.outputs = [quantized(g, y, out_q)]
    check_graph(g, [(2, 3, 11)], {"quantized_activation": 1})


@pytest.mark.parametrize("scale", [2.0**-25, 0.0041, 0.37, 5.0])
@pytest.mark.parametrize("log", [False, True])
def test_hand_built_softmax_input_scales(scale, log):
    g = cortexm.Graph()
    x = g.add_input("x", [3, 517], "int8")
    op = "aten._log_softmax.default" if log else "aten._softmax.default"
    y = g.call(op, [g.call(DQ, [x], qattrs(scale, -9))], {"dim": -1, "half_to_float": False})
    g.outputs = [quantized(g, y, qattrs(16 / 256, 127) if log else qattrs(1 / 256, -128))]
    check_graph(g, [(3, 517)], {"quantized_log_softmax" if log else "quantized_softmax": 1})


@pytest.mark.parametrize("op,attrs", [("aten.relu.default", {}),
                                      ("aten.hardtanh.default", {"min_val": -0.3, "max_val": 2.0}),
                                      ("aten.clamp.default", {"min": 0.25, "max": None}),
                                      ("aten.hardsigmoid.default", {})])
@pytest.mark.parametrize("out_q", [qattrs(0.047, -9), qattrs(0.019, -128, -128, 100)])
def test_hand_built_activation_standing_alone(op, attrs, out_q):
    """No producer to fold into: computed in integers by the reference all the same."""
    g = cortexm.Graph()
    x = g.add_input("x", [4, 9], "int8")
    y = g.call(op, [g.call(DQ, [x], qattrs(0.047, -9))], attrs)
    g.outputs = [quantized(g, y, out_q)]
    assert len(QuantizedGraphReference(g).groups) == 1
    check_graph(g, [(4, 9)], collections.Counter(o.split(".")[1] for o in UNFUSED_ACTIVATION_OPS))


# --- recurrent: nn.LSTM unrolled by torch.export, nn.LSTMCell --------------------------------------


class LSTMHead(nn.Module):
    """nn.LSTM (two layers, batch first; torch.export unrolls it into cells, the zero initial state
    a constant) and a linear head on the last step."""

    def __init__(self, layers):
        super().__init__()
        self.lstm = nn.LSTM(6, 10, num_layers=layers, batch_first=True)
        self.fc = nn.Linear(10, 3)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y[:, -1])


class CellLoop(nn.Module):
    """nn.LSTMCell stepped over the sequence, the state carried in and out."""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(5, 7)

    def forward(self, x, h, c):
        for t in range(x.shape[1]):
            h, c = self.cell(x[:, t], (h, c))
        return h, c


@pytest.mark.parametrize("layers", [1, 2])
def test_lstm_unrolled(layers):
    steps = 4
    # per layer: one linear projecting every step's input; per step and layer: the linear of h,
    # 3 sigmoid + 2 tanh tables, 3 muls, 2 adds; the head's linear
    check(LSTMHead(layers), [(2, steps, 6)],
          {"quantized_linear": (steps + 1) * layers + 1, "quantized_activation": 5 * steps * layers,
           "quantized_mul": 3 * steps * layers, "quantized_add": 2 * steps * layers})


def test_lstm_cell_loop():
    check(CellLoop(), [(2, 3, 5), (2, 7), (2, 7)],
          {"quantized_linear": 6, "quantized_activation": 15, "quantized_mul": 9, "quantized_add": 6})


# --- constant pad with a nonzero value ------------------------------------------------------------


@pytest.mark.parametrize("value", [-3.0, 0.7, 25.0])
def test_constant_pad_with_a_value_moves_int8(value):
    """The pad keeps the conv output's qparams, widened to hold the value; lowered it pads the
    int8 data with Q(value) (no float op), bit-exact with the reference, and so does the program."""
    lowered = check(nn.Sequential(nn.Conv2d(3, 4, 1), Fn(lambda y: F.pad(y, (1, 2, 0, 1), value=value))),
                    [(1, 3, 4, 5)], {"quantized_conv2d": 1})
    assert not [n.op for n in lowered.nodes if n.op.startswith("aten.") and "pad" not in n.op
                and "copy" not in n.op and "clone" not in n.op]
    x = samples([(1, 3, 4, 5)], 1, 9)[0][0].numpy()
    program = cortexm.to_program(lowered)
    assert program.float_ops == 0
    assert np.array_equal(program.run(x), lowered.run(x))
