"""_export/safe_softmax.py and attention_mask.py: torch's fully-masked-row branch after softmax
goes when the softmax input cannot hold -inf; constant -inf masks are rewritten; the rest is
refused naming the softmax node and its module. Checked by running the exported graph against
torch (which runs the branch)."""

import numpy as np
import pytest

import cortexm

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

BRANCH_OPS = ("aten.eq.Scalar", "aten.any.dim", "aten.logical_not.default", "aten.where.self")


class Sdpa(nn.Module):
    def __init__(self, attn_mask=None, pre=None, **kwargs):
        super().__init__()
        self.register_buffer("attn_mask", attn_mask)
        self.pre = pre
        self.kwargs = kwargs

    def forward(self, q, k, v):
        if self.pre is not None:
            q = self.pre(q)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=self.attn_mask, **self.kwargs)


def inputs(seed=0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(1, 2, 8, 4, generator=g) for _ in range(3))


def exported_matches_torch(module):
    x = inputs()
    graph = cortexm.export(module.eval(), x)
    with torch.no_grad():
        want = module(*x).numpy()
    np.testing.assert_allclose(graph.run(*(t.numpy() for t in x)), want, rtol=1e-5, atol=1e-6)
    return graph.op_counts()


def test_the_branch_of_unmasked_attention_goes():
    counts = exported_matches_torch(Sdpa())
    assert not set(counts) & set(BRANCH_OPS) and counts["aten._softmax.default"] == 1


def test_multihead_attention_keeps_one_softmax_and_no_branch():
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    x = torch.randn(1, 5, 8)
    graph = cortexm.export(mha, (x, x, x))
    assert not set(graph.op_counts()) & set(BRANCH_OPS)
    with torch.no_grad():
        want = [t.numpy() for t in mha(x, x, x) if t is not None]
    got = graph.run(x.numpy(), x.numpy(), x.numpy())
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mask", [
    pytest.param(torch.triu(torch.full((8, 8), float("-inf")), 1), id="causal-float"),
    pytest.param(torch.ones(8, 8, dtype=torch.bool).tril(), id="causal-bool"),
    pytest.param(torch.where(torch.arange(8) < 6, torch.linspace(-2, 2, 8), torch.tensor(float("-inf")))[None],
                 id="float-biases-and-inf"),
])
def test_a_constant_mask_becomes_an_add_of_finite_constants(mask):
    counts = exported_matches_torch(Sdpa(mask))
    assert not set(counts) & set(BRANCH_OPS)
    finite_part = mask.dtype != torch.bool and bool(((mask != 0) & ~torch.isneginf(mask)).any())
    assert counts["aten.add.Tensor"] == (2 if finite_part else 1)


def test_a_row_masked_entirely_is_zero_as_in_torch():
    mask = torch.zeros(8, 8)
    mask[2] = float("-inf")
    counts = exported_matches_torch(Sdpa(mask))
    assert counts["aten.mul.Tensor"] == 1  # the 0 / 1 row multiplier


def test_is_causal_is_a_constant_mask():
    counts = exported_matches_torch(Sdpa(is_causal=True))
    assert not set(counts) & set(BRANCH_OPS)


@pytest.mark.parametrize("pre, message", [
    pytest.param(torch.log, r"'log' \(aten.log.default\) can make infinities of finite values", id="log"),
    pytest.param(lambda q: q / q.sum(-1, keepdim=True), r"'div' \(aten.div.Tensor\) can make infinities", id="div"),
])
def test_a_softmax_input_that_can_hold_minus_inf_is_refused(pre, message):
    with pytest.raises(cortexm.UnsupportedError, match=r"softmax '_softmax' in the top-level module: its input "
                                                       r"can hold -inf \(" + message):
        cortexm.export(Sdpa(pre=pre).eval(), inputs())


def test_a_constant_holding_infinity_is_refused():
    class AddsBuffer(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("offset", torch.tensor([0.0, float("inf"), 0.0, 0.0]))

        def forward(self, q, k, v):
            return F.scaled_dot_product_attention(q + self.offset, k, v)

    with pytest.raises(cortexm.UnsupportedError, match=r"the constant 'b_offset' holds non-finite values"):
        cortexm.export(AddsBuffer().eval(), inputs())


def test_an_attention_mask_in_16x8_is_refused_by_the_quantizer():
    x = inputs()
    graph = cortexm.export(Sdpa(is_causal=True).eval(), x)
    with pytest.raises(ValueError, match=r"node 'add' \(aten.add.Tensor, module ''\) adds an attention mask, "
                                         r"which cortexm quantizes in int8 only \(this sum is int16\)"):
        cortexm.quantize(graph, [x], progress=False, precision="16x8")
