#!/usr/bin/env python3
"""Regenerates tests/py/data/program_corpus: a valid program file with bundled IO and corrupt,
truncated and hand-edited copies of it, with the error each must give (manifest.json).

The stored files pin the loader's behaviour on bytes written by an earlier writer: a change to the
schema or the loader that starts accepting one of them, or crashes on it, fails
test_program.py::test_stored_corpus. Run from the repository root after an intended schema change:
    PYTHONPATH=python .venv/bin/python scripts/make_program_corpus.py
"""

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "py"))

import cortexm  # noqa: E402
import test_program as t  # noqa: E402

OUT = ROOT / "tests" / "py" / "data" / "program_corpus"


def write(name, data, expect, manifest):
    (OUT / name).write_bytes(bytes(data))
    manifest[name] = expect


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.cmpte"):
        old.unlink()
    graph, inputs = t.g_cat_and_linear()
    data = cortexm.to_program(graph, bundle_inputs=tuple(inputs)).data
    manifest = {}
    write("valid.cmpte", data, None, manifest)
    for n in (0, 7, 16, 64, len(data) // 2, len(data) - 1):
        write(f"truncated_{n}.cmpte", data[:n], "program", manifest)
    bad = bytearray(data)
    bad[8:12] = b"XXXX"
    write("wrong_identifier.cmpte", bad, "file_identifier", manifest)
    write("garbage.cmpte", bytes((i * 151 + 7) % 256 for i in range(4096)), ".", manifest)
    with tempfile.TemporaryDirectory() as tmp:
        for edit, pattern in t.EDITS.items():
            doc = t.to_json(data, Path(tmp))
            edit(doc)
            name = edit.__name__.removeprefix("edit_") + ".cmpte"
            write(name, t.from_json(doc, Path(tmp)), pattern, manifest)
    tmp_manifest = OUT / "manifest.json.tmp"
    tmp_manifest.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    os.replace(tmp_manifest, OUT / "manifest.json")
    print(f"{len(manifest)} files in {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
