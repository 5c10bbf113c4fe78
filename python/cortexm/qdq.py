"""Which graphs are quantized: the quantize / dequantize ops and is_quantized, shared by the
quantizer (which refuses a quantized graph) and the lowering (which needs one)."""

from __future__ import annotations

__all__ = ["QDQ_OPS", "is_quantized"]

QDQ_OPS = frozenset({
    "quantized_decomposed.quantize_per_tensor.default", "quantized_decomposed.dequantize_per_tensor.default",
    "quantized_decomposed.quantize_per_channel.default", "quantized_decomposed.dequantize_per_channel.default",
    "cortex_m.quantize_per_tensor.default", "cortex_m.dequantize_per_tensor.default",
})


def is_quantized(graph) -> bool:
    """True when the graph already has quantize / dequantize ops or quantized (int) activations with
    qparams, e.g. cortexm.quantize's output or a graph exported from PyTorch's PT2E flow."""
    if any(node.op in QDQ_OPS or node.op.startswith("cortex_m.") for node in graph.nodes):
        return True
    return any(v.qparams is not None and v.dtype != "float32" for v in graph.inputs)
