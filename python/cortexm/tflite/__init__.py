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
    them), "int16" when they are int16 or int8 and one is int16 (a 16x8 model; an SVDF's int16 state,
    a program input and output too), else "float" (its QUANTIZE / DEQUANTIZE are in the graph)."""
    data, name = model.read_source(source)
    m = model.parse(data, name)
    states = {i for op in m.operators for i in op.inputs if i >= 0 and m.tensors[i].is_variable}
    types = {m.tensors[i].type for i in (*m.inputs, *m.outputs, *states)}
    if types <= {"INT8"}:
        return "int8"
    return "int16" if types <= {"INT8", "INT16"} else "float"


def supported_operators() -> list[str]:
    return sorted(HANDLERS)


__all__ = ["from_tflite", "program_io", "supported_operators", "tflite_op"]
