"""state_feedback in int8 and 16x8: a streaming model's state output and the input it is fed back
to share one scale and zero point, so a program with integer I/O takes its state back byte for byte."""
import numpy as np
import pytest
import torch
from torch import nn

import cortexm
from cortexm import aot


class Streaming(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(6, 12)
        self.head = nn.Linear(12, 3)

    def forward(self, x, h):
        h = self.cell(x, h)
        return self.head(h), h


def _stream(n: int = 48):
    torch.manual_seed(0)
    model = Streaming().eval()
    # States drawn at random, not the stream's own: each side then has its own range unless tied.
    steps = [(torch.randn(1, 6), torch.rand(1, 12) * 1.5 - 0.5) for _ in range(n)]
    return model, steps


@pytest.fixture(scope="module")
def stream():
    model, steps = _stream()
    return cortexm.export(model, steps[0]), steps


def _boundary_qparams(program):
    return ([(p["scale"], p["zero_point"]) for p in program.inputs],
            [(p["scale"], p["zero_point"]) for p in program.outputs])


def _state_qparams(qgraph) -> tuple:
    """(scale, zero point, dtype) of the quantize reading the state input and of the dequantize
    giving the state output."""
    state_in, state_out = qgraph.inputs[1].name, qgraph.outputs[1].name
    quantize = next(n for n in qgraph.nodes if ".quantize_" in n.op and n.inputs[0].name == state_in)
    dequantize = next(n for n in qgraph.nodes if any(o.name == state_out for o in n.outputs))
    assert ".dequantize_" in dequantize.op
    return tuple((n.attrs["scale"], n.attrs["zero_point"], n.attrs["dtype"]) for n in (quantize, dequantize))


@pytest.mark.parametrize("precision, dtype", [("int8", "int8"), ("16x8", "int16")])
def test_state_output_and_input_share_qparams(stream, precision, dtype):
    graph, steps = stream
    untied = cortexm.quantize(graph, steps, cortexm.CortexMQuantizer(precision=precision), progress=False)
    state_in, state_out = _state_qparams(untied)
    assert state_in != state_out  # without the declaration each side has its own range
    tied = cortexm.quantize(graph, steps, cortexm.CortexMQuantizer(precision=precision, state_feedback={1: 1}),
                            progress=False)
    state_in, state_out = _state_qparams(tied)
    assert state_in == state_out and state_in[2] == dtype


def test_integer_stream_feeds_its_state_bytes_back(stream):
    graph, steps = stream
    quantizer = cortexm.CortexMQuantizer(state_feedback={1: 1})
    lowered = cortexm.lower(cortexm.quantize(graph, steps, quantizer, progress=False), "cortex-m55+int8")
    as_float, as_int8 = cortexm.to_program(lowered), cortexm.to_program(lowered, io="int8")
    x_q, h_q = as_int8.inputs
    h_float = np.zeros((1, 12), np.float32)
    h_int8 = np.full((1, 12), h_q["zero_point"], np.int8)  # the quantized zero state
    for x, _ in steps[:16]:
        x = x.numpy()
        y_float, h_float = as_float.run(x, h_float)
        x_int8 = np.clip(np.round(x / x_q["scale"]) + x_q["zero_point"], -128, 127).astype(np.int8)
        y_int8, h_int8 = as_int8.run(x_int8, h_int8)  # the state output goes straight back in
        h_deq = (h_int8.astype(np.float32) - h_q["zero_point"]) * np.float32(h_q["scale"])
        np.testing.assert_array_equal(h_deq, h_float)


def test_state_of_two_dtypes_is_refused(stream):
    graph, steps = stream
    quantizer = cortexm.CortexMQuantizer(state_feedback={1: 1}, int16_activations=["h"])
    with pytest.raises(ValueError, match=r"state_feedback \{1: 1\}: output .* is int8 and input 'h' is not; "
                                         r"give both the same activation dtype"):
        cortexm.quantize(graph, steps, quantizer, progress=False)


def test_state_feedback_must_name_an_output_and_an_input(stream):
    graph, steps = stream
    for feedback, message in (({2: 1}, "the graph has 2 outputs and 2 inputs"), ({0: 1}, "has shape")):
        with pytest.raises(ValueError, match=message):
            cortexm.quantize(graph, steps, cortexm.CortexMQuantizer(state_feedback=feedback), progress=False)


def test_aot_state_feedback_in_int8(tmp_path, capsys):
    factory = tmp_path / "stream.py"
    factory.write_text(
        "import torch\nfrom torch import nn\n"
        "class Streaming(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.cell = nn.GRUCell(6, 12)\n"
        "    def forward(self, x, h):\n"
        "        h = self.cell(x, h)\n"
        "        return h * 2, h\n"
        "def make():\n"
        "    torch.manual_seed(0)\n"
        "    return Streaming().eval(), (torch.randn(1, 6), torch.zeros(1, 12)), "
        "lambda n: [(torch.randn(1, 6), torch.rand(1, 12) - 0.5) for _ in range(n)]\n")
    out = tmp_path / "s.cmpte"
    assert aot.main(["--model", f"{factory}:make", "--quantize", "--state-feedback", "1:1", "--io", "int8",
                     "--output", str(out)]) == 0
    program = cortexm.load_program(str(out))
    assert _boundary_qparams(program)[0][1] == _boundary_qparams(program)[1][1]
