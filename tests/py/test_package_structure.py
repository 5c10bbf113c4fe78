"""The package's structure (issue 29): no function-level import of a cortexm module to dodge an import
cycle, a quantizer that imports nothing of the pipeline above it (lowering, programs, QEMU, the CLIs,
the package root), and no hand-kept op list outside the op families (cortexm/ops/). Checked on the
source with ast, without importing it."""

import ast
import importlib.util
import re
from pathlib import Path

import pytest

# the package as imported (not run: its source)
PACKAGE = Path(importlib.util.find_spec("cortexm").origin).parent
#: heavy optional third-party modules, imported where they are used so that cortexm imports without them
OPTIONAL = {"torch", "matplotlib", "tqdm"}
#: ops_matrix.py (a torch-only tool) is being rewritten on another branch; its function-level imports
#: move with that work
NOT_YET: set[str] = set()
#: what the quantizer may import of cortexm: the C++ module, string escaping, the quantize/dequantize ops
#: and the progress bar (leaf modules, importing nothing of cortexm)
QUANTIZER_MAY_IMPORT = {"cortexm._core", "cortexm.escape", "cortexm.qdq", "cortexm.progress"}
#: a string naming a graph / kernel op (aten.relu.default, cortex_m.quantized_add.default, ...)
OP_NAME = re.compile(r"\b(aten|cortex_m|quantized_decomposed|dim_order_ops)\.\w")
#: op names outside cortexm/ops/ that are no op list: the few ops a generic mechanism makes or reads
OP_NAMES_ALLOWED = {
    # the quantize / dequantize nodes the quantizer's convert inserts
    "quantizer/convert.py": {"quantized_decomposed.quantize_per_tensor.default",
                             "quantized_decomposed.dequantize_per_tensor.default",
                             "quantized_decomposed.dequantize_per_channel.default"},
    # the rewrite of x / y into x * reciprocal(y), before annotation
    "quantizer/reciprocal_division.py": {"aten.div.Tensor", "aten.reciprocal.default", "aten.mul.Tensor"},
    # the lowered graph's input quantize, where compare starts
    "compare.py": {"cortex_m.quantize_per_tensor.default"},
    # the slices and cats the patch rewrite makes; the dim order clone the planner may alias
    "patches.py": {"aten.slice_copy.Tensor", "aten.cat.default", "dim_order_ops._clone_dim_order.default"},
    # the TFLite importer's quantize / dequantize around imported ops and its layout permutes
    "tflite/importer.py": {"quantized_decomposed.quantize_per_tensor.default",
                           "quantized_decomposed.dequantize_per_tensor.default",
                           "quantized_decomposed.dequantize_per_channel.default", "aten.permute_copy.default"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return (path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()
            or any(path.parent.glob(path.name + ".*.so")))  # the extension module _core


def imported(node, path: Path) -> list[str]:
    """The modules an Import / ImportFrom node imports (for `from M import x`: M.x when it is a module)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = module_name(path).split(".")
        if path.name != "__init__.py":
            package = package[:-1]
        base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
    else:
        base = node.module
    names = [f"{base}.{alias.name}" for alias in node.names]
    return [n for n in names if is_module(n)] or [base]


def sources():
    return sorted(PACKAGE.rglob("*.py"))


def top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in tree.body:
        for sub in ast.walk(node):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                break
            if isinstance(sub, (ast.Import, ast.ImportFrom)):
                found.update(imported(sub, path))
    return found


def needing_optional() -> set[str]:
    """The cortexm modules that import an optional dependency at import time, directly or through
    another cortexm module (the _export package and the models need torch)."""
    imports = {module_name(p): top_level_imports(p) for p in sources()}
    needing = set()
    changed = True
    while changed:
        changed = False
        for module, names in imports.items():
            if module not in needing and any(n.split(".")[0] in OPTIONAL or n in needing for n in names):
                needing.add(module)
                changed = True
    return needing


def function_level_imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    yield sub.lineno, imported(sub, path)


def test_no_function_level_import_of_a_cortexm_module():
    optional = needing_optional()
    assert "cortexm._export.capture" in optional and "cortexm" not in optional
    found = []
    for path in sources():
        if module_name(path) in NOT_YET:
            continue
        for line, names in function_level_imports(path):
            found += [f"{path.relative_to(PACKAGE)}:{line}: {n}" for n in names
                      if n.split(".")[0] == "cortexm" and n not in optional]
    assert not found, "import these at the top of the module (an import cycle is a layering problem):\n" + \
        "\n".join(found)


def test_the_quantizer_imports_nothing_above_it():
    found = []
    for path in sorted((PACKAGE / "quantizer").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found += [f"{path.relative_to(PACKAGE)}:{node.lineno}: {n}" for n in imported(node, path)
                          if n.split(".")[0] == "cortexm" and not n.startswith("cortexm.quantizer")
                          and n not in QUANTIZER_MAY_IMPORT]
    assert not found, "the quantizer sits below the lowering, programs and CLIs:\n" + "\n".join(found)


def test_the_public_api_is_unchanged():
    import cortexm
    import cortexm.qdq
    import cortexm.quantizer

    for name in ("quantize", "CortexMQuantizer", "quantization_report", "lower", "to_program", "Program",
                 "load_program", "check", "compare", "export", "plan_memory", "MemoryPlan", "run_on_qemu"):
        assert name in cortexm.__all__ and hasattr(cortexm, name), name
    assert cortexm.quantizer.is_quantized is cortexm.qdq.is_quantized


def test_program_py_is_the_wrapper_build_py_the_pipeline():
    defined = {}
    for module in ("program", "build", "program_plan"):
        tree = ast.parse((PACKAGE / f"{module}.py").read_text())
        defined[module] = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert {"Program", "load_program"} <= defined["program"]
    assert not {"to_program", "ProgramMemoryPlan", "Buffer"} & defined["program"]
    assert "to_program" in defined["build"]
    assert {"ProgramMemoryPlan", "Buffer"} <= defined["program_plan"]
    from cortexm.program import Program, ProgramMemoryPlan, load_program, to_program  # noqa: F401


def test_the_quantizer_alone_asks_for_the_lowering_precision_auto_needs():
    import numpy as np

    import cortexm
    import cortexm.quantizer

    g = cortexm.Graph()
    x = g.add_input("x", [1, 4], "float32")
    g.outputs = [g.call("aten.relu.default", [x], {})]
    sample = (np.ones((1, 4), np.float32),)
    with pytest.raises(ValueError, match=r"precision='auto' lowers its candidate graphs: call cortexm.quantize"):
        cortexm.quantizer.quantize(g, [sample], precision="auto", progress=False)


def docstrings(tree) -> set:
    """The ids of the docstring constants of a module's, classes' and functions' bodies."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def op_names(path: Path) -> list[tuple[int, str]]:
    """(line, string) of each string constant naming an op, docstrings aside (f-string parts included)."""
    tree = ast.parse(path.read_text())
    skip = docstrings(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
            and OP_NAME.search(node.value)]


def is_family_module(path: Path) -> bool:
    """cortexm/ops/<family>.py, or a TFLite front-end family, cortexm/tflite/<family>.py (the modules
    registering importers with @tflite_op)."""
    relative = path.relative_to(PACKAGE).as_posix()
    if relative.startswith("ops/"):
        return True
    return relative.startswith("tflite/") and any(
        isinstance(d, ast.Call) and getattr(d.func, "id", None) == "tflite_op"
        for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.FunctionDef)
        for d in node.decorator_list)


def test_no_op_list_outside_the_op_families():
    """An op's facts live in its family module (cortexm/ops/<family>.py), registered by decorator; the
    rest of the package derives its op sets from those registries or from the C++ op registry."""
    found = []
    for path in sources():
        relative = path.relative_to(PACKAGE).as_posix()
        if is_family_module(path):
            continue
        allowed = OP_NAMES_ALLOWED.get(relative, set())
        found += [f"{relative}:{line}: {text!r}" for line, text in op_names(path) if text not in allowed]
    assert not found, "op names outside cortexm/ops/ (register them from the op's family module):\n" + \
        "\n".join(found)


def test_the_allowed_op_names_are_still_used():
    for relative, allowed in OP_NAMES_ALLOWED.items():
        assert allowed <= {text for _, text in op_names(PACKAGE / relative)}, relative
