"""cortexm.export: a PyTorch model -> cortexm.Graph."""

from __future__ import annotations


def export(module_or_exported_program, example_inputs=None, *, dynamic_shapes=None):
    """Convert a PyTorch model into a cortexm.Graph in the op vocabulary of docs/graph_ops.md.

    An ``nn.Module`` is captured with ``torch.export.export(module, example_inputs,
    dynamic_shapes=dynamic_shapes, strict=False)`` in eval mode (its train/eval flags are restored
    afterwards); an ``ExportedProgram`` is taken as it is (then pass no example_inputs or
    dynamic_shapes). Either way it is decomposed to core ATen, keeping linear, hardswish,
    hardsigmoid, silu, reflection_pad1d, upsample_nearest2d, softplus, mish, celu and prelu whole,
    and each op is mapped onto graph ops.

    - Inputs: the forward's tensor arguments, named after them (non-tensor arguments are fixed at
      their example values). Outputs: the forward's outputs in order, nested tuples flattened.
    - Layout: inputs, outputs and every value use PyTorch's logical shapes (NCHW / NCW) and
      contiguous dim order; the channels-last layout of what feeds the Cortex-M kernels is arranged
      later, by the lowering.
    - Shapes are static: sizes made symbolic by ``dynamic_shapes`` are fixed at the example inputs'.
    - Parameters, buffers and constant tensors become graph constants; batch norm is folded into
      the convolution or linear before it when that is its only user, else becomes mul + add.
    - Each node's ``source`` is the path of the module it came from (e.g. ``"encoder.3.conv"``).

    Raises cortexm.UnsupportedError (a NotImplementedError) listing every op cortexm cannot
    represent, each with its module path (also as ``error.problems``: [(op, module path, message)]);
    a node downstream of a refused one is listed only when its own op is unsupported.
    """
    # The _export package needs torch, which cortexm imports without.
    from ._export.capture import capture
    from ._export.convert import convert

    return convert(capture(module_or_exported_program, example_inputs, dynamic_shapes))
