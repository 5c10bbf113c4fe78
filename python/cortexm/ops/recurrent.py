"""Recurrent cells: export's decomposition of aten.lstm_cell into linears, adds, muls, sigmoid and
tanh (nn.LSTM's layers arrive decomposed by torch; each op quantizes and lowers by its family)."""

from __future__ import annotations

from .._export.handlers import handles, instead
from .data_movement import split_into


# The flip of a bidirectional layer.
BIDIRECTIONAL = ("for a bidirectional nn.{0}: run two nn.{0} (bidirectional=False), the second on the sequence "
                 "reversed by slices (torch.cat([x.narrow(1, t, 1) for t in reversed(range(x.shape[1]))], 1) with "
                 "batch_first), reverse its output back the same way, and torch.cat the two outputs on the last dim")
for layer in ("LSTM", "GRU", "RNN"):
    instead("aten.flip.default", BIDIRECTIONAL.format(layer), module=layer)


@handles("aten.lstm_cell.default")
def lstm_cell(cx, a):
    """As torch decomposes it: gates = linear(h) + linear(x) split into i, f, g, o."""
    h, c = a["hx"]
    gates = cx.call("aten.add.Tensor", [cx.call("aten.linear.default", [h, a["w_hh"], a["b_hh"]]),
                                        cx.call("aten.linear.default", [a["input"], a["w_ih"], a["b_ih"]])])
    n = cx.shape(h)[1]
    i, f, g, o = split_into(cx, gates, [n] * 4, 1)
    i, f, o = (cx.call("aten.sigmoid.default", [v]) for v in (i, f, o))
    g = cx.call("aten.tanh.default", [g])
    c_next = cx.call("aten.add.Tensor", [cx.call("aten.mul.Tensor", [f, c]), cx.call("aten.mul.Tensor", [i, g])])
    h_next = cx.call("aten.mul.Tensor", [o, cx.call("aten.tanh.default", [c_next])])
    return h_next, c_next
