"""A small FlatBuffers writer for the tests' .tflite files (written front to back: each table's
vtable just before it, every child after its parent, so every uoffset points forward), and a
model builder over the TFLite schema's field ids (cortexm.tflite.schema)."""

from __future__ import annotations

import struct

import numpy as np

from cortexm.tflite import schema as S


class Table:
    """fields: {field id: value}; a value is (struct format, number) for a scalar, or a Table,
    Vector, Tables or str for a reference."""

    def __init__(self, fields: dict):
        self.fields = {k: v for k, v in fields.items() if v is not None}


class Vector:
    def __init__(self, fmt: str, values, align: int = 4):
        self.fmt, self.values, self.align = fmt, list(values), align


class Tables:
    def __init__(self, tables):
        self.tables = list(tables)


class Writer:
    def __init__(self):
        self.buf = bytearray()

    def _align(self, n: int) -> None:
        self.buf += b"\0" * (-len(self.buf) % n)

    def _patch(self, at: int, target: int) -> None:
        struct.pack_into("<I", self.buf, at, target - at)

    def write(self, obj) -> int:
        if isinstance(obj, Table):
            return self._table(obj)
        if isinstance(obj, str):
            raw = obj.encode()
            self._align(4)
            pos = len(self.buf)
            self.buf += struct.pack("<I", len(raw)) + raw + b"\0"
            return pos
        if isinstance(obj, Vector):
            size = struct.calcsize("<" + obj.fmt)
            # the elements start aligned to obj.align (and their size)
            self._align(4)
            while (len(self.buf) + 4) % max(obj.align, size):
                self.buf += b"\0"
            pos = len(self.buf)
            self.buf += struct.pack("<I", len(obj.values))
            self.buf += struct.pack(f"<{len(obj.values)}{obj.fmt}", *obj.values) if obj.values else b""
            return pos
        if isinstance(obj, Tables):
            self._align(4)
            pos = len(self.buf)
            self.buf += struct.pack("<I", len(obj.tables)) + b"\0" * (4 * len(obj.tables))
            for k, t in enumerate(obj.tables):
                self._patch(pos + 4 + 4 * k, self.write(t))
            return pos
        raise TypeError(type(obj))

    def _table(self, t: Table) -> int:
        layout, offset = {}, 4
        for fid in sorted(t.fields, key=lambda f: -self._size(t.fields[f])):
            size = self._size(t.fields[fid])
            offset += -offset % size
            layout[fid] = offset
            offset += size
        table_size = offset
        n = max(t.fields) + 1 if t.fields else 0
        self._align(2)
        vtable = len(self.buf)
        self.buf += struct.pack(f"<HH{n}H", 4 + 2 * n, table_size, *[layout.get(i, 0) for i in range(n)])
        self._align(8)
        pos = len(self.buf)
        self.buf += struct.pack("<i", pos - vtable) + b"\0" * (table_size - 4)
        children = []
        for fid, value in t.fields.items():
            if isinstance(value, tuple):
                struct.pack_into("<" + value[0], self.buf, pos + layout[fid], value[1])
            else:
                children.append((pos + layout[fid], value))
        for at, value in children:
            self._patch(at, self.write(value))
        return pos

    @staticmethod
    def _size(value) -> int:
        return struct.calcsize("<" + value[0]) if isinstance(value, tuple) else 4


def finish(root: Table, identifier: bytes = S.FILE_IDENTIFIER) -> bytes:
    w = Writer()
    w.buf += b"\0" * 4 + identifier
    w._patch(0, w.write(root))
    return bytes(w.buf)


_TYPES = {name: tid for tid, name in S.TENSOR_TYPES.items()}
_OPS = {name: oid for oid, name in S.BUILTIN_OPERATORS.items()}


class ModelBuilder:
    """Tensors and operators of one subgraph -> .tflite bytes."""

    def __init__(self):
        self.tensors, self.operators, self.buffers, self.codes = [], [], [Table({})], []

    def tensor(self, shape, ttype="INT8", scale=None, zero_point=None, data=None, axis=0, name=None,
               buffer: int = 0, variable: bool = False) -> int:
        if data is not None:
            raw = np.ascontiguousarray(data).astype(np.dtype(S.NUMPY_DTYPES[ttype]).newbyteorder("<")).tobytes()
            self.buffers.append(Table({S.BUFFER_DATA: Vector("B", raw, align=16)}))
            buffer = len(self.buffers) - 1
        quant = None
        if scale is not None:
            scales = np.atleast_1d(np.asarray(scale, np.float32))
            zps = np.atleast_1d(np.asarray(0 if zero_point is None else zero_point, np.int64))
            if zps.size == 1 and scales.size > 1:
                zps = np.repeat(zps, scales.size)
            quant = Table({S.QUANT_SCALE: Vector("f", scales.tolist()), S.QUANT_ZERO_POINT: Vector("q", zps.tolist()),
                           S.QUANT_QUANTIZED_DIMENSION: ("i", axis)})
        self.tensors.append(Table({S.TENSOR_SHAPE: Vector("i", list(shape)), S.TENSOR_TYPE: ("b", _TYPES[ttype]),
                                   S.TENSOR_BUFFER: ("I", buffer), S.TENSOR_NAME: name or f"t{len(self.tensors)}",
                                   S.TENSOR_QUANTIZATION: quant,
                                   S.TENSOR_IS_VARIABLE: ("B", 1) if variable else None}))
        return len(self.tensors) - 1

    def operator(self, builtin: str, inputs, outputs, options_type: int = 0, options: dict | None = None) -> None:
        code = _OPS[builtin]
        if code not in self.codes:
            self.codes.append(code)
        fields = {S.OPERATOR_OPCODE_INDEX: ("I", self.codes.index(code)), S.OPERATOR_INPUTS: Vector("i", inputs),
                  S.OPERATOR_OUTPUTS: Vector("i", outputs)}
        if options_type:
            fields[S.OPERATOR_BUILTIN_OPTIONS_TYPE] = ("B", options_type)
            fields[S.OPERATOR_BUILTIN_OPTIONS] = Table(options or {})
        self.operators.append(Table(fields))

    def build(self, inputs, outputs) -> bytes:
        codes = [Table({S.OPCODE_DEPRECATED_BUILTIN_CODE: ("b", min(c, 127)), S.OPCODE_VERSION: ("i", 1),
                        S.OPCODE_BUILTIN_CODE: ("i", c)}) for c in self.codes]
        subgraph = Table({S.SUBGRAPH_TENSORS: Tables(self.tensors), S.SUBGRAPH_INPUTS: Vector("i", inputs),
                          S.SUBGRAPH_OUTPUTS: Vector("i", outputs), S.SUBGRAPH_OPERATORS: Tables(self.operators),
                          S.SUBGRAPH_NAME: "main"})
        return finish(Table({S.MODEL_VERSION: ("I", 3), S.MODEL_OPERATOR_CODES: Tables(codes),
                             S.MODEL_SUBGRAPHS: Tables([subgraph]), S.MODEL_DESCRIPTION: "cortexm test",
                             S.MODEL_BUFFERS: Tables(self.buffers)}))
