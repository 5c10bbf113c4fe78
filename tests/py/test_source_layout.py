"""The op family layout (docs/adding_an_op.md): each family's runtime folder is freestanding runtime
code, the build-collected registrations follow the forms the build scans for, and the one hand-kept
op list is the kernel-id list."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
FAMILIES = sorted(p for p in (SRC / "ops").iterdir() if p.is_dir())
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def test_there_are_families():
    assert {p.name for p in FAMILIES} >= {"conv", "linear", "pool", "binary", "activation", "softmax",
                                          "reduction", "norm", "data_movement", "quant"}


@pytest.mark.parametrize("family", FAMILIES, ids=lambda p: p.name)
def test_runtime_folder_includes_only_runtime_code(family):
    """The runtime (src/runtime/CMakeLists.txt) compiles src/ops/*/runtime/*.cc without the graph
    library: its files include kernels, the runtime, the generated schema and runtime folders."""
    allowed = (r"cortexm/kernels/", r"cortexm/portable/", r"runtime/", r"program/program_generated\.h$",
               r"ops/[a-z_0-9]+/runtime/", r"flatbuffers/")
    bad = []
    for f in sorted((family / "runtime").glob("*")):
        for header in INCLUDE.findall(f.read_text()):
            if not any(re.match(a, header) for a in allowed):
                bad.append(f"{f.relative_to(ROOT)}: {header}")
    assert not bad, "runtime code includes graph-side headers:\n" + "\n".join(bad)


def test_every_kernel_id_has_one_family_kernel():
    """What the build checks when it generates runtime/ops/ops.def, for a reader of the sources."""
    ids = re.findall(r"^KERNEL_ID\((\w+)\)", (SRC / "program" / "kernel_ids.def").read_text(), re.M)
    assert len(ids) == len(set(ids))
    defined = []
    for family in FAMILIES:
        ops_def = family / "runtime" / "ops.def"
        if ops_def.exists():
            defined += re.findall(r"^RUNTIME_(?:OP|BINARY)\((\w+),", ops_def.read_text(), re.M)
    assert sorted(defined) == sorted(ids)


def test_no_hand_kept_op_lists_left():
    """The shared lists the families replaced are gone: the build generates them."""
    for gone in ["src/ops/ops.def", "src/runtime/ops/ops.def", "kernels/include/cortexm/kernels/kernels.def",
                 "src/ops/aten", "src/ops/cortex_m", "src/program/params"]:
        assert not (ROOT / gone).exists(), gone
    schema = (SRC / "program" / "program.fbs.in").read_text()
    assert "@CORTEXM_OP_PARAMS@" in schema
    assert set(re.findall(r"^table (\w+)", schema, re.M)) == {"QParams", "Tensor", "Op", "BundledCase",
                                                             "BundledTensor", "Program"}


def test_converters_and_graph_ops_are_where_the_build_looks():
    """src/CMakeLists.txt collects `void register_<name>(OpRegistry& registry)` and
    CORTEXM_CONVERTER(<name>) from src/ops/*/*.cc: a registration written any other way would be
    silently left out, so none is."""
    for f in SRC.rglob("*.cc"):
        text = f.read_text()
        in_family = f.parent.parent == SRC / "ops"
        for m in re.finditer(r"^[ \t]*void (register_\w+)\(OpRegistry&\s*(\w+)\)\s*\{", text, re.M):
            assert in_family and m.group(0).startswith("void ") and m.group(2) == "registry", \
                f"{f.relative_to(ROOT)}: {m.group(0)!r} is not collected by the build"
        for m in re.finditer(r"^[ \t]*CORTEXM_CONVERTER\(", text, re.M):
            assert in_family and f.name.startswith("convert_") and m.group(0) == "CORTEXM_CONVERTER(", \
                f"{f.relative_to(ROOT)}: a converter outside src/ops/<family>/convert_*.cc"
