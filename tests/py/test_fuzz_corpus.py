"""The fuzz corpora of tests/fuzz: the seeds are valid files, and each input the fuzzers found
gives the clear error it names here (it once crashed or tripped a sanitizer)."""

from pathlib import Path

import pytest

import cortexm

CORPUS = Path(__file__).resolve().parents[1] / "fuzz" / "corpus"

FOUND = {
    # 8-byte shape elements at a 4-aligned address: passes the FlatBuffers verifier, UB to read.
    "program/misaligned_shape.cmpte": r"tensors\[19\] \('convolution_5_ihwo'\): shape.address % 8 = 4: must be 0",
    # The 8-byte ConstantSegment vector at a 4-aligned address, likewise.
    "program/misaligned_constants.cmpte": r"constants: address % 8 = 4: must be 0",
}


def test_every_found_input_is_listed():
    found = {f"{p.parent.name}/{p.name}" for kind in ("program", "graph")
             for p in (CORPUS / kind).iterdir() if not p.name.startswith("seed_")}
    assert found == set(FOUND)


@pytest.mark.parametrize("name", sorted(FOUND))
def test_found_inputs_give_clear_errors(name):
    load = cortexm.load_program if name.startswith("program/") else cortexm.Graph.load
    with pytest.raises(ValueError, match=FOUND[name]):
        load(CORPUS / name)


def test_seeds_load():
    programs = sorted((CORPUS / "program").glob("seed_*.cmpte"))
    graphs = sorted((CORPUS / "graph").glob("seed_*.cmg"))
    assert len(programs) >= 10 and len(graphs) >= 10
    for path in programs:
        cortexm.load_program(path).verify()
    for path in graphs:
        cortexm.Graph.load(path).verify()
