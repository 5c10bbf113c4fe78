"""A .tflite file's first subgraph read into plain Python objects: tensors (shape, type, qparams,
constant data) and operators (builtin name, inputs, outputs, options table). Every index and size
is checked here, so the importer works on consistent data; a bad file raises ValueError naming the
field and the value."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from . import schema as S
from .flatbuffer import Buffer, Table

MAX_RANK = 8
MAX_ELEMENTS = 1 << 31  # elements of one tensor
MAX_FILE_BYTES = 1 << 31


@dataclass
class Quantization:
    scales: np.ndarray  # float32
    zero_points: np.ndarray  # int64
    axis: int

    @property
    def per_tensor(self) -> bool:
        return self.scales.size == 1


@dataclass
class Tensor:
    index: int
    name: str
    type: str  # TensorType name, e.g. "INT8"
    shape: tuple
    quant: Quantization | None
    data: np.ndarray | None  # constant data in shape, else None
    path: str
    is_variable: bool = False  # a stateful operator's state, kept by TFLite Micro between Invoke calls

    def describe(self) -> str:
        return f"{self.type.lower()} {list(self.shape)}"


@dataclass
class Operator:
    index: int
    builtin: str
    version: int
    inputs: tuple  # tensor indices, -1 for an absent optional input
    outputs: tuple
    options_type: int
    options: Table | None
    path: str


@dataclass
class Model:
    name: str
    tensors: list = field(default_factory=list)
    operators: list = field(default_factory=list)
    inputs: tuple = ()
    outputs: tuple = ()


def read_source(source) -> tuple[bytes, str]:
    """(bytes, name for errors) from a path (str / os.PathLike) or bytes-like."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), "<tflite bytes>"
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        with open(path, "rb") as f:  # OSError names the path
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ValueError(f"{path}: the file is larger than 2 GiB (TFLite's FlatBuffer limit)")
        return data, os.path.basename(path)
    raise ValueError(f"from_tflite: source = {type(source).__name__} must be a path (str or os.PathLike) "
                     "or the file's bytes")


def _indices(buf: Buffer, table: Table, fid: int, name: str, limit: int, what: str, optional: bool) -> tuple:
    arr = table.array(fid, "int32", name)
    if arr is None:
        return ()
    for i, v in enumerate(arr.tolist()):
        if (v == -1 and optional) or 0 <= v < limit:
            continue
        buf.fail(f"{table.path}.{name}[{i}] = {v}", f"past the {limit} {what}")
    return tuple(arr.tolist())


def _quantization(buf: Buffer, t: Table, shape: tuple) -> Quantization | None:
    q = t.table(S.TENSOR_QUANTIZATION, "quantization")
    if q is None:
        return None
    scales = q.array(S.QUANT_SCALE, "float32", "scale")
    if scales is None or scales.size == 0:
        return None
    zps = q.array(S.QUANT_ZERO_POINT, "int64", "zero_point")
    if zps is None or zps.size == 0:
        zps = np.zeros(scales.size, np.int64)
    if zps.size != scales.size:
        buf.fail(f"{q.path}.zero_point", f"{zps.size} zero points for {scales.size} scales")
    axis = q.scalar(S.QUANT_QUANTIZED_DIMENSION, "int32", "quantized_dimension")
    if scales.size > 1:
        if not 0 <= axis < len(shape):
            buf.fail(f"{q.path}.quantized_dimension = {axis}", f"outside the tensor's rank {len(shape)}")
        if shape[axis] != scales.size:
            buf.fail(f"{q.path}.scale", f"{scales.size} scales for dimension {axis} of size {shape[axis]}")
    return Quantization(scales.astype(np.float32), zps.astype(np.int64), int(axis))


