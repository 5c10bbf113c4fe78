"""cortexm.ops: the kernel bindings (cortexm.ops.quantized_conv2d, ...; the C++ module _core.ops)
and the op families, one module each: an op's export handlers (@handles), quantizer patterns
(@pattern), sample rows of docs/ops.md (@rows) and lowering facts live together, and the shared
tables (_export.convert.HANDLERS, quantizer.patterns.PASSES, ops_matrix's SAMPLES and LOWERING) are
gathered from them. Every family module is imported here, in name order."""

import importlib as _importlib
import pkgutil as _pkgutil

from .._core.ops import *  # noqa: F401,F403  the kernel bindings, as cortexm.ops has always had them

FAMILIES = tuple(name for _, name, _ in sorted(_pkgutil.iter_modules(__path__)) if not name.startswith("_"))
for _family in FAMILIES:
    _importlib.import_module(f"{__name__}.{_family}")
