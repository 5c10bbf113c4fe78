"""The .tflite reader on hostile files: truncations, offsets out of range, aliased tables, huge
counts and corrupted bytes each raise ValueError naming the field (or NotImplementedError for a
well-formed file cortexm cannot import), never IndexError / struct.error / a hang, and fast."""

from __future__ import annotations

import struct
import time

import numpy as np
import pytest

import cortexm
from cortexm.tflite import schema as S
from tflite_writer import ModelBuilder, Table, Tables, Vector, finish


def small_model(buffer=None, shape=(1, 4, 4, 2)) -> bytes:
    m = ModelBuilder()
    x = m.tensor(shape, "INT8", 0.05, 3)
    kwargs = {} if buffer is None else {"buffer": buffer}
    wt = m.tensor((3, 1, 1, 2), "INT8", [0.01, 0.02, 0.03], 0, np.arange(6, dtype=np.int8).reshape(3, 1, 1, 2))
    if buffer is not None:
        m.tensors[wt].fields[S.TENSOR_BUFFER] = ("I", buffer)
    y = m.tensor(shape[:3] + (3,), "INT8", 0.1, -2)
    m.operator("CONV_2D", [x, wt], [y], S.OPTIONS_CONV2D,
               {S.CONV2D_PADDING: ("b", 1), S.CONV2D_STRIDE_W: ("i", 1), S.CONV2D_STRIDE_H: ("i", 1)})
    return m.build([x], [y])


def test_the_small_model_imports():
    assert any(n.op == "aten.convolution.default" for n in cortexm.from_tflite(small_model()).nodes)


def test_every_truncation_raises_value_error():
    data = small_model()
    start = time.monotonic()
    for n in range(len(data)):
        with pytest.raises(ValueError):
            cortexm.from_tflite(data[:n])
    assert time.monotonic() - start < 30


def test_buffer_index_past_the_buffers_names_the_field():
    with pytest.raises(ValueError, match=r"<tflite bytes>: subgraphs\[0\]\.tensors\[1\]\.buffer = 912: past the 2 buffers"):
        cortexm.from_tflite(small_model(buffer=912))


def test_root_offset_past_the_end():
    data = bytearray(small_model())
    struct.pack_into("<I", data, 0, len(data) + 100)
    with pytest.raises(ValueError, match="root|model|past the end"):
        cortexm.from_tflite(bytes(data))


def test_not_a_tflite_file():
    with pytest.raises(ValueError, match="too short"):
        cortexm.from_tflite(b"TFL3")
    data = bytearray(small_model())
    data[4:8] = b"ABCD"
    with pytest.raises(ValueError, match="not b'TFL3'"):
        cortexm.from_tflite(bytes(data))


def test_vtable_offset_out_of_range():
    data = bytearray(small_model())
    root = struct.unpack_from("<I", data, 0)[0]
    struct.pack_into("<i", data, root, -(1 << 30))
    with pytest.raises(ValueError, match="vtable at byte"):
        cortexm.from_tflite(bytes(data))


def test_huge_vector_count_is_refused_fast():
    m = ModelBuilder()
    x = m.tensor((1, 4), "INT8", 0.1, 0)
    data = bytearray(m.build([x], [x]))
    # the shape vector [1, 4]: its count 2 followed by 1, 4
    at = data.find(struct.pack("<Iii", 2, 1, 4))
    struct.pack_into("<I", data, at, 0xFFFFFFFF)
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"tensors\[0\]\.shape: vector of 4294967295 elements"):
        cortexm.from_tflite(bytes(data))
    assert time.monotonic() - start < 1


def test_huge_shapes_are_refused():
    m = ModelBuilder()
    x = m.tensor((1 << 20, 1 << 20), "INT8", 0.1, 0)
    with pytest.raises(ValueError, match=r"tensors\[0\]\.shape = \[1048576, 1048576\]: 1099511627776 elements are above 2\^31"):
        cortexm.from_tflite(m.build([x], [x]))
    m = ModelBuilder()
    x = m.tensor((1, -1, 4), "INT8", 0.1, 0)
    with pytest.raises(ValueError, match="negative dimension"):
        cortexm.from_tflite(m.build([x], [x]))


def test_constant_data_of_the_wrong_size():
    m = ModelBuilder()
    x = m.tensor((1, 4), "INT8", 0.1, 0)
    w = m.tensor((3, 4), "INT8", 0.1, 0, np.zeros(5, np.int8))
    with pytest.raises(ValueError, match=r"tensors\[1\]\.buffer = 1: holds 5 bytes where shape \[3, 4\] of INT8 needs 12"):
        cortexm.from_tflite(m.build([x], [x]))