def parse(data: bytes, name: str) -> Model:
    buf = Buffer(data, name)
    root = buf.root("model")
    root.path = ""
    if data[4:8] != S.FILE_IDENTIFIER:
        buf.fail("file identifier", f"{data[4:8]!r} is not {S.FILE_IDENTIFIER!r} (not a .tflite file)")
    codes = []
    for i, code in enumerate(root.tables(S.MODEL_OPERATOR_CODES, "operator_codes")):
        builtin = max(code.scalar(S.OPCODE_DEPRECATED_BUILTIN_CODE, "int8", "deprecated_builtin_code"),
                      code.scalar(S.OPCODE_BUILTIN_CODE, "int32", "builtin_code"))
        custom = code.string(S.OPCODE_CUSTOM_CODE, "custom_code")
        label = S.BUILTIN_OPERATORS.get(builtin, f"BUILTIN_{builtin}")
        if label == "CUSTOM":
            label = f"CUSTOM ({custom})"
        codes.append((label, code.scalar(S.OPCODE_VERSION, "int32", "version", 1)))
    buffers = root.tables(S.MODEL_BUFFERS, "buffers")
    subgraphs = root.tables(S.MODEL_SUBGRAPHS, "subgraphs")
    if len(subgraphs) == 0:
        buf.fail("subgraphs", "the model has no subgraph")
    sg = subgraphs[0]
    model = Model(name)
    tensors = sg.tables(S.SUBGRAPH_TENSORS, "tensors")
    for i, t in enumerate(tensors):
        shape_arr = t.array(S.TENSOR_SHAPE, "int32", "shape")
        shape = () if shape_arr is None else tuple(shape_arr.tolist())
        if len(shape) > MAX_RANK:
            buf.fail(f"{t.path}.shape", f"rank {len(shape)} is above {MAX_RANK}")
        if any(d < 0 for d in shape):
            buf.fail(f"{t.path}.shape = {list(shape)}", "has a negative dimension (dynamic shapes are not supported)")
        numel = int(np.prod(shape, dtype=object)) if shape else 1
        if numel > MAX_ELEMENTS:
            buf.fail(f"{t.path}.shape = {list(shape)}", f"{numel} elements are above 2^31")
        type_id = t.scalar(S.TENSOR_TYPE, "int8", "type")
        ttype = S.TENSOR_TYPES.get(type_id, f"TYPE_{type_id}")
        b = t.scalar(S.TENSOR_BUFFER, "uint32", "buffer")
        if b >= max(len(buffers), 1):
            buf.fail(f"{t.path}.buffer = {b}", f"past the {len(buffers)} buffers")
        tname = t.string(S.TENSOR_NAME, "name") or f"tensor{i}"
        const = None
        if b > 0:
            bt = buffers[b]
            raw = bt.bytes(S.BUFFER_DATA, "data")
            offset = bt.scalar(S.BUFFER_OFFSET, "uint64", "offset")
            if offset > 1:  # data outside the FlatBuffer, at this file offset
                size = bt.scalar(S.BUFFER_SIZE, "uint64", "size")
                buf.check_range(offset, size, bt.path, "buffer data")
                raw = buf.data[offset:offset + size]
            if raw:
                np_type = S.NUMPY_DTYPES.get(ttype)
                if np_type is None:
                    buf.fail(f"{t.path}", f"constant data of type {ttype} cannot be read")
                itemsize = np.dtype(np_type).itemsize
                if len(raw) != numel * itemsize:
                    buf.fail(f"{t.path}.buffer = {b}",
                             f"holds {len(raw)} bytes where shape {list(shape)} of {ttype} needs {numel * itemsize}")
                const = np.frombuffer(raw, dtype="<" + np.dtype(np_type).str[1:]).astype(np_type).reshape(shape)
        variable = bool(t.scalar(S.TENSOR_IS_VARIABLE, "bool", "is_variable", False))
        model.tensors.append(Tensor(i, tname, ttype, shape, _quantization(buf, t, shape), const, t.path, variable))
    n = len(model.tensors)
    model.inputs = _indices(buf, sg, S.SUBGRAPH_INPUTS, "inputs", n, "tensors", False)
    model.outputs = _indices(buf, sg, S.SUBGRAPH_OUTPUTS, "outputs", n, "tensors", False)
    for i, op in enumerate(sg.tables(S.SUBGRAPH_OPERATORS, "operators")):
        code = op.scalar(S.OPERATOR_OPCODE_INDEX, "uint32", "opcode_index")
        if code >= len(codes):
            buf.fail(f"{op.path}.opcode_index = {code}", f"past the {len(codes)} operator codes")
        inputs = _indices(buf, op, S.OPERATOR_INPUTS, "inputs", n, "tensors", True)
        outputs = _indices(buf, op, S.OPERATOR_OUTPUTS, "outputs", n, "tensors", False)
        options_type = op.scalar(S.OPERATOR_BUILTIN_OPTIONS_TYPE, "uint8", "builtin_options_type")
        options = op.table(S.OPERATOR_BUILTIN_OPTIONS, "builtin_options") if options_type else None
        model.operators.append(Operator(i, codes[code][0], codes[code][1], inputs, outputs, options_type,
                                        options, op.path))
    return model
