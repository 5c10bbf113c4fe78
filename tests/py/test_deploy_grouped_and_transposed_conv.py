"""Grouped convolution (groups neither 1 nor C_in) and ConvTranspose1d through export ->
quantize -> lower -> to_program. Grouped: per-channel int8 weights, one cortex_m.quantized_conv2d
with C_in / groups channels per filter (the conv kernels take groups); ConvTranspose1d: one
quantized_transpose_conv2d over the (N, C, 1, W) view. No float op left; the lowered graph, its
integer reference, the host program and QEMU's M55 bit-identical; the output SQNR against float
printed (-s) and bounded. 16x8 (quantized_conv2d_s16) and GPTQ weight rounding take groups too."""

import shutil

import numpy as np
import pytest

import cortexm
from cortexm import qemu
from numpy_reference.quantized_graph import QuantizedGraphReference
from sqnr import sqnr_db

torch = pytest.importorskip("torch")
nn = torch.nn

QCONV = "cortex_m.quantized_conv2d.default"
HAS_QEMU = shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")
TARGET = "cortex-m55+int8"


class Grouped(nn.Module):
    """The issue's model: a groups = 2 conv, relu, an ordinary conv."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(4, 8, 3, groups=2, padding=1)
        self.d = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        return self.d(torch.relu(self.c(x)))


def cases(shape, n, seed):
    g = torch.Generator().manual_seed(seed)
    # Off-center and unevenly scaled, so the zero points are not 0.
    return [(torch.randn(shape, generator=g) * 1.3 + 0.3,) for _ in range(n)]


def deploy(module, shape, seed, **quantize_args):
    """(qgraph, lowered graph, program, test inputs) of module quantized on random calibration data."""
    torch.manual_seed(seed)
    module = module.eval()
    qgraph = cortexm.quantize(cortexm.export(module, cases(shape, 1, seed)[0]), cases(shape, 8, seed + 1),
                              progress=False, **quantize_args)
    lowered = cortexm.lower(qgraph, TARGET)
    program = cortexm.to_program(lowered, target=TARGET)
    return qgraph, lowered, program, [x for (x,) in cases(shape, 4, seed + 2)]


def check_deployed(module, shape, seed, min_sqnr_db, conv_op=QCONV, **quantize_args):
    """Bit-identical lowered graph, integer reference, host program and (when installed) QEMU M55;
    no float compute op; returns the lowered graph's conv_op nodes."""
    qgraph, lowered, program, xs = deploy(module, shape, seed, **quantize_args)
    counts = lowered.op_counts()
    assert "aten.convolution.default" not in counts, counts
    assert program.float_ops == 0
    reference = QuantizedGraphReference(qgraph)
    host = []
    for x in xs:
        got = lowered.run(x.numpy())
        np.testing.assert_array_equal(got, reference.run(x.numpy())[0])
        out = program.run(x.numpy())
        assert out.tobytes() == got.tobytes()
        host.append(out)
    if HAS_QEMU:
        target = qemu.run_cases(program, [(x.numpy(),) for x in xs], cpu="cortex-m55")
        for got, want in zip(target, host):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes()
    with torch.no_grad():
        want = np.concatenate([module(x).numpy().ravel() for x in xs])
    sqnr = sqnr_db(want, np.concatenate([h.ravel() for h in host]))
    print(f"{type(module).__name__} {tuple(shape)} {quantize_args}: output SQNR against float {sqnr:.2f} dB")
    assert sqnr > min_sqnr_db
    return [n for n in lowered.nodes if n.op == conv_op]


