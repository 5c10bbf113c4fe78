"""cortexm: lower quantized PyTorch graphs onto int8 Cortex-M kernels with CMSIS-NN arithmetic."""

from ._core import ops, quantize_multiplier

__all__ = ["ops", "quantize_multiplier"]
__version__ = "0.1.0"