def test_operator_indices_out_of_range():
    m = ModelBuilder()
    x = m.tensor((1, 4), "INT8", 0.1, 0)
    m.operator("RESHAPE", [x, 7], [x])
    with pytest.raises(ValueError, match=r"subgraphs\[0\]\.operators\[0\]\.inputs\[1\] = 7: past the 1 tensors"):
        cortexm.from_tflite(m.build([x], [x]))
    m.operators[0].fields[S.OPERATOR_OPCODE_INDEX] = ("I", 5)
    m.operators[0].fields[S.OPERATOR_INPUTS] = Vector("i", [x])
    with pytest.raises(ValueError, match=r"operators\[0\]\.opcode_index = 5: past the 1 operator codes"):
        cortexm.from_tflite(m.build([x], [x]))


def test_aliased_tables_are_read_as_declared():
    """uoffsets are unsigned (they point forward), so no reference can loop; three subgraph
    entries aliasing one table are read once each, as the schema says, and the empty model is
    refused."""
    sub = Table({S.SUBGRAPH_NAME: "x"})
    data = finish(Table({S.MODEL_SUBGRAPHS: Tables([sub, sub, sub])}))
    with pytest.raises(ValueError, match=r"subgraphs\[0\]\.outputs: the model has no outputs"):
        cortexm.from_tflite(data)


def test_quantization_inconsistent_with_the_shape():
    m = ModelBuilder()
    x = m.tensor((1, 4), "INT8", [0.1, 0.2, 0.3], 0, axis=1)
    with pytest.raises(ValueError, match=r"tensors\[0\]\.quantization\.scale: 3 scales for dimension 1 of size 4"):
        cortexm.from_tflite(m.build([x], [x]))
    m = ModelBuilder()
    x = m.tensor((1, 4), "INT8", [0.1, 0.2], 0, axis=7)
    with pytest.raises(ValueError, match=r"quantized_dimension = 7: outside the tensor's rank 2"):
        cortexm.from_tflite(m.build([x], [x]))


def test_inconsistent_operator_shapes_raise_value_error():
    with pytest.raises(ValueError, match=r"1 operator\(s\) are inconsistent:\n  operator 0 CONV_2D .*filter input depth 2"):
        cortexm.from_tflite(small_model(shape=(1, 4, 4, 5)))  # filter depth 2 vs 5 input channels


@pytest.mark.parametrize("seed", range(4))
def test_random_corruptions_raise_only_documented_errors(seed):
    data = small_model()
    rng = np.random.default_rng(seed)
    start = time.monotonic()
    for _ in range(150):
        bad = bytearray(data)
        for at in rng.integers(0, len(bad), size=int(rng.integers(1, 4))):
            bad[at] = int(rng.integers(0, 256))
        try:
            cortexm.from_tflite(bytes(bad))
        except (ValueError, NotImplementedError):
            pass
    assert time.monotonic() - start < 60


def test_a_scalar_where_a_convolution_reads_nhwc():
    m = ModelBuilder()
    x = m.tensor((), "INT8", 0.05, 3)
    wt = m.tensor((1, 1, 1, 3), "INT8", 0.01, 0, np.ones((1, 1, 1, 3), np.int8), axis=3)
    y = m.tensor((1, 1, 1, 3), "INT8", 0.1, 0)
    m.operator("DEPTHWISE_CONV_2D", [x, wt], [y], S.OPTIONS_DEPTHWISE_CONV2D,
               {S.DW_PADDING: ("b", 1), S.DW_STRIDE_W: ("i", 1), S.DW_STRIDE_H: ("i", 1)})
    with pytest.raises(ValueError, match=r"operator 0 DEPTHWISE_CONV_2D .*input shape \[\] \(NHWC expected\)"):
        cortexm.from_tflite(m.build([x], [y]))


def test_an_operator_without_outputs():
    m = ModelBuilder()
    x = m.tensor((1, 4), "INT8", 0.1, 0)
    m.operator("RESHAPE", [x], [])
    with pytest.raises(ValueError, match=r"operator 0 RESHAPE \(inputs: int8 \[1, 4\]; outputs: \): the operator has no outputs"):
        cortexm.from_tflite(m.build([x], [x]))
