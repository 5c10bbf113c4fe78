"""Every refusal of a model (export, quantize, lower, to_program, check) says what to do instead: the
rewrite, the flag, or the general way out when there is no specific one. One table of small bad
models, each with the fragment of its suggestion; every line of every refusal must carry one."""

import re

import numpy as np
import pytest

import cortexm

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from test_deploy_attention import MaskFromInput, RowMaskedSoftmax  # noqa: E402


class Fn(nn.Module):
    def __init__(self, fn, **modules):
        super().__init__()
        self.fn = fn
        for name, module in modules.items():
            setattr(self, name, module)

    def forward(self, *x):
        return self.fn(self, *x)


def rand(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(0))


def export(module, *inputs):
    return cortexm.export(module.eval(), inputs)


# --- export -------------------------------------------------------------------------------------


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("steps", torch.zeros(1))

    def forward(self, x):
        self.steps.add_(1)
        return x + self.steps


class Attention(nn.Module):
    """scaled_dot_product_attention, its query through pre and its mask a buffer."""

    def __init__(self, pre=None, mask=None):
        super().__init__()
        self.pre = pre
        self.register_buffer("mask", mask)

    def forward(self, q, k, v):
        if self.pre is not None:
            q = self.pre(q)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask)


def qkv():
    return rand(1, 2, 8, 4), rand(1, 2, 8, 4), rand(1, 2, 8, 4)


class InfiniteOffset(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("offset", torch.tensor([0.0, float("inf"), 0.0, 0.0]))

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q + self.offset, k, v)


