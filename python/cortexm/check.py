"""cortexm.check: can a model deploy? Export, quantize, lower and plan it, and list every problem at
once (with the module path of each node) and every op that would run as float fallback, and why.

    report = cortexm.check(model, example_inputs)
    report = cortexm.check("model.tflite")   # or its bytes: import, lower and plan the .tflite
    print(report)          # problems, float fallback, the program's size
    report.ok              # False when a problem prevents deployment

``python -m cortexm.aot --model M --check`` prints the same report (exit status 1 when not ok).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from . import _core
from .auto_precision import quantize
from .escape import printable
from .export import export
from .passes import as_target, lower_unchecked
from .build import to_program
from .tflite import from_tflite, program_io

@dataclass(frozen=True)
class Problem:
    """Something that prevents deployment: at stage "export", "quantize", "lower" or "program" ("import"
    for a .tflite)."""

    stage: str
    module: str  # the node's module path ("" = the top-level module)
    op: str  # the aten / graph op ("" when the problem is not one node's)
    message: str  # what is wrong, without the module path
    node: str = ""

    def __str__(self) -> str:
        return printable(f"{self.module or '(top-level module)'}: {self.message}")


@dataclass(frozen=True)
class FloatFallback:
    """A compute node left float: the program runs it with the portable float kernels."""

    node: str
    op: str
    module: str
    why: str  # "not quantized: ..." or "no int8 kernel: ..." (or 16x8)

    def __str__(self) -> str:
        return printable(f"{self.module or '(top-level module)'}: {self.op} (node '{self.node}') runs as float "
                         f"fallback: {self.why}")


@dataclass
class CheckReport:
    target: str
    precision: str
    problems: list = field(default_factory=list)  # [Problem]
    float_fallback: list = field(default_factory=list)  # [FloatFallback]
    program: object = None  # the cortexm.Program when every stage passed
    stages: list = field(default_factory=list)  # the stages that ran

    @property
    def ok(self) -> bool:
        """True when the model deploys (float fallback allowed: it runs, slower)."""
        return not self.problems

    def __str__(self) -> str:
        head = f"cortexm.check for {self.target} ({self.precision}): "
        if self.problems:
            lines = [head + f"{len(self.problems)} problem{'s' if len(self.problems) > 1 else ''} prevent"
                     f"{'' if len(self.problems) > 1 else 's'} deployment (stages run: {', '.join(self.stages)})"]
            lines += [f"  {p}" for p in self.problems]
        else:
            lines = [head + f"deploys: {self.program.summary()}"]
        if self.float_fallback:
            lines.append(f"float fallback ({len(self.float_fallback)} op{'s' if len(self.float_fallback) > 1 else ''}):")
            lines += [f"  {f}" for f in self.float_fallback]
        elif self.stages and self.stages[-1] in ("lower", "program"):
            lines.append("float fallback: none")
        return "\n".join(lines)


def _export_problem(op: str, module: str, message: str) -> Problem:
    text = message.removeprefix("cortexm.export: ")
    for where in (f" in module '{module}'", " in the top-level module"):  # the module is a field of its own
        text = text.replace(where, "", 1)
    if " is not supported" in text:
        text = text.replace(" is not supported", " is not supported at export", 1)
    return Problem("export", module, op, text)


def _error_problem(stage: str, error: Exception) -> Problem:
    return Problem(stage, "", "", f"{stage} failed: {type(error).__name__}: {error}")


def _float_fallback(lowered, precision: str) -> list:
    out = []
    for node in lowered.nodes:
        if not node.op.startswith("aten.") or _core.op_info(node.op).is_data_movement:
            continue
        if node.meta.get("quantization") == "float" or "lowering" not in node.meta:
            reason = node.meta.get("float_reason", "")
            why = "not quantized" + (f": {reason}" if reason else "")
        else:
            why = f"no {precision} kernel: {node.meta['lowering']}"
        out.append(FloatFallback(node.name, node.op, node.source, why))
    return out


def is_tflite(model) -> bool:
    """A .tflite path (str / os.PathLike ending in .tflite) or the bytes of one (TFL3 at offset 4)."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model[4:8]) == b"TFL3"
    return isinstance(model, (str, os.PathLike)) and os.fspath(model).lower().endswith(".tflite")