# Builders, so each module's weights come from the test's seed, not from import order.
GROUPED = [
    # groups 2, 2 input / 3 output channels per group, stride 2, padding.
    pytest.param(lambda: nn.Conv2d(4, 6, 3, groups=2, stride=2, padding=1), (1, 4, 9, 11), id="g2-s2-pad"),
    # groups 3, odd channels per group (3 in, 5 out), dilation 2, rectangular kernel and padding.
    pytest.param(lambda: nn.Conv2d(9, 15, (3, 2), groups=3, dilation=2, padding=(2, 1)), (1, 9, 8, 7), id="g3-dil2"),
    # groups 3 with 1 output channel per group and no bias, batch 2.
    pytest.param(lambda: nn.Conv2d(6, 3, 3, groups=3, stride=(2, 1), bias=False), (2, 6, 7, 6), id="g3-cout3-nobias"),
    # 1-D: groups 3, 3 input / 2 output channels per group, stride 2, padding, dilation 2.
    pytest.param(lambda: nn.Conv1d(9, 6, 3, groups=3, stride=2, padding=2, dilation=2), (1, 9, 23), id="conv1d-g3"),
    # 1-D: groups 2 followed by relu (fused into the kernel's range).
    pytest.param(lambda: nn.Sequential(nn.Conv1d(10, 6, 5, groups=2, padding=1), nn.ReLU()), (2, 10, 17),
                 id="conv1d-g2-relu"),
]


def seeded(build, seed):
    torch.manual_seed(seed)
    return build()


@pytest.mark.parametrize("build, shape", GROUPED)
def test_grouped_conv_deploys_int8_bit_identical(build, shape):
    module = seeded(build, 3)
    (conv,) = check_deployed(module, shape, seed=3, min_sqnr_db=25.0)
    torch_conv = module[0] if isinstance(module, nn.Sequential) else module
    c_out, per_group = torch_conv.weight.shape[:2]
    # One kernel call: OHWI filters over C_in / groups channels (the kernel's groups = C_in / that).
    w = conv.inputs[1]
    assert w.shape[0] == c_out and w.shape[3] == per_group
    assert conv.inputs[0].shape[1] // per_group == torch_conv.groups


def test_the_issue_model_has_no_float_compute_left():
    convs = check_deployed(seeded(Grouped, 5), (1, 4, 10, 10), seed=5, min_sqnr_db=25.0)
    assert len(convs) == 2
    assert convs[0].meta.get("fused_activation") == "aten.relu.default"


def grouped_net():
    torch.manual_seed(11)
    return nn.Sequential(nn.Conv2d(6, 9, 3, groups=3, padding=1), nn.ReLU(), nn.Conv2d(9, 4, 1))


def test_grouped_conv_in_16x8_lowers_to_the_s16_conv():
    convs = check_deployed(grouped_net(), (1, 6, 8, 8), seed=7, min_sqnr_db=40.0,
                           conv_op="cortex_m.quantized_conv2d_s16.default", precision="16x8")
    assert len(convs) == 2 and convs[0].inputs[1].shape == (9, 3, 3, 2)


def test_grouped_conv_with_gptq_rounding():
    from cortexm.quantizer import CortexMQuantizer

    convs = check_deployed(grouped_net(), (1, 6, 8, 8), seed=7, min_sqnr_db=25.0,
                           quantizer=CortexMQuantizer(weight_rounding="gptq"))
    assert len(convs) == 2 and convs[0].inputs[1].shape == (9, 3, 3, 2)


@pytest.mark.parametrize("build, shape", [
    pytest.param(lambda: nn.ConvTranspose1d(6, 5, 4, stride=2, padding=1), (1, 6, 11), id="k4-s2-p1"),
    pytest.param(lambda: nn.Sequential(nn.ConvTranspose1d(3, 7, 5, stride=3, padding=2, output_padding=1),
                                       nn.ReLU(), nn.Conv1d(7, 4, 3)), (2, 3, 9), id="k5-s3-relu-conv"),
])
def test_conv_transpose1d_deploys_int8_bit_identical(build, shape):
    convs = check_deployed(seeded(build, 4), shape, seed=4, min_sqnr_db=25.0,
                           conv_op="cortex_m.quantized_transpose_conv2d.default")
    assert len(convs) == 1 and convs[0].inputs[1].shape[1] == 1  # OHWI with KH = 1
