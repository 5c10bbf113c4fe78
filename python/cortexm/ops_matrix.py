"""The op support matrix (docs/ops.md): per aten op, whether cortexm exports it, quantizes it, lowers
it to int8 / 16x8 kernels, or runs it as float fallback.

    python -m cortexm.ops_matrix > docs/ops.md
    python -m cortexm.ops_matrix --output docs/ops.md    # written atomically

The claims come from the op descriptors: the export handler table (_export.convert.HANDLERS), the
graph ops each handler emits (found by exporting the row's sample module), the quantizer's patterns
(quantizer.patterns.PASSES), the lowering's kernels (LOWERING: the ops ConvertToCortexM's converters
take, with the family modules' lowering facts) and the graph op registry (an op whose descriptor
encodes a program kernel runs as float fallback). tests/py/test_ops_matrix.py runs every sample
through export / quantize / lower / to_program and checks each claim both ways.

Rows are SAMPLES: one tiny module per aten op (the ones export handles and the ones it refuses),
registered by the family modules of cortexm.ops (@rows) and listed by their `row` key. Adding an op:
add a Sample line to its family's rows; when its lowering lands, the converter's ops are in LOWERING
(state what differs per precision with the family's lowering facts); then regenerate docs/ops.md.
"""

from __future__ import annotations

import argparse
import functools
import sys
from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn
from torch.nn import functional as F

from . import _core
from ._core import UnsupportedError
from ._export.capture import capture
from ._export.convert import HANDLERS, convert
from .atomic_write import write_file_atomically
from .ops import _matrix
from .ops._matrix import PRECISIONS, Sample
from .quantizer.patterns import passes
from .quantizer.reciprocal_division import divisions_as_reciprocals

# The graph ops cortexm.lower turns into cortex_m kernels, per precision. Data movement stays integer
# without a kernel of its own and is not listed.
LOWERING = _matrix.lowering()
# Nodes of a LOWERING op the lowering still leaves float, per precision: node -> True when refused.
NOT_LOWERED = _matrix.REFUSED


class Fn(nn.Module):
    """A module computing fn(self, *inputs); parameters are made by `init` (optional)."""

    def __init__(self, fn, init=None):
        super().__init__()
        if init is not None:
            init(self)
        self.fn = fn

    def forward(self, *xs):
        return self.fn(self, *xs)


def op(fn) -> Callable[[], nn.Module]:
    """A sample of fn(*inputs) without parameters."""
    return lambda: Fn(lambda _, *xs: fn(*xs))


SAMPLES = tuple(sorted((s for family_rows in _matrix.ROWS for s in family_rows(torch, nn, F, op, Fn)),
                       key=lambda s: s.row))


def sample_inputs(sample: Sample, seed: int = 0) -> tuple:
    g = torch.Generator().manual_seed(seed)
    if sample.positive:
        return tuple(torch.rand(s, generator=g) + 0.5 for s in sample.shapes)
    return tuple(torch.randn(s, generator=g) for s in sample.shapes)


def sample_module(sample: Sample) -> nn.Module:
    torch.manual_seed(0)
    return sample.make().eval()


def export_handlers() -> dict:
    return HANDLERS


def quantizer_ops() -> set:
    """The graph ops some quantizer pattern takes."""
    return {name for group in passes() for pattern in group for name in pattern.ops}


@functools.lru_cache(maxsize=None)
def captured(sample: Sample):
    """The sample as torch.export captures and decomposes it (once per process)."""
    return capture(sample_module(sample), sample_inputs(sample))


@functools.lru_cache(maxsize=None)
def _converted(sample: Sample):
    try:
        return convert(captured(sample))
    except UnsupportedError as e:
        return e


def exported(sample: Sample):
    """cortexm.export of the sample, converted once per process (callers copy before changing it);
    raises its UnsupportedError."""
    graph = _converted(sample)
    if isinstance(graph, Exception):
        raise graph
    return graph