_TFLITE_OPERATOR = re.compile(r"operator (\d+) (\w+) ")


def _import_problem(text: str) -> Problem:
    """One from_tflite problem ("operator 3 SVDF (inputs: ...): what") with its operator as the module."""
    found = _TFLITE_OPERATOR.match(text)
    if found:
        return Problem("import", f"tflite operator {found.group(1)}", found.group(2), text)
    return Problem("import", "", "", text)


def _check_tflite(model, target: str, precision: str) -> CheckReport:
    report = CheckReport(target, precision)
    if precision != "int8":
        raise ValueError(f"precision = {precision!r}: a .tflite carries its own types (int8 / 16x8); check it with "
                         "precision='int8'")
    report.stages.append("import")
    try:
        graph = from_tflite(model)
        io = program_io(model)
    except NotImplementedError as e:
        found = getattr(e, "problems", None) or [str(e)]
        report.problems += [_import_problem(p) for p in found]
        return report
    except (ValueError, OSError) as e:
        report.problems.append(_error_problem("import", e))
        return report
    return _lower_and_program(report, graph, target, precision, io)


def check(model, example_inputs=None, calibration=None, *, target="cortex-m55+int8",
          precision: str = "int8") -> CheckReport:
    """Runs export, quantize (calibration: an iterable of input tuples; default the example inputs),
    lower and to_program for target, and reports every problem each stage finds (export lists
    every unsupported op; lower every node no program can run) plus the float fallback ops. It
    stops at the first stage with problems, as the next needs that stage's output.

    A .tflite (a path ending in .tflite, or the file's bytes) needs no example inputs: it is
    imported with cortexm.from_tflite (stage "import": every operator or type it cannot import,
    each with its operator index), then lowered and written with the file's own input / output
    dtypes."""
    target = str(as_target(target))
    if is_tflite(model):
        if example_inputs is not None or calibration is not None:
            raise ValueError("example_inputs / calibration: a .tflite carries its own quantization; give only the file")
        return _check_tflite(model, target, precision)
    if example_inputs is None:
        raise ValueError("example_inputs: required for a torch model (a tuple of tensors); only a .tflite needs none")
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    report = CheckReport(target, precision)
    report.stages.append("export")
    try:
        graph = export(model, tuple(example_inputs))
    except NotImplementedError as e:
        found = getattr(e, "problems", None) or [("", "", str(e))]
        report.problems += [_export_problem(*p) for p in found]
        return report
    except (ValueError, RuntimeError) as e:
        report.problems.append(_error_problem("export", e))
        return report
    report.stages.append("quantize")
    samples = [tuple(example_inputs)] if calibration is None else list(calibration)
    try:
        qgraph = quantize(graph, samples, progress=False, precision=precision)
    except (ValueError, NotImplementedError, RuntimeError) as e:
        report.problems.append(_error_problem("quantize", e))
        return report
    return _lower_and_program(report, qgraph, target, precision, None)


def _lower_and_program(report: CheckReport, qgraph, target: str, precision: str, io) -> CheckReport:
    report.stages.append("lower")
    try:
        lowered = lower_unchecked(qgraph, target)
    except (ValueError, NotImplementedError, RuntimeError) as e:
        report.problems.append(_error_problem("lower", e))
        return report
    unrunnable = _core.program_problems(lowered)
    for p in unrunnable:
        report.problems.append(Problem("lower", p["source"], p["op"],
                                       f"{p['op']} (node '{p['node']}') cannot run in a program: {p['reason']}", p["node"]))
    refused = {p["node"] for p in unrunnable}  # left float, but with no float kernel either
    report.float_fallback = [f for f in _float_fallback(lowered, precision) if f.node not in refused]
    if report.problems:
        return report
    report.stages.append("program")
    try:
        report.program = to_program(lowered, target=target, io=io or "float")
    except (ValueError, NotImplementedError, RuntimeError) as e:
        report.problems.append(_error_problem("program", e))
    return report
