"""End to end: torch -> quantize -> lower for the int8 ops of issue 6 (bmm, transposed conv,
maximum / minimum, mean, requantized cat inputs, pads and nearest upsample)."""

import numpy as np
import pytest

import cortexm

torch = pytest.importorskip("torch")


def lower(model, x, samples=8, seed=0):
    gen = torch.Generator().manual_seed(seed)
    model.eval()
    graph = cortexm.export(model, (x,))
    calibration = [(torch.randn(x.shape, generator=gen),) for _ in range(samples)]
    qgraph = cortexm.quantize(graph, calibration, progress=False)
    return qgraph, cortexm.lower(qgraph, "cortex-m55+int8")


def output_scale(lowered):
    q = lowered.nodes[-1]
    assert q.op == "cortex_m.dequantize_per_tensor.default"
    return q.attrs["scale"]


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = (torch.nn.Linear(16, 16) for _ in range(3))

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        probs = torch.softmax(torch.bmm(q, k.transpose(1, 2)), dim=-1)
        return torch.maximum(probs @ v, torch.minimum(q, v))


def test_attention_block_lowers_matmuls_and_minmax():
    torch.manual_seed(0)
    x = torch.randn(2, 10, 16)
    qgraph, lowered = lower(Attention(), x)
    counts = lowered.op_counts()
    assert counts["cortex_m.quantized_batch_matmul.default"] == 2
    assert counts["cortex_m.quantized_maximum.default"] == 1
    assert counts["cortex_m.quantized_minimum.default"] == 1
    assert "aten.bmm.default" not in counts
    # q @ k^T reads k itself (the transposes cancel): only v gets an int8 transpose.
    assert counts.get("aten.permute_copy.default", 0) == 1
    fake, low = qgraph.run(x.numpy()), lowered.run(x.numpy())
    assert np.max(np.abs(fake - low)) <= 2 * output_scale(lowered)


class UpBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.up = torch.nn.ConvTranspose2d(8, 5, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        return self.up(torch.relu(self.conv(x)))


def test_conv_transpose2d_lowers():
    torch.manual_seed(1)
    x = torch.randn(1, 3, 7, 6)
    model = UpBlock().eval()
    graph = cortexm.export(model, (x,))
    assert np.max(np.abs(graph.run(x.numpy()) - model(x).detach().numpy())) < 1e-5
    qgraph, lowered = lower(model, x)
    counts = lowered.op_counts()
    assert counts["cortex_m.quantized_transpose_conv2d.default"] == 1
    assert "aten.convolution.default" not in counts
    fake, low = qgraph.run(x.numpy()), lowered.run(x.numpy())
    assert low.shape == (1, 5, 14, 12)
    assert np.max(np.abs(fake - low)) <= output_scale(lowered) * 1.01


class Movement(torch.nn.Module):
    """Zero pad, reflect pad, nearest upsample and a cat of two differently scaled branches."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 4, 3)
        self.b = torch.nn.Conv2d(3, 4, 1)

    def forward(self, x):
        a = torch.nn.functional.pad(self.a(x), (1, 1, 1, 1))
        b = torch.nn.functional.interpolate(self.b(x)[:, :, ::2, ::2], scale_factor=2.0,
                                            mode="nearest")
        y = torch.cat([a, b], dim=1)
        return torch.nn.functional.pad(y.flatten(2), (3, 0), mode="reflect")


def test_pads_upsample_and_cat_stay_int8():
    torch.manual_seed(2)
    x = torch.randn(1, 3, 8, 8)
    qgraph, lowered = lower(Movement(), x)
    for node in lowered.nodes:
        if node.op in ("aten.constant_pad_nd.default", "aten.reflection_pad1d.default",
                       "aten.upsample_nearest2d.default", "aten.cat.default"):
            assert node.inputs[0].dtype == "int8", node.name
            assert node.outputs[0].dtype == "int8", node.name
    counts = lowered.op_counts()
    assert counts["cortex_m.requantize.default"] >= 1  # the cat's branches have their own qparams
    assert counts["cortex_m.dequantize_per_tensor.default"] == 1  # the graph output only
    assert counts["cortex_m.quantize_per_tensor.default"] == 1  # the graph input only
    fake, low = qgraph.run(x.numpy()), lowered.run(x.numpy())
    assert np.max(np.abs(fake - low)) <= 2 * output_scale(lowered)


def test_zoo_requantizes_and_means_in_int8():
    for name, requantizes in (("yolo_style", 37), ("silero_vad", 1)):
        model, example, calibration = cortexm.models.get(name)
        qgraph = cortexm.quantize(cortexm.export(model, example), calibration(4), progress=False)
        lowered = cortexm.lower(qgraph, "cortex-m55+int8")
        counts = lowered.op_counts()
        assert counts["cortex_m.requantize.default"] == requantizes, name
        assert "aten.mean.dim" not in counts, name
        for node in lowered.nodes:  # no float round trip between two int8 values is left
            if node.op == "cortex_m.dequantize_per_tensor.default":
                assert all(u.op != "cortex_m.quantize_per_tensor.default"
                           for u in node.outputs[0].users), (name, node.name)
    assert counts["cortex_m.quantized_mean.default"] == 1  # silero's mean over time
