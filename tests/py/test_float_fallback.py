"""Float fallback: every aten compute op a program can hold runs through the portable kernels, bit
for bit as the interpreter, counted in Program.float_ops; the loader names a bad params field of
the float kernels before any arithmetic."""

import numpy as np
import pytest

import cortexm
from test_program import FLATC, from_json, load_bytes, to_json

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional


class FloatNet(nn.Module):
    """One of each float kernel: conv (grouped, 1-D), pools, linear, addmm, mm, bmm, and the unary
    functions with constants."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 6, 3, padding=1, stride=2, groups=2)
        self.conv1d = nn.Conv1d(6, 4, 2, dilation=2)
        self.fc = nn.Linear(4, 5)
        self.w = nn.Parameter(torch.randn(5, 3))
        self.b = nn.Parameter(torch.randn(3))

    def forward(self, x, y):
        x = F.max_pool2d(self.conv(x), 2, ceil_mode=True)  # [1, 6, 4, 4] -> [1, 6, 2, 2]
        x = x + F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False)
        x = F.adaptive_avg_pool2d(torch.clamp(x, -0.5, 2.0), (2, 3)) ** 3  # [1, 6, 2, 3]
        x = F.relu6(self.conv1d(x.flatten(2) * 1.5 - 0.25) / 3.0 + 2.0)  # [1, 4, 4]
        h = self.fc(x.transpose(1, 2))  # [1, 4, 5]
        z = torch.addmm(self.b, h[0], self.w)  # [4, 3]
        return torch.bmm(h, y) + (z @ z.t())  # [1, 4, 4]


def float_program():
    torch.manual_seed(0)
    model = FloatNet().eval()
    inputs = (torch.randn(1, 4, 8, 8), torch.randn(1, 5, 4))
    graph = cortexm.export(model, inputs)
    return graph, cortexm.to_program(graph), [x.numpy() for x in inputs], model


def test_every_float_kernel_runs_bit_exact_with_the_interpreter():
    graph, program, inputs, model = float_program()
    kernels = {op["kernel"] for op in program.ops()}
    assert {"FloatConvolution", "FloatPool2d", "FloatMatmul", "FloatUnary", "FloatBinary"} <= kernels
    compute = [n for n in graph.nodes if not cortexm._core.op_info(n.op).is_data_movement]
    assert program.float_ops == len(compute)
    assert f"({program.float_ops} float fallback)" in program.summary()
    assert program.run(*inputs).tobytes() == graph.run(*inputs).tobytes()
    # torch's own float kernels sum in an order that depends on the CPU (oneDNN's AVX2 and AVX-512
    # paths differ): 4 ulp at 46.03 on an AVX2-only EPYC. Close to torch relative to float32's
    # precision; bit-exact with the interpreter above.
    with torch.no_grad():
        np.testing.assert_allclose(program.run(*inputs), model(*map(torch.from_numpy, inputs)).numpy(),
                                   rtol=1e-6, atol=1e-5)


def test_float_transposed_convolution_is_refused_naming_the_node():
    graph = cortexm.export(nn.Sequential(nn.ConvTranspose2d(2, 3, 2)).eval(), (torch.randn(1, 2, 4, 4),))
    assert cortexm._core.op_info("aten.convolution.default").runnable
    [problem] = cortexm._core.program_problems(graph)
    assert problem["op"] == "aten.convolution.default" and problem["source"] == "0"
    assert "transposed convolution has no float kernel" in problem["reason"]
    with pytest.raises(NotImplementedError, match=r"node '\w+' \(aten.convolution.default\) in module '0' cannot run"):
        cortexm.to_program(graph)


def first_op(doc, kernel):
    return next(op for op in doc["ops"] if op["kernel"] == kernel)


def set_param(kernel, field, value):
    def edit(doc):
        first_op(doc, kernel)["params"][field] = value

    edit.__name__ = f"{kernel}_{field}_{value}"
    return edit


EDITS = {
    set_param("FloatConvolution", "stride_w", 0): r"\('\w+', FloatConvolution\): stride\[1\] = 0: must be in \[1, 2\^30\]",
    set_param("FloatConvolution", "groups", 3): r"FloatConvolution\): groups = 3: must divide the input channels",
    set_param("FloatPool2d", "kernel_h", 0): r"FloatPool2d\): kernel_size\[0\] = 0: must be in \[1, 2\^30\]",
    set_param("FloatPool2d", "pad_w", 5): r"FloatPool2d\): padding\[1\] = 5: must be in \[0, kernel_size / 2\]",
    set_param("FloatMatmul", "kind", "Mm"): r"\('linear', FloatMatmul\): inputs.size = 3: must be the kind's input count",
    set_param("FloatUnary", "fn", 99): r"FloatUnary\): params.fn = 99: must be a known UnaryFn",
    set_param("FloatPool2d", "kind", 7): r"FloatPool2d\): params.kind = 7: must be a known Pool2dKind",
}


@pytest.mark.skipif(FLATC is None, reason="flatc not installed")
@pytest.mark.parametrize("edit", list(EDITS), ids=[f.__name__ for f in EDITS])
def test_the_loader_names_a_bad_float_kernel_field(edit, tmp_path):
    _, program, _, _ = float_program()
    doc = to_json(program.data, tmp_path)
    edit(doc)
    with pytest.raises(ValueError, match=EDITS[edit]):
        load_bytes(from_json(doc, tmp_path))
