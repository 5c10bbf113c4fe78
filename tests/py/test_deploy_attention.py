"""Attention through export -> quantize -> lower -> to_program: nn.MultiheadAttention,
F.scaled_dot_product_attention and a TransformerEncoderLayer-like block (no norms).

Export removes softmax's fully-masked-row branch when the softmax input cannot hold -inf
(_export/safe_softmax.py); the scores, softmax and weighted sum are quantized_batch_matmul,
quantized_softmax and quantized_batch_matmul, the scale a table. No float op left; the lowered
graph, its integer reference, the host program and QEMU's M55 bit-identical; the output SQNR
against float printed (-s) and bounded."""

import shutil

import numpy as np
import pytest

import cortexm
from cortexm import qemu
from numpy_reference.quantized_graph import QuantizedGraphReference

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

HAS_QEMU = shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")
TARGET = "cortex-m55+int8"
BMM = "cortex_m.quantized_batch_matmul.default"
SOFTMAX = "cortex_m.quantized_softmax.default"


class SelfAttention(nn.Module):
    def __init__(self, d_model=32, heads=2, **kwargs):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, heads, batch_first=True, **kwargs)

    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0]


class CrossAttention(nn.Module):
    """Queries from one sequence, keys and values from another of other length."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(32, 2, batch_first=True, kdim=24, vdim=24)

    def forward(self, x, memory):
        return self.attn(x, memory, memory, need_weights=False)[0]


class Sdpa(nn.Module):
    def __init__(self, **kwargs):
        super().__init__()
        self.kwargs = kwargs

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, **self.kwargs)


class EncoderBlock(nn.Module):
    """nn.TransformerEncoderLayer's computation (post-norm order) without its two LayerNorms."""

    def __init__(self, d_model=32, heads=2, ff=64, activation=F.relu):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, heads, batch_first=True)
        self.linear1, self.linear2 = nn.Linear(d_model, ff), nn.Linear(ff, d_model)
        self.activation = activation

    def forward(self, x):
        x = x + self.attn(x, x, x, need_weights=False)[0]
        return x + self.linear2(self.activation(self.linear1(x)))


def cases(shapes, n, seed):
    g = torch.Generator().manual_seed(seed)
    # Off-center and unevenly scaled, so the zero points are not 0.
    return [tuple(torch.randn(s, generator=g) * 1.3 + 0.3 for s in shapes) for _ in range(n)]


def sqnr_db(reference, quantized):
    ref = np.asarray(reference, np.float64).ravel()
    err = ref - np.asarray(quantized, np.float64).ravel()
    return float(10 * np.log10((ref ** 2).sum() / max((err ** 2).sum(), 1e-30)))


def check_deployed(module, shapes, seed, min_sqnr_db):
    """Bit-identical lowered graph, integer reference, host program and (when installed) QEMU M55;
    no float op; returns the lowered graph's op counts."""
    module = module.eval()
    qgraph = cortexm.quantize(cortexm.export(module, cases(shapes, 1, seed)[0]), cases(shapes, 8, seed + 1),
                              progress=False)
    lowered = cortexm.lower(qgraph, TARGET)
    program = cortexm.to_program(lowered, target=TARGET)
    counts = lowered.op_counts()
    assert all(op.startswith("cortex_m.") or op.endswith("_copy.default") or op.endswith("_copy.dims")
               or op.endswith("_copy.int") or op == "aten.cat.default" for op in counts), counts
    assert program.float_ops == 0
    xs = [tuple(t.numpy() for t in c) for c in cases(shapes, 4, seed + 2)]
    reference = QuantizedGraphReference(qgraph)
    host = []
    for x in xs:
        got = lowered.run(*x)
        np.testing.assert_array_equal(got, reference.run(*x)[0])
        out = program.run(*x)
        assert out.tobytes() == got.tobytes()
        host.append(out)
    if HAS_QEMU:
        target = qemu.run_cases(program, xs, cpu="cortex-m55")
        for got, want in zip(target, host):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes()
    with torch.no_grad():
        want = np.concatenate([module(*(torch.from_numpy(a) for a in x)).numpy().ravel() for x in xs])
    sqnr = sqnr_db(want, np.concatenate([h.ravel() for h in host]))
    print(f"{type(module).__name__} {shapes}: output SQNR against float {sqnr:.2f} dB")
    assert sqnr > min_sqnr_db
    return counts


def seeded(build, seed):
    torch.manual_seed(seed)
    return build()


def test_multihead_attention_deploys_int8_bit_identical():
    counts = check_deployed(seeded(SelfAttention, 1), [(1, 16, 32)], seed=1, min_sqnr_db=20.0)
    # Scores and weighted sum of both heads in one batch matmul each; one softmax.
    assert counts[BMM] == 2 and counts[SOFTMAX] == 1


def test_multihead_attention_batch_2_without_bias():
    counts = check_deployed(seeded(lambda: SelfAttention(bias=False), 2), [(2, 12, 32)], seed=2, min_sqnr_db=20.0)
    assert counts[BMM] == 2 and counts[SOFTMAX] == 1


def test_cross_attention_with_other_key_dims():
    counts = check_deployed(seeded(CrossAttention, 3), [(1, 16, 32), (1, 10, 24)], seed=3, min_sqnr_db=20.0)
    assert counts[BMM] == 2 and counts[SOFTMAX] == 1


@pytest.mark.parametrize("shapes, kwargs", [
    pytest.param([(1, 2, 16, 16)] * 3, {}, id="4d"),
    pytest.param([(2, 16, 8), (2, 12, 8), (2, 12, 8)], {"scale": 0.3}, id="3d-scale"),
    # Keys and values shared by both heads: broadcast by a cat of copies.
    pytest.param([(1, 2, 16, 16), (1, 1, 16, 16), (1, 1, 16, 16)], {}, id="shared-kv"),
])
def test_scaled_dot_product_attention_deploys_int8_bit_identical(shapes, kwargs):
    counts = check_deployed(Sdpa(**kwargs), shapes, seed=4, min_sqnr_db=20.0)
    assert counts[BMM] == 2 and counts[SOFTMAX] == 1


@pytest.mark.parametrize("activation", [F.relu, F.gelu], ids=["relu", "gelu"])
def test_encoder_block_without_norms_deploys_int8_bit_identical(activation):
    counts = check_deployed(seeded(lambda: EncoderBlock(activation=activation), 5), [(1, 16, 32)], seed=5,
                            min_sqnr_db=20.0)
    assert counts[BMM] == 2 and counts[SOFTMAX] == 1
