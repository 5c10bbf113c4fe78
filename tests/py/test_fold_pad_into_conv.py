"""FoldPadIntoConv: F.pad by zeros before a conv (TensorFlow's asymmetric SAME, as DS-CNN's front end)
becomes the conv's padding. The lowered graph and its program give the same bytes as the graph
lowered without the pass (the separate pad op), for 2-D, depthwise and 1-D convs; pads the conv
cannot absorb (a non-zero value, a crop, the channel dim) stay."""

import numpy as np
import pytest

import cortexm

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

PAD = "aten.constant_pad_nd.default"
CONVS = ("cortex_m.quantized_conv2d.default", "cortex_m.quantized_depthwise_conv2d.default")


class PadConv(nn.Module):
    def __init__(self, pad, conv, value=0.0):
        super().__init__()
        self.pad, self.conv, self.value = pad, conv, value

    def forward(self, x):
        return torch.relu(self.conv(F.pad(x, self.pad, value=self.value)))


def quantized(module, shape, seed=0):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 1)
    samples = [(torch.randn(shape, generator=g) * 1.3 + 0.5,) for _ in range(5)]
    qgraph = cortexm.quantize(cortexm.export(module.eval(), samples[0]), samples, progress=False)
    return qgraph, [s[0].numpy() for s in samples]


def the_conv(lowered):
    convs = [n for n in lowered.nodes if n.op in CONVS]
    assert len(convs) == 1, lowered.op_counts()
    return convs[0]


@pytest.mark.parametrize("module, shape, padding", [
    # DS-CNN's front end: 10x4 window, stride 2, SAME = 4 above, 5 below, 1 left, 1 right.
    (PadConv((1, 1, 4, 5), nn.Conv2d(1, 8, (10, 4), stride=2)), (1, 1, 49, 10), [4, 1, 5, 1]),
    # Added to the conv's own padding; only W padded.
    (PadConv((2, 0), nn.Conv2d(3, 5, 3, padding=1)), (2, 3, 7, 6), [1, 3, 1, 1]),
    # Depthwise.
    (PadConv((0, 1, 0, 1), nn.Conv2d(4, 4, 3, stride=2, groups=4)), (1, 4, 9, 9), [0, 0, 1, 1]),
    # 1-D: the pad reaches the conv through the view to (N, C, 1, W).
    (PadConv((3, 2), nn.Conv1d(2, 6, 5)), (1, 2, 20), [0, 3, 0, 2]),
])
def test_pad_folds_and_the_bytes_stay(module, shape, padding):
    qgraph, samples = quantized(module, shape)
    folded = cortexm.lower(qgraph)
    unfolded = cortexm.lower(qgraph, skip_passes=["FoldPadIntoConv"])
    assert PAD not in folded.op_counts() and PAD in unfolded.op_counts()
    assert the_conv(folded).attrs["padding"] == padding
    program = cortexm.to_program(folded)
    for x in samples:
        expected = unfolded.run(x)
        np.testing.assert_array_equal(folded.run(x), expected)
        np.testing.assert_array_equal(program.run(x), expected)


@pytest.mark.parametrize("module, shape", [
    (PadConv((1, 1, 1, 1), nn.Conv2d(2, 3, 3), value=0.5), (1, 2, 6, 6)),  # not the zero point
    (PadConv((0, 0, 0, 0, 1, 0), nn.Conv2d(3, 3, 1)), (1, 2, 5, 5)),      # pads channels
    (PadConv((-1, 0, 0, 0), nn.Conv2d(2, 3, 3)), (1, 2, 6, 6)),           # a crop
])
def test_pads_the_conv_cannot_take_stay(module, shape):
    qgraph, samples = quantized(module, shape)
    lowered = cortexm.lower(qgraph)
    assert PAD in lowered.op_counts()
    np.testing.assert_array_equal(lowered.run(samples[0]),
                                  cortexm.lower(qgraph, skip_passes=["FoldPadIntoConv"]).run(samples[0]))
