"""CortexMQuantizer(weight_rounding="gptq"): GPTQ rounding of conv / linear / addmm weights against
each op's calibration inputs; same scales as round-to-nearest, integers chosen to keep W x."""

import numpy as np
import pytest

import cortexm
from cortexm.quantizer import gptq

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional


def correlated_inputs(rng, n, columns):
    """Inputs whose columns are strongly correlated (a few latent factors plus noise)."""
    latent = rng.standard_normal((n, 4))
    return latent @ rng.standard_normal((4, columns)) + 0.1 * rng.standard_normal((n, columns))


def output_error(q, s, w, x):
    return np.linalg.norm((q * s[:, None] - w) @ x.T)


@pytest.mark.parametrize("seed", range(5))
def test_gptq_round_keeps_w_x_closer_than_round_to_nearest(seed):
    rng = np.random.default_rng(seed)
    rows, columns = 24, 40
    w = rng.standard_normal((rows, columns))
    s = np.abs(w).max(axis=1) / 127
    x = correlated_inputs(rng, 400, columns)
    q = gptq.gptq_round(w, s, x.T @ x)
    assert q.dtype == np.int8 and q.min() >= -127 and q.max() <= 127
    nearest = np.clip(np.rint(w / s[:, None]), -127, 127)
    assert output_error(q, s, w, x) < 0.7 * output_error(nearest, s, w, x)
    assert np.abs(q - nearest).max() >= 1  # it did change integers


def test_gptq_round_is_round_to_nearest_for_uncorrelated_inputs_and_dead_columns():
    rng = np.random.default_rng(7)
    w = rng.standard_normal((6, 10))
    s = np.abs(w).max(axis=1) / 127
    h = np.diag(rng.uniform(0.5, 2, 10))
    h[3, 3] = 0  # an input that was always 0
    np.testing.assert_array_equal(gptq.gptq_round(w, s, h), np.clip(np.rint(w / s[:, None]), -127, 127))


@pytest.mark.parametrize("spatial,stride,padding,dilation,groups", [
    (1, [2], [1], [2], 2), (1, [1], [0], [1], 1), (2, [2, 1], [1, 2], [1, 2], 3), (2, [1, 1], [0, 0], [1, 1], 6)])
def test_input_statistics_match_unfold(spatial, stride, padding, dilation, groups):
    """sum x x^T over every output position's window, per group, in the weight's (C, *k) order,
    against torch's unfold."""
    rng = np.random.default_rng(1)
    c, kernel = 6, [3] * spatial
    x = rng.standard_normal((2, c) + (11,) * spatial).astype(np.float32)

    class Node:
        op = "aten.convolution.default"
        attrs = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups, "transposed": False}
        inputs = [None, type("V", (), {"shape": [4 * groups, c // groups] + kernel})()]

    stats = gptq.InputStatistics(Node(), (c // groups) * int(np.prod(kernel)), groups)
    stats.update(x)
    t = torch.from_numpy(x).double()
    if spatial == 1:
        t, k, st, p, d = t.unsqueeze(-1), (kernel[0], 1), (stride[0], 1), (padding[0], 0), (dilation[0], 1)
    else:
        k, st, p, d = tuple(kernel), tuple(stride), tuple(padding), tuple(dilation)
    cols = F.unfold(t, k, dilation=d, padding=p, stride=st)  # [N, C * prod(k), L]
    cols = cols.permute(0, 2, 1).reshape(-1, groups, cols.shape[1] // groups).numpy()
    for g in range(groups):
        np.testing.assert_allclose(stats.hessians[g], cols[:, g].T @ cols[:, g], rtol=1e-10, atol=1e-9)


class Net(nn.Module):
    def __init__(self, groups=1):
        super().__init__()
        self.conv = nn.Conv1d(4, 12, 5, stride=2, padding=4, dilation=2, groups=groups)
        self.fc = nn.Linear(12 * 16, 10)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))


def smooth_signals(n, seed):
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(n, 4, 40, generator=g)
    return [(F.avg_pool1d(base[i:i + 1], 9, 1, 4)[:, :, :32] * 3,) for i in range(n)]


@pytest.mark.parametrize("groups", [1, 2])
def test_gptq_quantized_model_is_closer_to_float_with_the_same_scales(groups):
    torch.manual_seed(0)
    model = Net(groups).eval()
    graph = cortexm.export(model, smooth_signals(1, 0)[0])
    calib, held_out = smooth_signals(256, 1), smooth_signals(32, 2)
    with torch.no_grad():
        want = np.concatenate([model(*s).numpy() for s in held_out])
    errs, scales = {}, {}
    for rounding in ("nearest", "gptq"):
        for per_channel in (True, False):
            q = cortexm.CortexMQuantizer(per_channel=per_channel, weight_rounding=rounding, activation_dtype="int16")
            qg = cortexm.quantize(graph, calib, q, progress=False)
            weights = {c.name: c for c in qg.constants if c.name.endswith("_int8")}
            scales[rounding, per_channel] = {n: c.qparams["scales"] for n, c in weights.items()}
            for c in weights.values():
                assert c.data.dtype == np.int8 and c.data.min() >= -127
            got = np.concatenate([qg.run(s[0].numpy()) for s in held_out])
            errs[rounding, per_channel] = float(np.sqrt(np.mean((got - want) ** 2)))
            if groups == 1:  # (a grouped, non-depthwise conv stays a float op when lowered)
                lowered = cortexm.lower(qg, "cortex-m55+int8")
                assert not [op for op in lowered.op_counts() if op in ("aten.convolution.default", "aten.linear.default")]
    for per_channel in (True, False):
        assert scales["gptq", per_channel] == scales["nearest", per_channel]
        assert errs["gptq", per_channel] < 0.8 * errs["nearest", per_channel], errs


def test_weight_rounding_is_validated_and_shown():
    with pytest.raises(ValueError, match="weight_rounding must be one of \\['nearest', 'gptq'\\], got 'best'"):
        cortexm.CortexMQuantizer(weight_rounding="best")
    assert repr(cortexm.CortexMQuantizer(weight_rounding="gptq")).endswith("weight_rounding='gptq')")
