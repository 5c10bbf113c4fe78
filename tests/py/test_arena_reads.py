"""Issue 35: a program may read only arena bytes its run wrote, and its strings are plain text.

The loader proves that every arena byte an op reads was written before it (by a program input or an
earlier op's output, not left by an earlier op's scratch) and that every program output is written,
so a run's outputs never show what the arena held before (on the host: the heap's old contents); the
host's arenas start zeroed all the same. Every string of the file is printable ASCII, at most 256
characters. tests/fuzz/mutate_programs.py checks the same on mutants of the corpus programs."""

import gc
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cortexm
from test_program import FLATC, SCHEMA, from_json, g_cat_and_linear, load_bytes, rand, to_json

needs_flatc = pytest.mark.skipif(FLATC is None, reason="flatc not installed")

FUZZ = Path(__file__).resolve().parents[1] / "fuzz"


def leak_program(tmp_path, inputs):
    """The report's program: no ops, one int8 output in the arena (a program input or nothing)."""
    doc = {"schema_version": 5, "target": "cortex-m55+int8", "isa": "Mve",
           "tensors": [{"name": "leak", "dtype": "Int8", "shape": [1, 256], "location": "Arena", "offset": 0,
                        "qparams": {"scales": [0.05], "zero_points": [0]}}],
           "ops": [], "inputs": inputs, "outputs": [0], "arena_size": 256}
    return from_json(doc, tmp_path)


@needs_flatc
def test_a_program_without_ops_must_not_return_unwritten_arena_bytes(tmp_path):
    with pytest.raises(ValueError, match=r"outputs\[0\]: tensor = 0: must be written by the program: some of its "
                                         r"arena bytes are in no program input and no op's output"):
        load_bytes(leak_program(tmp_path, inputs=[]))
    # The same output as a program input is written by it: the program loads and returns its input.
    program = load_bytes(leak_program(tmp_path, inputs=[0]))
    x = rand((1, 256), "int8")
    np.testing.assert_array_equal(program.run(x), x)


@pytest.fixture(scope="module")
def cat_and_linear():
    """g_cat_and_linear's program: Permute a -> t3, Permute b -> t4, Cat -> t5 (over a), fc(c) -> t8."""
    graph, inputs = g_cat_and_linear()
    program = cortexm.to_program(graph, bundle_inputs=tuple(inputs))
    ops = program.ops()
    assert [op["name"] for op in ops] == ["_clone_dim_order", "_clone_dim_order_1", "cat", "fc"]
    assert ops[3]["inputs"][0] == 2 and program.tensors()[2]["offset"] == 224 and program.arena_size == 256
    return program


def edited(program, tmp_path, edit):
    doc = to_json(program.data, tmp_path)
    edit(doc)
    return from_json(doc, tmp_path)


def read_from(offset, arena_size=None):
    """fc's input replaced by a new [3, 8] int8 tensor at `offset`."""
    def edit(doc):
        doc["tensors"].append({**doc["tensors"][2], "name": "unwritten", "offset": offset})
        doc["ops"][3]["inputs"][0] = len(doc["tensors"]) - 1
        if arena_size:
            doc["arena_size"] = arena_size
    return edit


@needs_flatc
def test_an_op_reading_arena_bytes_nothing_wrote_is_refused(cat_and_linear, tmp_path):
    # Nothing writes [256, 280).
    with pytest.raises(ValueError, match=r"ops\[3\] \('fc', QuantizedLinear\): inputs\[0\] = 9: must be written "
                                         r"before the op reads it: some of its arena bytes are in no program "
                                         r"input and no earlier op's output"):
        load_bytes(edited(cat_and_linear, tmp_path, read_from(256, arena_size=288)))
    # [216, 240): [224, 240) is input c's, but the gap [216, 224) after t4 is nobody's.
    with pytest.raises(ValueError, match=r"ops\[3\] \('fc', QuantizedLinear\): inputs\[0\] = 9: must be written"):
        load_bytes(edited(cat_and_linear, tmp_path, read_from(216)))
    # [64, 88): input b's bytes, which the Cat's output writes over again: written.
    program = load_bytes(edited(cat_and_linear, tmp_path, read_from(64)))
    assert program.ops()[3]["inputs"][0] == 9


