"""The loader verifies Program and Op itself (src/runtime/loader.cc verify_program / verify_op,
so each op's params go to its kernel's table verifier and a firmware links no other): each field
program.fbs gives these tables must be verified there, as FlatBuffers' generated Verify would."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def fields(schema: str, table: str) -> list[str]:
    body = re.search(rf"^table {table} {{\n(.*?)^}}", schema, re.M | re.S).group(1)
    body = re.sub(r"//.*|\(.*?\)", "", body)  # comments, attributes
    names = []
    for name, kind in re.findall(r"(\w+)\s*:\s*\[?(\w+)", body):
        if kind == "OpParams":  # a union: its type field, then the table
            names.append(f"{name}_type")
        names.append(name)
    return names


@pytest.mark.parametrize("table", ["Program", "Op"])
def test_loader_verifies_every_field(table):
    schema = (ROOT / "src" / "program" / "program.fbs.in").read_text()
    loader = (ROOT / "src" / "runtime" / "loader.cc").read_text()
    names = fields(schema, table)
    assert len(names) >= 8
    missing = [n for n in names if f"fb::{table}::VT_{n.upper()}" not in loader]
    assert not missing, f"loader.cc's verify_{table.lower()} does not verify {table}.{missing}"