def runtime_scales():
    """A PT2E-style graph whose per-channel scales are computed at run time."""
    import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers the ops)

    qd = torch.ops.quantized_decomposed

    class Q(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scales", torch.full((2,), 0.05))
            self.register_buffer("zero_points", torch.zeros(2, dtype=torch.int64))

        def forward(self, x):
            scales = self.scales * 1.0
            q = qd.quantize_per_channel.default(x, scales, self.zero_points, 1, -128, 127, torch.int8)
            return qd.dequantize_per_channel.default(q, scales, None, 1, -128, 127, torch.int8)

    return export(Q(), rand(1, 2, 4))


EXPORT = {
    "bidirectional LSTM": (lambda: export(Fn(lambda s, x: s.lstm(x)[0], lstm=nn.LSTM(5, 4, batch_first=True,
                                                                                    bidirectional=True)),
                                          rand(2, 3, 5)),
                           "run two nn.LSTM (bidirectional=False)"),
    "bidirectional GRU": (lambda: export(Fn(lambda s, x: s.gru(x)[0], gru=nn.GRU(5, 4, batch_first=True,
                                                                                 bidirectional=True)),
                                         rand(2, 3, 5)),
                          "run two nn.GRU (bidirectional=False)"),
    "flip": (lambda: export(Fn(lambda s, x: torch.flip(x, [-1])), rand(2, 3)), "reverse by slices instead"),
    "cumsum": (lambda: export(Fn(lambda s, x: torch.cumsum(x, -1)), rand(2, 3)),
               "x @ U with U = torch.triu(torch.ones(n, n))"),
    "topk": (lambda: export(Fn(lambda s, x: torch.topk(x, 2, -1)[0]), rand(2, 5)), "for k = 1 use torch.max(x, dim)"),
    "index with a tensor": (lambda: export(Fn(lambda s, x: x[:, torch.tensor([0, 2])]), rand(2, 5)),
                            "index with slices"),
    "eq": (lambda: export(Fn(lambda s, x: (x == 0).float()), rand(2, 5)), "compare outside the model"),
    "erfinv (no known rewrite)": (lambda: export(Fn(lambda s, x: torch.erfinv(x * 0.1)), rand(2, 3)),
                                  "rewrite it with ops docs/ops.md lists as exported, or compute it outside"),
    "cast to int32": (lambda: export(Fn(lambda s, x: x.to(torch.int32)), rand(2, 3)), "keep the values float32"),
    "sum into int32": (lambda: export(Fn(lambda s, x: x.sum(1, dtype=torch.int32)), rand(2, 3)),
                       "drop the dtype argument"),
    "division with rounding": (lambda: export(Fn(lambda s, x: torch.div(x, 2.0, rounding_mode="floor")), rand(2, 3)),
                               "divide without rounding_mode"),
    "celu alpha 0": (lambda: export(Fn(lambda s, x: F.celu(x, alpha=0.0)), rand(2, 3)), "use a positive alpha"),
    "adaptive max pool not dividing": (lambda: export(nn.AdaptiveMaxPool2d(4), rand(1, 2, 6, 6)),
                                       "pad or crop the input to a multiple of the output size"),
    "repeat 0 times": (lambda: export(Fn(lambda s, x: x.repeat(0, 1, 1)), rand(2, 3, 4)), "repeat at least once"),
    "upsample by 1.7": (lambda: export(Fn(lambda s, x: F.interpolate(x, scale_factor=(1, 1.7))), rand(1, 1, 1, 5)),
                        "give the output size instead"),
    "max pool indices used": (lambda: export(Fn(lambda s, x: s.pool(x)[1].float(),
                                                pool=nn.MaxPool2d(2, return_indices=True)), rand(1, 1, 4, 4)),
                              "use only its first output (return_indices=False"),
    "float64 input": (lambda: export(Fn(lambda s, x: x * 2), rand(2, 3).double()), "give it as one of"),
    "a buffer updated in forward": (lambda: export(Counter(), rand(2, 3)),
                                    "give the state as an input and return its new value as an output"),
    "a size from input values": (lambda: export(Fn(lambda s, x: torch.full((2, 3), x.sum().item())), rand(2, 3)),
                                 "not from input values (.item())"),
    "dropout in training mode": (lambda: cortexm.export(torch.export.export(nn.Dropout(0.5).train(), (rand(2, 3),))),
                                 "export the model in eval mode (model.eval())"),
    "quantize_per_channel with run-time scales": (runtime_scales, "convert the PT2E model (convert_pt2e)"),
    "softmax input through log": (lambda: export(Attention(pre=torch.log), *qkv()),
                                  "compute aten.log.default outside the model, or write the attention with a plain "
                                  "torch.softmax"),
    "softmax input with an infinite constant": (lambda: export(InfiniteOffset(), *qkv()), "make the constant finite"),
    "softmax mask hiding a row": (lambda: export(RowMaskedSoftmax(), rand(4, 8)), "mask fewer entries"),
    "softmax mask from a model input": (lambda: export(MaskFromInput(), rand(1, 8, 32),
                                                       torch.zeros(1, 8, dtype=torch.bool)),
                                        "make the mask a constant (a buffer, not computed from model inputs)"),
}


# --- quantize, lower, to_program, check -----------------------------------------------------------


def transposed_conv(precision):
    x = rand(1, 2, 4, 4)
    graph = export(nn.Sequential(nn.ConvTranspose2d(2, 2, 2, stride=2)), x)
    return graph if precision is None else cortexm.quantize(graph, [(x,)], progress=False, precision=precision)


def relu_graph():
    g = cortexm.Graph()
    x = g.add_input("x", [4, 6])
    g.outputs = [g.call("aten.linear.default", [g.call("aten.sqrt.default", [x], name="sqrt"),
                                                g.add_constant("w", np.ones((5, 6), np.float32))])]
    return g


def float_relu_at_output():
    q = {"scales": [0.05], "zero_points": [3]}
    g = cortexm.Graph()
    a = g.add_input("a", [1, 4], "int8", qparams=q)
    g.outputs = [g.call("aten.relu.default", [g.call("cortex_m.dequantize_per_tensor.default", [a], {
        "scale": 0.05, "zero_point": 3, "quant_min": -128, "quant_max": 127, "dtype": "int8"})], {})]
    return g


def float_relu_at_input():
    g = cortexm.Graph()
    g.outputs = [g.call("aten.relu.default", [g.add_input("x", [2, 3], "float32")], {})]
    return g


def check_report():
    """cortexm.check's report of unsupported ops: each problem line with its suggestion."""
    report = cortexm.check(nn.Sequential(nn.Linear(8, 8), Fn(lambda s, x: torch.cumsum(x, -1) * torch.erfinv(x))),
                           (rand(2, 8),))
    raise cortexm.UnsupportedError("\n".join(str(p) for p in report.problems))


NEGATIVE = -np.ones((4, 6), np.float32)
OTHER_STAGES = {
    "quantize: calibration with the wrong shape": (lambda: cortexm.quantize(relu_graph(), [np.ones((4, 5), np.float32)],
                                                                             progress=False),
                                                   "give samples of the example inputs' shapes and dtypes"),
    "quantize: calibration with too many inputs": (lambda: cortexm.quantize(relu_graph(), [(NEGATIVE, NEGATIVE)],
                                                                             progress=False),
                                                   "give each sample as a tuple of one array per graph input"),
    "quantize: empty calibration": (lambda: cortexm.quantize(relu_graph(), [], progress=False),
                                    "give e.g. [(x,) for x in samples]"),
    "quantize: NaN inside the model": (lambda: cortexm.quantize(relu_graph(), [NEGATIVE], progress=False),
                                       "keep the op's inputs in its domain (clamp before log / sqrt / division)"),
    "quantize: attention mask in 16x8": (lambda: cortexm.quantize(export(Attention(mask=torch.triu(
        torch.full((8, 8), float("-inf")), 1)), *qkv()), [qkv()], progress=False, precision="16x8"),
        "quantize with precision='int8'"),
    "lower: transposed convolution in 16x8": (lambda: cortexm.lower(transposed_conv("16x8")),
                                              "quantize it in int8 (precision='int8'"),
    "to_program: float transposed convolution": (lambda: cortexm.to_program(transposed_conv(None)),
                                                 "quantize it in int8 (precision='int8'"),
    "lower: a float graph": (lambda: cortexm.lower(relu_graph()), "run cortexm.quantize(graph, calibration) first"),
    "to_program io='int8': a float input": (lambda: cortexm.to_program(float_relu_at_input(), io="int8"),
                                            "use io='float'"),
    "to_program io='int8': a float output": (lambda: cortexm.to_program(float_relu_at_output(), io="int8"),
                                             "use io='float'"),
    "check: unsupported ops": (check_report, "x @ U with U = torch.triu"),
}

CASES = {**EXPORT, **OTHER_STAGES}

# How a suggestion starts: after "<what is wrong>: " or "; ", an instruction.
SUGGESTION = re.compile(r"[:;] (for [^;]*?:? )?(use|give|make|run|quantize|compute|export|pad|drop|mask|index|"
                        r"divide|keep|convert|reverse|multiply|rewrite|write|add|return|repeat|fill|dequantize|"
                        r"expand|pass)\b")


def refusal_lines(message: str) -> list[str]:
    """One line per refused thing: a multi-problem message's header ('N unsupported ops:') is not one."""
    lines = message.splitlines()
    return [line for line in lines if not re.search(r"\d+ (unsupported ops|nodes? .*):$", line)]


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_every_refusal_says_what_to_do_instead(case):
    make, fragment = CASES[case]
    with pytest.raises((NotImplementedError, ValueError)) as info:
        make()
    message = str(info.value)
    assert fragment in message, message
    lines = refusal_lines(message)
    assert lines, message
    for line in lines:
        assert SUGGESTION.search(line), f"no suggestion in: {line}"


def test_each_listed_export_problem_carries_its_suggestion():
    """The problems of a multi-op refusal (what cortexm.check reports) each end with their own."""
    module = nn.Sequential()
    module.add_module("first", Fn(lambda s, x: torch.cumsum(x, -1)))
    module.add_module("second", Fn(lambda s, x: torch.erfinv(x * 0.1)))
    with pytest.raises(cortexm.UnsupportedError) as info:
        cortexm.export(module.eval(), (rand(2, 3),))
    [(_, _, cumsum), (_, _, erfinv)] = info.value.problems
    assert cumsum.startswith("cortexm.export: aten.cumsum.default in module 'first' is not supported: multiply by a "
                             "constant triangular matrix")
    assert erfinv == ("cortexm.export: aten.erfinv.default in module 'second' is not supported: "
                      + cortexm._export.handlers.GENERIC_INSTEAD)


def test_an_op_gets_one_suggestion():
    from cortexm._export.handlers import instead

    with pytest.raises(ValueError, match="aten.cumsum.default has two suggestions"):
        instead("aten.cumsum.default", "again")
