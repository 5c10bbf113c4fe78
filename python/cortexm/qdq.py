"""Which graphs are quantized: the quantize / dequantize ops and is_quantized, shared by the
quantizer (which refuses a quantized graph) and the lowering (which needs one)."""

from __future__ import annotations

from . import _core

__all__ = ["QDQ_OPS", "is_quantized"]

# The registered (de)quantize ops: PT2E's quantized_decomposed ones and the lowering's cortex_m ones.
QDQ_OPS = frozenset(op for op in _core.registered_ops()
                    if op.split(".")[1].startswith(("quantize_per_", "dequantize_per_")))


def is_quantized(graph) -> bool:
    """True when the graph already has quantize / dequantize ops or quantized (int) activations with
    qparams, e.g. cortexm.quantize's output or a graph exported from PyTorch's PT2E flow."""
    if any(node.op in QDQ_OPS or node.op.startswith("cortex_m.") for node in graph.nodes):
        return True
    return any(v.qparams is not None and v.dtype != "float32" for v in graph.inputs)
