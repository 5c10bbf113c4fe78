"""The fuzz corpora of tests/fuzz: the seeds are valid files, each input the fuzzers found
gives the clear error it names here (it once crashed or tripped a sanitizer), and each valid
input they found runs (it once tripped a sanitizer while running; the corpus ctest cases run
them under ASan + UBSan)."""

from pathlib import Path

import numpy as np
import pytest

import cortexm

CORPUS = Path(__file__).resolve().parents[1] / "fuzz" / "corpus"

FOUND = {
    # 8-byte shape elements at a 4-aligned address: passes the FlatBuffers verifier, UB to read.
    "program/misaligned_shape.cmpte": r"tensors\[19\] \('convolution_5_ihwo'\): shape.address % 8 = 4: must be 0",
    # The 8-byte ConstantSegment vector at a 4-aligned address, likewise.
    "program/misaligned_constants.cmpte": r"constants: address % 8 = 4: must be 0",
    # A slice of one element with step 8.6e18: preparing it multiplied the input stride by the step
    # (signed overflow) before a later op's error refused the file.
    "program/slice_huge_step_one_element.cmpte": r"ops\[1\] \('select_copy', Select\): output.dtype = 3: must be the input's",
    # The permute before the softmax writes another tensor, so the softmax read arena bytes nothing
    # wrote: its outputs were whatever the arena held before (found as the log softmax one below).
    "program/unwritten_softmax_input.cmpte":
        r"ops\[1\] \('quantized_softmax', QuantizedSoftmax\): inputs\[0\] = 1: must be written before the op reads it",
}

RUNS = {
    # A log softmax whose diff_min is INT32_MIN: diff_min - 1 overflowed int32 (the permute's
    # output set back to the softmax's input, which unwritten_softmax_input.cmpte lacks).
    "program/log_softmax_diff_min_int32_min.cmpte",
    # resnet8 with a conv's bias moved from the constants into the arena (over the conv's input):
    # the load packed the weights for the AVX2 kernels with that bias as absent, so the AVX2 run
    # dropped it and its outputs differed from the scalar kernels' (host variant mode).
    "program/conv_bias_in_arena.cmpte",
}


def test_every_found_input_is_listed():
    found = {f"{p.parent.name}/{p.name}" for kind in ("program", "graph")
             for p in (CORPUS / kind).iterdir() if not p.name.startswith("seed_")}
    assert found == set(FOUND) | RUNS


@pytest.mark.parametrize("name", sorted(FOUND))
def test_found_inputs_give_clear_errors(name):
    load = cortexm.load_program if name.startswith("program/") else cortexm.Graph.load
    with pytest.raises(ValueError, match=FOUND[name]):
        load(CORPUS / name)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_found_valid_inputs_run(name):
    program = cortexm.load_program(CORPUS / name)
    rng = np.random.default_rng(0)
    inputs = [rng.integers(-128, 128, i["shape"]).astype(i["dtype"]) if i["dtype"] == "int8"
              else rng.standard_normal(i["shape"]).astype(i["dtype"]) for i in program.inputs]
    first = program.run(*inputs)
    again = program.run(*inputs)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    # Every x86 variant of the host kernels the CPU has gives the scalar kernels' bytes.
    before = cortexm.host_kernels()
    try:
        runs = {}
        for variant in cortexm.available_host_kernels():
            cortexm.set_host_kernels(variant)
            outs = program.run(*inputs)
            runs[variant] = [np.asarray(o).tobytes() for o in (outs if isinstance(outs, tuple) else (outs,))]
    finally:
        cortexm.set_host_kernels(before)
    for variant, outs in runs.items():
        assert outs == runs["scalar"], variant


def test_seeds_load():
    programs = sorted((CORPUS / "program").glob("seed_*.cmpte"))
    graphs = sorted((CORPUS / "graph").glob("seed_*.cmg"))
    assert len(programs) >= 10 and len(graphs) >= 10
    for path in programs:
        cortexm.load_program(path).verify()
    for path in graphs:
        cortexm.Graph.load(path).verify()
