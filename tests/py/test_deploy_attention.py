"""Attention through export -> quantize -> lower -> to_program: nn.MultiheadAttention,
F.scaled_dot_product_attention, an encoder block without norms and nn.TransformerEncoderLayer.

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
from sqnr import sqnr_db

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

    def __init__(self, d_model=32, heads=2, ff=64, activation=F.relu, mask=None):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, heads, batch_first=True)
        self.linear1, self.linear2 = nn.Linear(d_model, ff), nn.Linear(ff, d_model)
        self.activation = activation
        self.register_buffer("mask", mask)

    def forward(self, x):
        x = x + self.attn(x, x, x, attn_mask=self.mask, need_weights=False)[0]
        return x + self.linear2(self.activation(self.linear1(x)))


def cases(shapes, n, seed):
    g = torch.Generator().manual_seed(seed)
    # Off-center and unevenly scaled, so the zero points are not 0.
    return [tuple(torch.randn(s, generator=g) * 1.3 + 0.3 for s in shapes) for _ in range(n)]


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


@pytest.mark.parametrize("activation, mask", [(F.relu, None), (F.gelu, None), (F.relu, "causal")],
                         ids=["relu", "gelu", "relu-causal"])
def test_encoder_block_without_norms_deploys_int8_bit_identical(activation, mask):
    mask = None if mask is None else torch.triu(torch.full((16, 16), float("-inf")), 1)
    counts = check_deployed(seeded(lambda: EncoderBlock(activation=activation, mask=mask), 5), [(1, 16, 32)],
                            seed=5, min_sqnr_db=20.0)
    assert counts[BMM] == 2 and counts[SOFTMAX] == 1


# --- masks ------------------------------------------------------------------------------------

SEQ = 16
CAUSAL = torch.triu(torch.full((SEQ, SEQ), float("-inf")), 1)  # float additive: -inf above the diagonal


class MaskedSelfAttention(nn.Module):
    """MultiheadAttention with constant masks (buffers): attn_mask float or bool (True = masked),
    key_padding_mask bool [batch, keys] (True = padding)."""

    def __init__(self, attn_mask=None, key_padding_mask=None):
        super().__init__()
        self.attn = nn.MultiheadAttention(32, 2, batch_first=True)
        self.register_buffer("attn_mask", attn_mask)
        self.register_buffer("key_padding_mask", key_padding_mask)

    def forward(self, x):
        return self.attn(x, x, x, attn_mask=self.attn_mask, key_padding_mask=self.key_padding_mask,
                         need_weights=False)[0]


class MaskedSdpa(nn.Module):
    def __init__(self, attn_mask=None, **kwargs):
        super().__init__()
        self.register_buffer("attn_mask", attn_mask)
        self.kwargs = kwargs

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=self.attn_mask, **self.kwargs)


def runs_of(op, lowered, inputs):
    """(node, its first input, its output) for each node running op when the lowered graph runs inputs."""
    values = dict(zip((v.name for v in lowered.inputs), inputs))
    runs = []

    def observe(node, outputs):
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        values.update((v.name, o) for v, o in zip(node.outputs, outputs))
        if node.op == op:
            runs.append((node, values[node.inputs[0].name], outputs[0]))

    lowered.run(*inputs, observe=observe)
    return runs


def check_masked_softmax(lowered, inputs, masked):
    """Masked entries (a bool array broadcasting to the softmax input) are -128 (probability 0)
    and every other entry is what the kernel's arithmetic gives its row without the masked ones.
    (A row masked entirely is uniform here; a row multiplier after the softmax makes it 0.)"""
    from numpy_reference.softmax import softmax

    (node, x, p), = runs_of(SOFTMAX, lowered, inputs)
    masked = np.broadcast_to(masked, x.shape)
    assert (p[masked & ~masked.all(axis=-1, keepdims=True)] == -128).all()
    a = node.attrs
    for row_x, row_p, row_m in zip(x.reshape(-1, x.shape[-1]), p.reshape(-1, p.shape[-1]),
                                   masked.reshape(-1, x.shape[-1])):
        if row_m.all():
            continue
        alone = softmax(row_x[~row_m][None, :], a["input_multiplier"], a["input_shift"], a["diff_min"])
        np.testing.assert_array_equal(row_p[~row_m], alone[0])
    return p


def lowered_of(module, shapes, seed):
    qgraph = cortexm.quantize(cortexm.export(module.eval(), cases(shapes, 1, seed)[0]), cases(shapes, 8, seed + 1),
                              progress=False)
    return cortexm.lower(qgraph, TARGET)


@pytest.mark.parametrize("build, masked", [
    pytest.param(lambda: MaskedSelfAttention(attn_mask=CAUSAL), torch.isneginf(CAUSAL), id="causal-float"),
    pytest.param(lambda: MaskedSelfAttention(attn_mask=torch.isneginf(CAUSAL)), torch.isneginf(CAUSAL),
                 id="causal-bool"),
    pytest.param(lambda: MaskedSelfAttention(key_padding_mask=torch.arange(SEQ)[None, :] >= 11),
                 (torch.arange(SEQ) >= 11)[None, None, None, :], id="key-padding"),
    pytest.param(lambda: MaskedSelfAttention(attn_mask=torch.isneginf(CAUSAL),
                                             key_padding_mask=torch.arange(SEQ)[None, :] >= 13),
                 torch.isneginf(CAUSAL) | (torch.arange(SEQ) >= 13), id="causal-and-key-padding"),
])
def test_masked_multihead_attention_deploys_with_masked_probabilities_exactly_0(build, masked):
    module = seeded(build, 6)
    counts = check_deployed(module, [(1, SEQ, 32)], seed=6, min_sqnr_db=15.0)
    assert counts[BMM] == 2 and counts[SOFTMAX] == 1
    lowered = lowered_of(module, [(1, SEQ, 32)], seed=6)
    for x in cases([(1, SEQ, 32)], 3, 7):
        check_masked_softmax(lowered, [x[0].numpy()], masked.numpy())


def test_scaled_dot_product_attention_causal_and_masks():
    shapes = [(1, 2, SEQ, 16)] * 3
    lowered = lowered_of(Sdpa(is_causal=True), shapes, seed=8)
    check_deployed(Sdpa(is_causal=True), shapes, seed=8, min_sqnr_db=15.0)
    causal = torch.isneginf(CAUSAL).numpy()
    for x in cases(shapes, 2, 9):
        check_masked_softmax(lowered, [t.numpy() for t in x], causal)
    # A bool mask (True = attend) and a float one mixing finite biases with -inf.
    allowed = torch.rand(SEQ, SEQ, generator=torch.Generator().manual_seed(1)) > 0.3
    allowed |= torch.eye(SEQ, dtype=torch.bool)
    check_deployed(MaskedSdpa(allowed), shapes, seed=8, min_sqnr_db=15.0)
    biased = torch.where(allowed, torch.linspace(-1, 1, SEQ), torch.tensor(float("-inf")))
    check_deployed(MaskedSdpa(biased), shapes, seed=8, min_sqnr_db=15.0)


def test_a_fully_masked_row_gives_zeros_as_torch():
    """torch's safe softmax makes a row masked entirely 0 (the attention output there is the output
    projection's bias); cortexm multiplies the softmax by a constant 0 / 1 per row: exactly 0."""
    mask = torch.zeros(SEQ, SEQ)
    mask[3, :] = float("-inf")
    mask[5, 7:] = float("-inf")
    module = seeded(lambda: MaskedSelfAttention(attn_mask=mask), 10)
    check_deployed(module, [(1, SEQ, 32)], seed=10, min_sqnr_db=15.0)
    lowered = lowered_of(module, [(1, SEQ, 32)], seed=10)
    assert lowered.op_counts()["cortex_m.quantized_mul.default"] == 1
    x = cases([(1, SEQ, 32)], 1, 11)[0][0]
    out = lowered.run(x.numpy())
    with torch.no_grad():
        want = module(x).numpy()
    bias = module.attn.out_proj.bias.detach().numpy()
    np.testing.assert_allclose(want[0, 3], bias, atol=1e-6)  # torch: row 3 attends to nothing
    assert np.abs(out[0, 3] - bias).max() < 0.05  # the bias, quantized
    check_masked_softmax(lowered, [x.numpy()], torch.isneginf(mask).numpy())
    (mul, _, p), = runs_of("cortex_m.quantized_mul.default", lowered, [x.numpy()])
    assert (p[:, :, 3] == mul.attrs["output_zero_point"]).all()  # probabilities exactly 0.0
    assert (p[:, :, 5] != mul.attrs["output_zero_point"]).any()


