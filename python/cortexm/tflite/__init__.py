"""cortexm.from_tflite: a TFLite int8 model file -> a cortexm Graph in quantized form.

    graph = cortexm.from_tflite("model.tflite")          # or the file's bytes
    program = cortexm.to_program(cortexm.lower(graph, target="cortex-m55+int8"))

The reader (flatbuffer.py, model.py) checks every offset and size of the untrusted file; each
operator family's module registers its importers with @tflite_op (importer.py); an operator or
type it cannot import exactly is listed with every other one in one NotImplementedError."""

from __future__ import annotations

import importlib
import pkgutil

from . import importer, model
from .importer import HANDLERS, tflite_op

_INFRASTRUCTURE = {"common", "flatbuffer", "importer", "model", "schema"}
for _info in pkgutil.iter_modules(__path__):
    if _info.name not in _INFRASTRUCTURE:
        importlib.import_module(f"{__name__}.{_info.name}")


def from_tflite(source):
    """The first subgraph of a .tflite file (path or bytes) as a cortexm Graph in quantized form,
    carrying the file's scales, zero points and per-channel weights. ValueError for a malformed
    file, NotImplementedError listing every operator or type that cannot be imported."""
    data, name = model.read_source(source)
    return importer.build(model.parse(data, name))


def program_io(source) -> str:
    """The to_program io that gives the file's own input and output dtypes: "int8" when every
    input and output of the .tflite is int8 (the graph's boundary quantize / dequantize stand for
    them), else "float" (its QUANTIZE / DEQUANTIZE are in the graph; an int16 boundary too: the
    program then takes q * scale and gives float32 values that round back to the integers, as
    to_program(io="int8") takes int8 only)."""
    data, name = model.read_source(source)
    m = model.parse(data, name)
    return "int8" if all(m.tensors[i].type == "INT8" for i in (*m.inputs, *m.outputs)) else "float"


def supported_operators() -> list[str]:
    return sorted(HANDLERS)


__all__ = ["from_tflite", "program_io", "supported_operators", "tflite_op"]
