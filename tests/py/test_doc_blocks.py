"""Every Python block of the README and docs/*.md runs, in order, file by file, as a newcomer would
paste them (in a fresh directory, a fresh namespace per file)."""
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
QEMU_TOOLS = ("qemu-system-arm", "arm-none-eabi-g++")


def python_blocks(path: Path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


def test_every_doc_with_python_is_covered():
    with_blocks = [p.name for p in DOCS if python_blocks(p)]
    assert {"README.md", "program.md", "memory_planning.md", "qemu.md"} <= set(with_blocks), with_blocks


@pytest.mark.parametrize("path", [p for p in DOCS if python_blocks(p)], ids=lambda p: p.name)
def test_python_blocks_run(path, tmp_path, monkeypatch):
    if "run_on_qemu" in path.read_text() and not all(shutil.which(t) for t in QEMU_TOOLS):
        pytest.skip("needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")
    monkeypatch.chdir(tmp_path)
    scope = {}
    for block in python_blocks(path):
        exec(compile(block, str(path), "exec"), scope)
    if path.name == "README.md":
        assert (tmp_path / "m.cmpte").exists() and (tmp_path / "ds_cnn.cmg").exists()
        assert scope["program"].verify() == 1