@needs_flatc
def test_an_op_reading_an_earlier_ops_scratch_is_refused(cat_and_linear, tmp_path):
    def scratch(offset):
        def edit(doc):
            doc["ops"][1]["scratch_offset"], doc["ops"][1]["scratch_size"] = offset, 16
        return edit

    # The second Permute's scratch over input c, which fc reads after it: c's bytes are undefined.
    with pytest.raises(ValueError, match=r"ops\[3\] \('fc', QuantizedLinear\): inputs\[0\] = 2: must be written "
                                         r"before the op reads it: some of its arena bytes were last an earlier "
                                         r"op's scratch"):
        load_bytes(edited(cat_and_linear, tmp_path, scratch(224)))
    # Over input a, which is dead then and the Cat writes over again: fine.
    program = load_bytes(edited(cat_and_linear, tmp_path, scratch(0)))
    program.verify()
    # A program output whose bytes an op's scratch takes last.
    def output_in_scratch(doc):
        doc["ops"][3]["scratch_offset"], doc["ops"][3]["scratch_size"] = 0, 16
    with pytest.raises(ValueError, match=r"outputs\[0\]: tensor = 5: must be written by the program: some of its "
                                         r"arena bytes were last an op's scratch"):
        load_bytes(edited(cat_and_linear, tmp_path, output_in_scratch))


def test_written_programs_load_and_run_the_same_twice(cat_and_linear):
    program = load_bytes(cat_and_linear.data)
    program.verify()
    inputs = [rand(tuple(i["shape"]), i["dtype"]) for i in program.inputs]
    first = program.run(*inputs)
    for a, b in zip(first, program.run(*inputs)):
        assert a.tobytes() == b.tobytes()


def test_a_new_host_arena_is_zeroed():
    graph, inputs = g_cat_and_linear()
    data = cortexm.to_program(graph).data
    for _ in range(20):  # arenas freed after runs on non-zero data, then allocated again
        program = load_bytes(data)
        for _ in range(3):
            program.run(*[np.full(x.shape, -7, x.dtype) for x in inputs])
        assert any(program._loaded._next_arena_bytes())  # the pooled arena holds the run's bytes
        del program
        gc.collect()
        fresh = load_bytes(data)
        arena = fresh._loaded._next_arena_bytes()
        assert len(arena) == fresh._loaded.required_arena_size and not any(arena)
        del fresh
        gc.collect()


BAD_STRINGS = {
    "target newline": (lambda d: d.__setitem__("target", "cortex-m55+int8\nPASS"),
                       r"program: target\[15\] = 10: must be printable ASCII \(characters 0x20 to 0x7e\)"),
    "op name escape": (lambda d: d["ops"][3].__setitem__("name", "fc\u001b[2J"),
                       r"ops\[3\]: name\[2\] = 27: must be printable ASCII"),
    "tensor name utf-8": (lambda d: d["tensors"][2].__setitem__("name", "c\u00e9"),
                          r"tensors\[2\]: name\[1\] = 195: must be printable ASCII"),
    "tensor name nul": (lambda d: d["tensors"][0].__setitem__("name", "a\u0000b"),
                        r"tensors\[0\]: name\[1\] = 0: must be printable ASCII"),
    "op name too long": (lambda d: d["ops"][0].__setitem__("name", "x" * 257),
                         r"ops\[0\]: name.size = 257: must be at most 256 characters"),
    "target del": (lambda d: d.__setitem__("target", "cortex-m55\u007f"),
                   r"program: target\[10\] = 127: must be printable ASCII"),
}


@needs_flatc
@pytest.mark.parametrize("case", list(BAD_STRINGS))
def test_strings_must_be_printable_ascii_and_short(case, cat_and_linear, tmp_path):
    edit, message = BAD_STRINGS[case]
    with pytest.raises(ValueError, match=message) as error:
        load_bytes(edited(cat_and_linear, tmp_path, edit))
    assert str(error.value).isascii() and str(error.value).isprintable()  # the bad name is not echoed


@needs_flatc
def test_the_longest_printable_names_load(cat_and_linear, tmp_path):
    name = "".join(chr(c) for c in range(0x20, 0x7f)) * 3  # 285 characters
    def edit(doc):
        doc["target"] = name[:256]
        doc["ops"][3]["name"] = name[-256:]
        doc["tensors"][2]["name"] = name[:256]
    program = load_bytes(edited(cat_and_linear, tmp_path, edit))
    assert program.ops()[3]["name"] == name[-256:] and program.target == name[:256]


def test_the_writer_refuses_a_name_the_loader_would():
    graph = cortexm.Graph()
    x = graph.add_input("x\ny", [4], "int8")
    graph.outputs = [x]
    with pytest.raises(ValueError, match=r"cannot write the program: program: tensors\[0\]: name\[1\] = 10: "
                                         r"must be printable ASCII"):
        cortexm.to_program(graph)


def test_mutants_never_crash_hang_or_read_the_arena():
    """A fixed-seed run of tests/fuzz/mutate_programs.py (the lead runs --count 30000)."""
    sys.path.insert(0, str(FUZZ))
    import mutate_programs

    counts, findings = mutate_programs.run(1000, seed=2)
    assert findings == [] and counts["crash"] == counts["hang"] == counts["arena_dependent"] == 0, counts
    assert counts["refused"] > 500 and counts["ran"] > 50, counts
