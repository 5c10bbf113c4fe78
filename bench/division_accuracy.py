"""The int8 accuracy of x / y with y computed at run time (docs/lowering.md, "Division by a
tensor"): SQNR against float of the lowered graph and of the fake-quantized one, next to a plain
product at the same ranges. Run: PYTHONPATH=python python bench/division_accuracy.py"""

import numpy as np
import torch
from torch import nn

import cortexm


class Divide(nn.Module):
    def forward(self, x, y):
        return x / (y.abs() + 0.5)


class Multiply(nn.Module):
    def forward(self, x, y):
        return x * (y.abs() + 0.5)


class Reciprocal(nn.Module):
    def forward(self, x, y):
        return 1 / (y.abs() + 0.5)


class Normalize(nn.Module):
    """A hand-written LayerNorm without its affine part."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(16, 16)

    def forward(self, x, y):
        x = self.linear(x)
        m = x.mean(-1, keepdim=True)
        v = ((x - m) ** 2).mean(-1, keepdim=True)
        return (x - m) / torch.sqrt(v + 1e-5)


def sqnr(want, got):
    want = np.concatenate([np.ravel(w) for w in want]).astype(np.float64)
    got = np.concatenate([np.ravel(g) for g in got]).astype(np.float64)
    return 10 * np.log10(np.sum(want ** 2) / np.sum((want - got) ** 2))


def main():
    torch.manual_seed(0)
    for name, module, shape in [("x / (|y| + 0.5)", Divide(), (4, 9)), ("x * (|y| + 0.5)", Multiply(), (4, 9)),
                                ("1 / (|y| + 0.5)", Reciprocal(), (4, 9)),
                                ("(x - mean) / sqrt(var + eps)", Normalize(), (5, 16))]:
        g = torch.Generator().manual_seed(2)

        def samples(n):
            return [tuple(torch.randn(*shape, generator=g) * 2.5 for _ in range(2)) for _ in range(n)]

        graph = cortexm.export(module.eval(), samples(1)[0])
        qgraph = cortexm.quantize(graph, samples(8), progress=False)
        lowered = cortexm.lower(qgraph)
        left = [op for op in lowered.op_counts() if op.startswith("aten.") and "copy" not in op]
        want, got, fake = [], [], []
        for x, y in samples(32):
            want.append(module(x, y).detach().numpy())
            got.append(np.asarray(lowered.run(x.numpy(), y.numpy())))
            fake.append(np.asarray(qgraph.run(x.numpy(), y.numpy())))
        print(f"{name}: lowered SQNR {sqnr(want, got):.1f} dB, fake-quantized {sqnr(want, fake):.1f} dB, "
              f"float ops left {left}")


if __name__ == "__main__":
    main()