def graph_ops(sample: Sample) -> list:
    """The graph ops export maps the sample to (its handler's output), in order, without repeats."""
    return list(dict.fromkeys(n.op for n in exported(sample).nodes))


def is_data_movement(graph_op: str) -> bool:
    return _core.op_info(graph_op).is_data_movement


@dataclass
class Row:
    sample: Sample
    exports: bool
    graph_ops: list
    quantizes: bool | None = None  # None: not exported
    lowers: dict | None = None  # precision -> bool
    float_fallback: bool | None = None


def lowers(graph, precision: str) -> bool:
    """Every compute node of the graph has a kernel in LOWERING and no NOT_LOWERED refusal."""
    for node in graph.nodes:
        if is_data_movement(node.op):
            continue
        refused = NOT_LOWERED[precision].get(node.op)
        if node.op not in LOWERING[precision] or (refused is not None and refused(node)):
            return False
    return True


def claims(sample: Sample) -> Row:
    """The row's claims from the descriptors (see the module docstring)."""
    if sample.aten not in export_handlers():
        return Row(sample, False, [])

    graph = exported(sample)
    ops = graph_ops(sample)
    patterns = quantizer_ops()
    # What the quantizer annotates: the graph after its rewrites (a division by a tensor is a
    # product with the divisor's reciprocal).
    quantized = divisions_as_reciprocals(graph)
    quantizes = all(n.op in patterns for n in quantized.nodes)
    # A program holds the float graph when every node's descriptor encodes a program kernel for it.
    runnable = not _core.program_problems(graph)
    return Row(sample, True, ops, quantizes, {p: quantizes and lowers(quantized, p) for p in PRECISIONS}, runnable)


def cell(value) -> str:
    return "—" if value is None else "yes" if value else "no"


def matrix() -> str:
    rows = [claims(s) for s in SAMPLES]
    lines = [
        "# Op support matrix",
        "",
        "Generated by `python -m cortexm.ops_matrix --output docs/ops.md` (cortexm/ops_matrix.py) from the",
        "export handler table, the quantizer's patterns, the lowering's kernels and the graph op registry;",
        "tests/py/test_ops_matrix.py runs a tiny module per row through export, quantize, lower (int8 and",
        "16x8) and to_program and checks every cell. Do not edit by hand.",
        "",
        "- **exports**: `cortexm.export` maps the aten op onto the graph ops listed (else it is refused,",
        "  and `cortexm.check` / the export error name it with its module path and what to do instead:",
        "  the rewrite onto supported ops where one is known).",
        "- **quantizes**: the quantizer's patterns take every one of those graph ops.",
        "- **int8** / **16x8**: after `quantize` (precision int8 / 16x8) and `lower`, the program runs",
        "  no float op: the op runs on Cortex-M kernels (data movement on the integers).",
        "- **float fallback**: left float (not quantized, or no kernel for the precision), the program",
        "  runs it with the portable float kernels (`Program.float_ops` counts them). A `no` here means",
        "  `cortexm.lower` refuses the graph unless the op is lowered.",
        "",
        "| aten op | graph ops | exports | quantizes | int8 | 16x8 | float fallback |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        ops = ", ".join(f"`{o}`" for o in r.graph_ops) or "—"
        lowers = r.lowers or {}
        lines.append(f"| `{r.sample.aten}`{f' ({r.sample.variant})' if r.sample.variant else ''} | {ops} | "
                     f"{cell(r.exports)} | {cell(r.quantizes)} | {cell(lowers.get('int8'))} | "
                     f"{cell(lowers.get('16x8'))} | {cell(r.float_fallback)} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cortexm.ops_matrix", description=__doc__.splitlines()[0])
    parser.add_argument("--output", "-o", help="file to write atomically (default: stdout)")
    args = parser.parse_args(argv)
    text = matrix()
    if args.output:

        write_file_atomically(args.output, text.encode("utf-8"))
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