class RowMaskedSoftmax(nn.Module):
    def __init__(self):
        super().__init__()
        mask = torch.zeros(4, 8)
        mask[1] = float("-inf")
        self.register_buffer("mask", mask)

    def forward(self, x):
        return torch.softmax(x + self.mask, dim=-1)


def test_plain_softmax_of_a_fully_masked_row_is_refused():
    with pytest.raises(cortexm.UnsupportedError, match=r"softmax '_softmax' in the top-level module: its mask "
                                                       r"hides every entry of a row"):
        cortexm.export(RowMaskedSoftmax(), (torch.randn(4, 8),))


class MaskFromInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(32, 2, batch_first=True)

    def forward(self, x, padding):
        return self.attn(x, x, x, key_padding_mask=padding, need_weights=False)[0]


def test_a_mask_computed_from_model_inputs_is_refused_naming_the_node_and_module():
    with pytest.raises(cortexm.UnsupportedError, match=r"softmax '_softmax' in module 'attn': its input can "
                                                       r"hold -inf .*scalar_tensor.*constants"):
        cortexm.export(MaskFromInput().eval(), (torch.randn(1, SEQ, 32), torch.zeros(1, SEQ, dtype=torch.bool)))


# --- nn.TransformerEncoderLayer (needs the layer norm lowering) -------------------------------


@pytest.mark.parametrize("kwargs, mask", [
    pytest.param({}, None, id="post-norm-relu"),
    pytest.param({"norm_first": True}, None, id="norm-first"),
    pytest.param({"activation": "gelu"}, None, id="gelu"),
    pytest.param({"norm_first": True, "activation": "gelu"}, "causal", id="norm-first-gelu-causal"),
])
def test_transformer_encoder_layer_deploys_int8_bit_identical(kwargs, mask):
    """The issue's model: d_model 32, 2 heads, 16 tokens, batch_first, dropout 0."""

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(32, 2, 64, batch_first=True, dropout=0.0, **kwargs)
            self.register_buffer("mask", None if mask is None else torch.triu(torch.full((16, 16), float("-inf")), 1))

        def forward(self, x):
            return self.layer(x, src_mask=self.mask)

    counts = check_deployed(seeded(Encoder, 12), [(1, 16, 32)], seed=12, min_sqnr_db=20.0)
    assert counts[BMM] == 2 and counts[SOFTMAX] == 1
