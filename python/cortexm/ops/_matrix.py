"""What the op support matrix (cortexm.ops_matrix, docs/ops.md) learns from the family modules:
their sample rows (@rows) and the lowering facts ConvertToCortexM's converters do not state
(lowered_by_pass, no_kernel, @refused). Needs no torch: a rows function gets torch's modules as
arguments when the matrix is built."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .. import _core

PRECISIONS = ("int8", "16x8")

A = (2, 8)  # a small 2-D input
IMG = (1, 2, 6, 6)  # a small NCHW input


@dataclass(frozen=True)
class Sample:
    aten: str  # the op as the captured (decomposed) program has it
    make: Callable  # () -> the nn.Module
    shapes: tuple  # input shapes
    variant: str = ""  # what distinguishes rows of one aten op (e.g. "scalar operand")
    positive: bool = False  # inputs in [0.5, 1.5) (sqrt, log, div)
    row: int = field(default=0, kw_only=True)  # docs/ops.md lists rows by this key (kept with gaps)

    @property
    def label(self) -> str:
        return f"{self.aten} ({self.variant})" if self.variant else self.aten


ROWS: list[Callable] = []


def rows(fn):
    """Registers fn(torch, nn, F, op, Fn) -> the family's Samples (op(f): a module computing f(*inputs);
    Fn(f, init): one computing f(self, *inputs) with parameters made by init(self))."""
    ROWS.append(fn)
    return fn


# --- lowering facts --------------------------------------------------------------------------

BY_PASS: dict[str, set] = {p: set() for p in PRECISIONS}
NO_KERNEL: dict[str, set] = {p: set() for p in PRECISIONS}
REFUSED: dict[str, dict] = {p: {} for p in PRECISIONS}


def _precisions(precisions) -> tuple:
    unknown = [p for p in precisions if p not in PRECISIONS]
    if unknown:
        raise ValueError(f"precisions {unknown}: not one of {PRECISIONS}")
    return tuple(precisions)


def lowered_by_pass(pass_name: str, *ops: str, precisions=PRECISIONS) -> None:
    """ops, which no converter takes, reach kernels through another lowering pass (fused into the op
    before them, decomposed into ops that have converters)."""
    if pass_name not in _core.pass_names():
        raise ValueError(f"{pass_name} is not a lowering pass ({', '.join(_core.pass_names())})")
    for p in _precisions(precisions):
        BY_PASS[p].update(ops)


def no_kernel(precision: str, *ops: str) -> None:
    """ops have a converter, but none for this precision: the lowering leaves them float."""
    NO_KERNEL[_precisions([precision])[0]].update(ops)


def refused(op: str, precision: str):
    """Registers refuses(node) -> True for the nodes of op the lowering leaves float at precision."""

    def register(fn):
        REFUSED[_precisions([precision])[0]][op] = fn
        return fn

    return register


def converter_ops() -> set:
    """The compute ops ConvertToCortexM's converters take (their folded form)."""
    return {op for c in _core.converters() if c["folded_only"] for op in c["ops"]}


def lowering() -> dict:
    """Per precision, the graph ops cortexm.lower turns into cortex_m kernels: the converters' ops and
    those lowered by other passes, less those without a kernel of the precision."""
    ops = converter_ops()
    return {p: (ops | BY_PASS[p]) - NO_KERNEL[p] for p in PRECISIONS}
