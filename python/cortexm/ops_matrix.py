"""The op support matrix (docs/ops.md): per aten op, whether cortexm exports it, quantizes it, lowers
it to int8 / 16x8 kernels, or runs it as float fallback.

    python -m cortexm.ops_matrix > docs/ops.md
    python -m cortexm.ops_matrix --output docs/ops.md    # written atomically

The claims come from the op descriptors: the export handler table (_export.convert.HANDLERS), the
graph ops each handler emits (found by exporting the row's sample module), the quantizer's patterns
(quantizer.patterns.PASSES), the lowering's kernels (LOWERING below) and the graph op registry (an op
whose descriptor encodes a program kernel runs as float fallback). tests/py/test_ops_matrix.py
runs every sample through export / quantize / lower / to_program and checks each claim both ways.

Rows are SAMPLES: one tiny module per aten op (the ones export handles and the ones it refuses).
Adding an op: add a Sample line; when its lowering lands, add its graph op to LOWERING; then
regenerate docs/ops.md.
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
from .quantizer.patterns import PASSES
from .quantizer.reciprocal_division import divisions_as_reciprocals

# The graph ops cortexm.lower turns into cortex_m kernels, per precision (the converters the
# src/passes/convert_*.cc files register and the kernels they reach). Data movement stays integer
# without a kernel of its own and is not listed.
LOWERING = {
    "int8": {
        "aten.convolution.default", "aten.linear.default", "aten.addmm.default", "aten.add.Tensor",
        "aten.sub.Tensor", "aten.mul.Tensor", "aten.max_pool2d.default", "aten.avg_pool2d.default",
        "aten._softmax.default", "aten._log_softmax.default", "aten.sqrt.default", "aten.mean.dim",
        "aten.bmm.default", "aten.mm.default", "aten.maximum.default", "aten.minimum.default",
        "aten.sigmoid.default", "aten.tanh.default", "aten.silu.default", "aten.gelu.default",
        "aten.hardswish.default", "aten.abs.default", "aten.pow.Tensor_Scalar", "aten.add.Scalar",
        "aten.sub.Scalar", "aten.mul.Scalar", "aten.div.Scalar", "aten.relu.default", "aten.hardtanh.default",
        "aten.clamp.default", "aten.hardsigmoid.default", "aten.adaptive_avg_pool2d.default",
        "aten.layer_norm.default", "aten.div.Tensor",
        "aten.leaky_relu.default", "aten.elu.default", "aten.exp.default", "aten.log.default",
        "aten.rsqrt.default", "aten.neg.default", "aten.reciprocal.default", "aten.softplus.default",
        "aten.mish.default", "aten.prelu.default", "aten.sum.dim_IntList", "aten.amax.default",
        "aten.amin.default", "aten.argmax.default", "aten.argmin.default", "aten.upsample_bilinear2d.default",
    },
    "16x8": {
        "aten.convolution.default", "aten.linear.default", "aten.addmm.default", "aten.add.Tensor",
        "aten.mul.Tensor", "aten.sigmoid.default", "aten.tanh.default", "aten.silu.default",
        "aten.gelu.default", "aten.hardswish.default", "aten.abs.default", "aten.pow.Tensor_Scalar",
        "aten.add.Scalar", "aten.sub.Scalar", "aten.mul.Scalar", "aten.div.Scalar", "aten.relu.default",
        "aten.hardtanh.default", "aten.clamp.default", "aten.hardsigmoid.default", "aten.sqrt.default",
        "aten.mm.default", "aten.bmm.default", "aten.mean.dim", "aten._softmax.default",
        "aten.max_pool2d.default",
        "aten.leaky_relu.default", "aten.elu.default", "aten.exp.default", "aten.log.default",
        "aten.rsqrt.default", "aten.neg.default", "aten.reciprocal.default", "aten.softplus.default",
        "aten.mish.default", "aten.prelu.default", "aten.sum.dim_IntList", "aten.amax.default",
        "aten.amin.default", "aten.argmax.default", "aten.argmin.default", "aten.upsample_bilinear2d.default",
    },
}


def _adaptive_not_dividing(node) -> bool:
    size = node.inputs[0].shape[-2:]
    return any(i % o for i, o in zip(size, node.attrs["output_size"]))


# Nodes of a LOWERING op the lowering still leaves float, per precision: node -> True when refused.
NOT_LOWERED = {
    "int8": {"aten.adaptive_avg_pool2d.default": _adaptive_not_dividing},  # as average pools only
    "16x8": {"aten.convolution.default": lambda node: node.attrs["transposed"]},  # no 16x8 transposed conv
}
PRECISIONS = ("int8", "16x8")


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


@dataclass(frozen=True)
class Sample:
    aten: str  # the op as the captured (decomposed) program has it
    make: Callable[[], nn.Module]
    shapes: tuple  # input shapes
    variant: str = ""  # what distinguishes rows of one aten op (e.g. "scalar operand")
    positive: bool = False  # inputs in [0.5, 1.5) (sqrt, log, div)

    @property
    def label(self) -> str:
        return f"{self.aten} ({self.variant})" if self.variant else self.aten


def _linear_params(m):
    m.w = nn.Parameter(torch.randn(8, 4))
    m.b = nn.Parameter(torch.randn(4))


A = (2, 8)  # a small 2-D input
IMG = (1, 2, 6, 6)  # a small NCHW input
SAMPLES = (
    # --- weighted ops, matrix products
    Sample("aten.convolution.default", lambda: nn.Conv2d(2, 4, 3), (IMG,)),
    Sample("aten.convolution.default", lambda: nn.Conv2d(4, 4, 3, groups=2), ((1, 4, 6, 6),), "groups 2"),
    Sample("aten.convolution.default", lambda: nn.ConvTranspose2d(2, 4, 2, stride=2), (IMG,), "transposed"),
    Sample("aten.convolution.default", lambda: nn.Conv1d(2, 4, 3), ((1, 2, 8),), "1-D"),
    Sample("aten.linear.default", lambda: nn.Linear(8, 4), (A,)),
    Sample("aten.addmm.default", lambda: Fn(lambda m, x: torch.addmm(m.b, x, m.w), _linear_params), (A,)),
    Sample("aten.mm.default", op(torch.mm), ((2, 8), (8, 4))),
    Sample("aten.bmm.default", op(torch.bmm), ((1, 2, 8), (1, 8, 4))),
    # --- elementwise binary
    Sample("aten.add.Tensor", op(torch.add), (A, A)),
    Sample("aten.add.Tensor", op(lambda x: x + 1.5), (A,), "scalar operand"),
    Sample("aten.sub.Tensor", op(torch.sub), (A, A)),
    Sample("aten.sub.Tensor", op(lambda x: x - 1.5), (A,), "scalar operand"),
    Sample("aten.sub.Tensor", op(lambda x: 1 - x), (A,), "1 - x"),
    Sample("aten.mul.Tensor", op(torch.mul), (A, A)),
    Sample("aten.mul.Tensor", op(lambda x: x * 1.5), (A,), "scalar operand"),
    Sample("aten.div.Tensor", op(torch.div), (A, A), positive=True),
    Sample("aten.div.Tensor", op(lambda x: x / 1.5), (A,), "scalar operand"),
    Sample("aten.maximum.default", op(torch.maximum), (A, A)),
    Sample("aten.minimum.default", op(torch.minimum), (A, A)),
    Sample("aten.pow.Tensor_Scalar", op(lambda x: x ** 2), (A,)),
    # --- elementwise unary
    Sample("aten.relu.default", op(torch.relu), (A,)),
    Sample("aten.hardtanh.default", op(F.relu6), (A,)),
    Sample("aten.clamp.default", op(lambda x: torch.clamp(x, -0.5, 0.5)), (A,)),
    Sample("aten.sigmoid.default", op(torch.sigmoid), (A,)),
    Sample("aten.tanh.default", op(torch.tanh), (A,)),
    Sample("aten.hardsigmoid.default", op(F.hardsigmoid), (A,)),
    Sample("aten.hardswish.default", op(F.hardswish), (A,)),
    Sample("aten.silu.default", op(F.silu), (A,)),
    Sample("aten.gelu.default", op(F.gelu), (A,)),
    Sample("aten.sqrt.default", op(torch.sqrt), (A,), positive=True),
    Sample("aten.abs.default", op(torch.abs), (A,)),
    # --- normalization
    Sample("aten.native_layer_norm.default", lambda: nn.LayerNorm(8), (A,)),
    # --- reductions, pooling, softmax
    Sample("aten.mean.dim", op(lambda x: x.mean(-1)), (A,)),
    Sample("aten._softmax.default", op(lambda x: torch.softmax(x, -1)), (A,)),
    Sample("aten._log_softmax.default", op(lambda x: torch.log_softmax(x, -1)), (A,)),
    Sample("aten.avg_pool2d.default", op(lambda x: F.avg_pool2d(x, 2)), (IMG,)),
    Sample("aten.max_pool2d_with_indices.default", op(lambda x: F.max_pool2d(x, 2)), (IMG,)),
    Sample("aten._adaptive_avg_pool2d.default", op(lambda x: F.adaptive_avg_pool2d(x, 2)), (IMG,)),
    Sample("aten._adaptive_avg_pool2d.default", op(lambda x: F.adaptive_avg_pool2d(x, 4)), (IMG,),
           "not dividing"),
    # --- data movement
    Sample("aten.view.default", op(lambda x: x.reshape(4, 4)), (A,)),
    Sample("aten.permute.default", op(lambda x: x.permute(1, 0)), (A,)),
    Sample("aten.cat.default", op(lambda x, y: torch.cat([x, y], 1)), (A, A)),
    Sample("aten.slice.Tensor", op(lambda x: x[:, 1:5]), (A,)),
    Sample("aten.select.int", op(lambda x: x[:, 3]), (A,)),
    Sample("aten.split_with_sizes.default", op(lambda x: torch.split(x, [3, 5], 1)), (A,)),
    Sample("aten.squeeze.dims", op(lambda x: x.squeeze(0)), ((1, 8),)),
    Sample("aten.unsqueeze.default", op(lambda x: x.unsqueeze(0)), (A,)),
    Sample("aten.constant_pad_nd.default", op(lambda x: F.pad(x, (1, 1))), (A,)),
    Sample("aten.reflection_pad1d.default", op(lambda x: F.pad(x, (2, 2), mode="reflect")), ((1, 2, 8),)),
    Sample("aten.upsample_nearest2d.vec", op(lambda x: F.interpolate(x, scale_factor=2)), (IMG,)),
    Sample("aten._native_batch_norm_legit_no_training.default", lambda: nn.BatchNorm2d(2), (IMG,),
           "alone"),
    # --- refused at export (the list)
    Sample("aten.native_group_norm.default", lambda: nn.GroupNorm(1, 2), (IMG,)),
    Sample("aten._native_batch_norm_legit.no_stats", lambda: nn.InstanceNorm2d(2), (IMG,), "instance norm"),
    Sample("aten.leaky_relu.default", op(F.leaky_relu), (A,)),
    Sample("aten.prelu.default", lambda: nn.PReLU(), (A,), "one slope"),
    Sample("aten.prelu.default", lambda: nn.PReLU(8), ((2, 8, 3),), "a slope per channel"),
    Sample("aten.reciprocal.default", op(torch.reciprocal), (A,), positive=True),
    Sample("aten.softplus.default", op(F.softplus), (A,)),
    Sample("aten.mish.default", op(F.mish), (A,)),
    Sample("aten.amin.default", op(lambda x: x.amin(-1)), (A,)),
    Sample("aten.elu.default", op(F.elu), (A,)),
    Sample("aten.exp.default", op(torch.exp), (A,)),
    Sample("aten.log.default", op(torch.log), (A,), positive=True),
    Sample("aten.rsqrt.default", op(torch.rsqrt), (A,), positive=True),
    Sample("aten.neg.default", op(torch.neg), (A,)),
    Sample("aten.sum.dim_IntList", op(lambda x: x.sum(-1)), (A,)),
    Sample("aten.amax.default", op(lambda x: x.amax(-1)), (A,)),
    Sample("aten.argmax.default", op(lambda x: x.argmax(-1)), (A,)),
    Sample("aten.argmin.default", op(lambda x: x.argmin()), (A,), "every dim"),
    Sample("aten.topk.default", op(lambda x: torch.topk(x, 2, -1)[0]), (A,)),
    Sample("aten.adaptive_max_pool2d.default", op(lambda x: F.adaptive_max_pool2d(x, 2)), (IMG,)),
    Sample("aten.upsample_bilinear2d.vec",
           op(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)), (IMG,)),
    Sample("aten.repeat.default", op(lambda x: x.repeat(1, 2)), (A,)),
    Sample("aten.index.Tensor", op(lambda x: x[:, torch.tensor([0, 2])]), (A,)),
    Sample("aten.cumsum.default", op(lambda x: torch.cumsum(x, -1)), (A,)),
    Sample("aten.flip.default", op(lambda x: torch.flip(x, [-1])), (A,)),
    Sample("aten.eq.Scalar", op(lambda x: (x == 0).float()), (A,)),
)


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
    return {name for group in PASSES for pattern in group for name in pattern.ops}


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
        "  and `cortexm.check` / the export error name it with its module path).",
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
