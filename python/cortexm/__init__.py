"""cortexm: lower quantized PyTorch graphs onto int8 Cortex-M kernels with CMSIS-NN arithmetic."""

import os as _os

from ._core import (
    CortexMTargetConfig,
    available_host_kernels,
    host_kernels,
    set_host_kernels,
    cpu_names,
    pass_names,
    Graph,
    GraphError,
    Node,
    UnsupportedError,
    Value,
    quantize_multiplier,
    registered_ops,
)
from . import ops  # the kernel bindings and the op families (which register their handlers and patterns)
from .compare import Comparison, compare
from .export import export
from .memory_plan import MemoryPlan, plan_memory
from .passes import CortexMPassManager, lower
from .quantizer import CortexMQuantizer, quantization_report

__all__ = [
    "Comparison",
    "CortexMTargetConfig",
    "available_host_kernels",
    "compare",
    "cpu_names",
    "host_kernels",
    "set_host_kernels",
    "pass_names",
    "CortexMPassManager",
    "CortexMQuantizer",
    "Graph",
    "GraphError",
    "Node",
    "UnsupportedError",
    "Value",
    "export",
    "lower",
    "ops",
    "quantization_report",
    "quantize",
    "quantize_multiplier",
    "registered_ops",
    "MemoryPlan",
    "plan_memory",
]
__version__ = "0.1.0"

# CORTEXM_HOST_KERNELS=scalar|avx2|avx512vnni forces the host kernels' x86 variant (default: the
# richest this CPU runs); every variant gives the same bytes.
if _os.environ.get("CORTEXM_HOST_KERNELS"):
    set_host_kernels(_os.environ["CORTEXM_HOST_KERNELS"])


def __getattr__(name):
    # cortexm.models needs torch; import it only when asked for.
    if name == "models":
        import importlib

        return importlib.import_module(".models", __name__)
    raise AttributeError(f"module 'cortexm' has no attribute {name!r}")

from .program import Program, load_program, to_program  # noqa: E402
from .auto_precision import quantize  # noqa: E402

__all__ += ["Program", "load_program", "to_program"]
from .qemu import run_on_qemu  # noqa: E402

__all__ += ["run_on_qemu"]
from .check import CheckReport, check  # noqa: E402

__all__ += ["CheckReport", "check"]
from .tflite import from_tflite  # noqa: E402

__all__ += ["from_tflite"]
