"""Layer norm: nn.LayerNorm / F.layer_norm (aten.native_layer_norm) and a hand-written layer norm
export as one aten.layer_norm graph op, which runs in float (the interpreter and a program's
LayerNorm float fallback compute the same bits) until it is lowered."""

import numpy as np
import pytest

import cortexm

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

LN = "aten.layer_norm.default"


def randomize(module, seed=0):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return module.eval()


class Functional(nn.Module):
    def __init__(self, affine):
        super().__init__()
        self.w = nn.Parameter(torch.ones(16)) if affine else None
        self.b = nn.Parameter(torch.zeros(16)) if affine else None

    def forward(self, x):
        return F.layer_norm(x, (16,), self.w, self.b, eps=1e-3)


class HandWritten(nn.Module):
    """try18.py's layer norm: (x - m) / sqrt(v + eps) * w + b."""

    def __init__(self):
        super().__init__()
        self.w, self.b = nn.Parameter(torch.ones(16)), nn.Parameter(torch.zeros(16))

    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        v = ((x - m) ** 2).mean(-1, keepdim=True)
        return (x - m) / torch.sqrt(v + 1e-5) * self.w + self.b


class VarRsqrt(nn.Module):
    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        v = x.var(-1, unbiased=False, keepdim=True)
        return (x - m) * torch.rsqrt(v + 1e-5)


class SquareByMul(nn.Module):
    """One x - m node squared by mul, the weight first, eps first, no bias."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(16))

    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        d = x - m
        v = (d * d).mean(dim=2, keepdim=True)
        return self.w * (d * torch.rsqrt(1e-3 + v))


class BiasOnly(nn.Module):
    def __init__(self):
        super().__init__()
        self.b = nn.Parameter(torch.zeros(16))

    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        v = ((x - m) ** 2).mean(-1, keepdim=True)
        return (x - m) / torch.sqrt(v + 1e-5) + self.b


FUSED = [  # module, eps, has weight, has bias
    (nn.LayerNorm(16), 1e-5, True, True),
    (nn.LayerNorm(16, bias=False), 1e-5, True, False),
    (nn.LayerNorm([3, 16], elementwise_affine=False), 1e-5, False, False),
    (Functional(True), 1e-3, True, True),
    (Functional(False), 1e-3, False, False),
    (HandWritten(), 1e-5, True, True),
    (VarRsqrt(), 1e-5, False, False),
    (SquareByMul(), 1e-3, True, False),
    (BiasOnly(), 1e-5, False, True),
]


@pytest.mark.parametrize("module,eps,weight,bias", FUSED, ids=lambda c: type(c).__name__ if isinstance(c, nn.Module) else None)
def test_exports_as_one_layer_norm_op(module, eps, weight, bias):
    module = randomize(module)
    x = torch.randn(2, 3, 16)
    graph = cortexm.export(module, (x,))
    assert [n.op for n in graph.nodes] == [LN]
    node = graph.nodes[0]
    assert node.attrs["eps"] == pytest.approx(eps)
    assert (node.inputs[1] is not None, node.inputs[2] is not None) == (weight, bias)
    np.testing.assert_allclose(graph.run(x.numpy()), module(x).detach().numpy(), atol=2e-6, rtol=1e-5)


class MeanAlsoOutput(nn.Module):
    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        d = x - m
        return d / torch.sqrt((d * d).mean(-1, keepdim=True) + 1e-5), m


class NotLastDim(nn.Module):
    def forward(self, x):
        m = x.mean(1, keepdim=True)
        return (x - m) / torch.sqrt(((x - m) ** 2).mean(1, keepdim=True) + 1e-5)


class WeightFromInput(nn.Module):
    def forward(self, x, w):
        m = x.mean(-1, keepdim=True)
        return (x - m) / torch.sqrt(((x - m) ** 2).mean(-1, keepdim=True) + 1e-5) * w


class Unbiased(nn.Module):
    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        return (x - m) * torch.rsqrt(x.var(-1, keepdim=True) + 1e-5)


class OtherMean(nn.Module):
    """The variance of another tensor: not a layer norm."""

    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        y = x * 2
        my = y.mean(-1, keepdim=True)
        return (x - m) / torch.sqrt(((y - my) ** 2).mean(-1, keepdim=True) + 1e-5)


def test_near_misses_are_left_alone():
    x = torch.randn(2, 3, 16)
    for module in (MeanAlsoOutput(), NotLastDim(), OtherMean()):
        graph = cortexm.export(module.eval(), (x,))
        assert LN not in [n.op for n in graph.nodes], type(module).__name__
        got = graph.run(x.numpy())
        want = module(x)
        got = got if isinstance(got, (tuple, list)) else [got]
        want = want if isinstance(want, tuple) else [want]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w.numpy(), atol=1e-5, rtol=1e-5)
    # The weight is computed at run time: the normalization fuses, the product stays a mul.
    graph = cortexm.export(WeightFromInput().eval(), (x, torch.randn(16)))
    assert [n.op for n in graph.nodes] == [LN, "aten.mul.Tensor"]
    # An unbiased variance is no layer norm (and var has no graph op: export refuses it).
    with pytest.raises(cortexm.UnsupportedError, match="aten.var.correction"):
        cortexm.export(Unbiased().eval(), (x,))


class UsesStatistics(nn.Module):
    def forward(self, x):
        y, mean, rstd = torch.ops.aten.native_layer_norm(x, [16], None, None, 1e-5)
        return y + mean


def test_a_used_mean_output_is_refused_by_name():
    with pytest.raises(cortexm.UnsupportedError, match="aten.native_layer_norm.default.*mean output is used"):
        cortexm.export(UsesStatistics().eval(), (torch.randn(2, 16),))


def test_graph_op_checks_its_arguments():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 5, 8], "float32")
    w = g.add_constant("w", np.ones(5, np.float32))
    with pytest.raises(ValueError, match="normalized_shape.*trailing dims"):
        g.call(LN, [x, None, None], {"normalized_shape": [5], "eps": 1e-5})
    with pytest.raises(ValueError, match="weight \\[5\\] must have shape normalized_shape \\[8\\]"):
        g.call(LN, [x, w, None], {"normalized_shape": [8], "eps": 1e-5})
    with pytest.raises(ValueError, match="eps"):
        g.call(LN, [x, None, None], {"normalized_shape": [8], "eps": -1.0})


@pytest.mark.parametrize("module", [nn.LayerNorm(16), nn.LayerNorm([3, 16], elementwise_affine=False),
                                    BiasOnly()], ids=["affine", "two-dims", "bias-only"])
def test_float_fallback_program_is_bit_exact_with_the_graph(module):
    module = randomize(module, 1)
    x = torch.randn(2, 3, 16)
    graph = cortexm.export(module, (x,))
    program = cortexm.to_program(graph)
    assert program.float_ops == 1
    for seed in range(3):
        x = torch.randn(2, 3, 16, generator=torch.Generator().manual_seed(seed)) * 10 + seed
        assert np.asarray(program.run(x.numpy())).tobytes() == np.asarray(graph.run(x.numpy())).tobytes()
