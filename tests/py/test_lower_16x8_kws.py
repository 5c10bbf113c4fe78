"""16x8 (symmetric int16 activations, int8 weights) max_pool2d, softmax, mean and bmm through export
-> quantize(precision="16x8") -> lower -> to_program: each lowers to its s16 kernel
(quantized_max_pool2d_s16, quantized_softmax_s16, quantized_mean_s16, quantized_batch_matmul_s16),
the lowered graph is bit-identical with the independent integer reference (numpy_reference), the
host program with the lowered graph and QEMU's M55 with the host; no float compute op is left. A
small KWS CNN (conv, relu, max_pool2d, mean, linear, softmax) deploys the same way, its output SQNR
against float printed (-s) and bounded."""

import shutil

import numpy as np
import pytest

import cortexm
from cortexm import qemu
import test_deploy_grouped_and_transposed_conv as deployed
from numpy_reference.quantized_graph import QuantizedGraphReference

torch = pytest.importorskip("torch")
nn = torch.nn

HAS_QEMU = shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")
TARGET = "cortex-m55+int8"
# What a lowered graph may keep outside cortex_m ops: moving values, no arithmetic.
DATA_MOVEMENT = {"aten.view_copy.default", "aten.squeeze_copy.dims", "aten.unsqueeze_copy.default",
                 "aten.permute_copy.default", "dim_order_ops._clone_dim_order.default",
                 "aten.select_copy.int", "aten.slice_copy.Tensor"}


def cases(shape, n, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=g) * 1.7 + 0.2 for _ in range(n)]


def check_deployed(build, shape, seed, want_ops, min_sqnr_db):
    """build() made under the seed (its weights do not depend on test order), quantized 16x8:
    want_ops among the lowered cortex_m ops, no aten compute op left, and (the grouped-conv test's
    check) no float op in the program, lowered == integer reference == host program == QEMU M55,
    the output SQNR against float above min_sqnr_db; returns the lowered graph's op counts."""
    torch.manual_seed(seed)
    module = build().eval()
    _, lowered, _, _ = deployed.deploy(module, shape, seed, precision="16x8")
    counts = lowered.op_counts()
    compute = sorted(op for op in counts if not op.startswith("cortex_m.") and op not in DATA_MOVEMENT)
    assert not compute, counts
    for op in want_ops:
        assert counts.get(op, 0) >= 1, (op, counts)
    deployed.check_deployed(module, shape, seed, min_sqnr_db, conv_op=want_ops[0], precision="16x8")
    return counts


class ConvPool(nn.Module):
    """conv, relu, max pool with ceil_mode's partial windows and padding, conv."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 5, 3, padding=1)
        self.b = nn.Conv2d(5, 4, 1)

    def forward(self, x):
        return self.b(nn.functional.max_pool2d(torch.relu(self.a(x)), 3, 2, padding=1, ceil_mode=True))


def test_max_pool2d_16x8_deploys_bit_identical():
    check_deployed(ConvPool, (2, 3, 10, 7), 3, ["cortex_m.quantized_max_pool2d_s16.default"], 35.0)


class Softmaxes(nn.Module):
    """softmax over the innermost dim, then over dim 1 of a conv's [N, C, T] output (moved
    innermost by the lowering)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(9, 11)
        self.conv = nn.Conv1d(4, 6, 3, padding=1)

    def forward(self, x):
        return torch.softmax(self.conv(torch.softmax(self.fc(x), dim=-1)), dim=1)


def test_softmax_16x8_deploys_bit_identical():
    check_deployed(Softmaxes, (2, 4, 9), 5, ["cortex_m.quantized_softmax_s16.default"], 30.0)


class Means(nn.Module):
    """A spatial mean of a conv's output (read channels-last), and a keepdim mean over the last
    dim of an [N, C, T] value (two means at other output qparams than their inputs')."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 7, 3, padding=1)
        self.b = nn.Conv1d(7, 5, 3)

    def forward(self, x):
        h = torch.relu(self.a(x))
        pooled = h.mean(dim=(2, 3))
        t = self.b(h.mean(dim=2))
        return pooled, t.mean(dim=-1, keepdim=True)


def test_mean_16x8_deploys_bit_identical():
    torch.manual_seed(7)
    module = Means().eval()
    shape = (2, 3, 9, 13)
    qgraph = cortexm.quantize(cortexm.export(module, (cases(shape, 1, 7)[0],)),
                              [(x,) for x in cases(shape, 8, 8)],
                              cortexm.CortexMQuantizer(precision="16x8"), progress=False)
    lowered = cortexm.lower(qgraph, TARGET)
    counts = lowered.op_counts()
    assert counts.get("cortex_m.quantized_mean_s16.default") == 3, counts
    assert "aten.mean.dim" not in counts, counts
    program = cortexm.to_program(lowered, target=TARGET)
    assert program.float_ops == 0
    reference = QuantizedGraphReference(qgraph)
    xs = cases(shape, 3, 9)
    host = []
    for x in xs:
        got = lowered.run(x.numpy())
        want = reference.run(x.numpy())
        out = program.run(x.numpy())
        for g, w, o in zip(got, want, out):
            np.testing.assert_array_equal(g, w)
            assert o.tobytes() == g.tobytes()
        host.append(out)
    if HAS_QEMU:
        target = qemu.run_cases(program, [(x.numpy(),) for x in xs], cpu="cortex-m55")
        for got, want in zip(target, host):
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.tobytes() == w.tobytes()


class KwsCnn(nn.Module):
    """A small keyword-spotting CNN over [N, 1, 49, 10] MFCC frames: conv, relu, max pool, conv,
    relu, global mean, linear, softmax over 12 classes."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 16, (5, 3), padding=(2, 1))
        self.c2 = nn.Conv2d(16, 24, 3, padding=1)
        self.fc = nn.Linear(24, 12)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.c1(x)), 2)
        x = torch.relu(self.c2(x))
        return torch.softmax(self.fc(x.mean(dim=(2, 3))), dim=-1)


def test_kws_cnn_16x8_deploys_with_no_float_fallback():
    check_deployed(KwsCnn, (1, 1, 49, 10), 11,
                   ["cortex_m.quantized_conv2d_s16.default", "cortex_m.quantized_max_pool2d_s16.default",
                    "cortex_m.quantized_mean_s16.default", "cortex_m.quantized_linear_s16.default",
                    "cortex_m.quantized_softmax_s16.default"], 45.0)


class Attention(nn.Module):
    """Scores q @ k^T (bmm, the rhs a permute of k's projection), softmax, @ v (bmm of a value
    whose rhs is permuted by the lowering), and an mm."""

    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(8, 6), nn.Linear(8, 6), nn.Linear(8, 5)

    def forward(self, x):
        scores = torch.bmm(self.q(x), self.k(x).transpose(1, 2))
        y = torch.bmm(torch.softmax(scores, dim=-1), self.v(x))
        return torch.mm(y[0], self.v(x)[1].transpose(0, 1))


def test_bmm_16x8_deploys_bit_identical():
    check_deployed(Attention, (2, 7, 8), 13, ["cortex_m.quantized_batch_matmul_s16.default",
                                             "cortex_m.quantized_softmax_s16.default"], 35.0)
