"""The README's Python blocks run, in order, as a newcomer would paste them (in a fresh directory)."""
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    blocks = python_blocks()
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    scope = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), scope)
    assert (tmp_path / "m.cmpte").exists() and (tmp_path / "ds_cnn.cmg").exists()
    assert scope["program"].verify() == 1
