"""GPTQ weight rounding (Frantar et al., 2022): each weight's int8 values chosen column by column,
the rounding error of a column spread over the columns not yet rounded through the inverse of
H = sum x x^T of the op's calibration inputs, so that W_q x stays close to W x on inputs like the
calibration's. Scales stay those of round-to-nearest (max |w| per channel); only the integers
change. Columns are taken in decreasing order of H's diagonal ("act order"), with H damped by 1%
of its mean diagonal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .observers import WEIGHT_QMAX, WEIGHT_QMIN

DAMPING = 0.01
MAX_COLUMNS = 4096  # H is columns^2 float64; wider weights keep round-to-nearest


def gptq_round(w2d: np.ndarray, scales: np.ndarray, hessian: np.ndarray) -> np.ndarray:
    """int8 rows of w2d [rows, columns] on the grid of scales [rows] (or [1]) minimizing
    ||(W_q - W) x|| over the inputs hessian = sum x x^T [columns, columns] was built from."""
    w = np.array(w2d, dtype=np.float64)
    h = np.array(hessian, dtype=np.float64)
    s = np.broadcast_to(np.asarray(scales, dtype=np.float64).reshape(-1), (w.shape[0],))
    dead = np.diag(h) == 0  # inputs that were always 0: nothing to spread, round to nearest
    h[dead, dead] = 1
    order = np.argsort(-np.diag(h), kind="stable")
    w, h = w[:, order], h[np.ix_(order, order)]
    h[np.diag_indices_from(h)] += DAMPING * np.mean(np.diag(h))
    # Upper Cholesky factor of H^-1: row i holds how the later columns absorb column i's error.
    u = np.linalg.cholesky(np.linalg.inv(h)).T
    q = np.empty_like(w)
    for i in range(w.shape[1]):
        q[:, i] = np.clip(np.rint(w[:, i] / s), WEIGHT_QMIN, WEIGHT_QMAX)
        err = (w[:, i] - q[:, i] * s) / u[i, i]
        w[:, i + 1:] -= np.outer(err, u[i, i + 1:])
    out = np.empty_like(q)
    out[:, order] = q
    return out.astype(np.int8)


class InputStatistics:
    """sum x x^T of one weighted op's input, in the column layout of its weight as [rows, -1]."""

    def __init__(self, node, columns: int, groups: int):
        self.node = node
        self.groups = groups
        self.columns = columns
        self.vectors = 0  # input vectors seen per group
        self.hessians = np.zeros((groups, columns, columns))

    def update(self, x: np.ndarray) -> None:
        cols = _columns(self.node, np.asarray(x, dtype=np.float64), self.groups)  # [groups, n, columns]
        self.hessians += np.einsum("gni,gnj->gij", cols, cols)
        self.vectors += cols.shape[1]

    @property
    def determined(self) -> bool:
        """At least as many input vectors as columns: below that H is singular and GPTQ's choice
        is set by the damping, not by the data (silero with 16 samples: 0.45 off float on real
        speech, against 0.08 rounding to nearest)."""
        return self.vectors >= self.columns


@dataclass(frozen=True)
class Layout:
    """How a weighted op reads its input, registered by its family (register_layout)."""

    columns: Callable  # (node, x, groups) -> the input vectors each output position reads, per group:
    #                    [groups, positions, columns]
    groups: Callable  # node -> its groups (weight rows are split evenly between them)
    takes: Callable  # node -> whether GPTQ rounds its weight (else round-to-nearest)


LAYOUTS: dict[str, Layout] = {}


def register_layout(*ops: str, columns: Callable, groups: Callable = lambda node: 1,
                    takes: Callable = lambda node: True) -> None:
    for op in ops:
        LAYOUTS[op] = Layout(columns, groups, takes)


def rows(node, x: np.ndarray, groups: int) -> np.ndarray:
    """A linear's input vectors: the rows of x."""
    return x.reshape(1, -1, x.shape[-1])


def _columns(node, x: np.ndarray, groups: int) -> np.ndarray:
    """The input vectors each output position reads, per group: [groups, positions, columns]."""
    return LAYOUTS[node.op].columns(node, x, groups)


def collect(annotation) -> dict:
    """InputStatistics for every conv / linear / addmm weight whose rows GPTQ can take, keyed by
    (node name, input index) of the weight's use; the anchor reads its input at activations[0]."""
    stats = {}
    for match in annotation.matches:
        anchor = match.nodes[0]
        if not match.weights or not match.activations:
            continue
        layout = LAYOUTS.get(anchor.op)
        if layout is None or not layout.takes(anchor):
            continue
        (use,) = match.weights
        w = use.node.inputs[use.index]
        rows = w.shape[use.axis]
        columns = int(np.prod(w.shape)) // rows
        groups = layout.groups(anchor)
        if columns > MAX_COLUMNS:
            continue
        stats[(use.node.name, use.index)] = (InputStatistics(anchor, columns, groups), match.activations[0])
    return stats


def round_weight(w: np.ndarray, axis: int | None, use_axis: int, scales: np.ndarray,
                 stats: InputStatistics) -> np.ndarray:
    """GPTQ's int8 data for weight w (rows along use_axis), same shape as w. The caller checks
    stats.determined."""
    rows = w.shape[use_axis]
    w2d = np.moveaxis(np.asarray(w, dtype=np.float64), use_axis, 0).reshape(rows, -1)
    s = np.broadcast_to(np.asarray(scales, dtype=np.float64).reshape(-1), (rows,)) if axis is not None \
        else np.full(rows, float(np.asarray(scales).reshape(-1)[0]))
    per_group = rows // stats.groups
    q = np.empty(w2d.shape, dtype=np.int8)
    for g in range(stats.groups):
        r = slice(g * per_group, (g + 1) * per_group)
        q[r] = gptq_round(w2d[r], s[r], stats.hessians[g])
    moved_shape = (rows,) + tuple(np.delete(np.array(w.shape), use_axis))
    return np.moveaxis(q.reshape(moved_shape), 0, use_axis)
