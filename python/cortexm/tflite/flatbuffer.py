"""A small bounds-checked FlatBuffers reader for untrusted files.

Layout (little endian): the root is a uint32 offset to a table; a table starts with an int32
soffset back to its vtable (vtable = table - soffset); a vtable is uint16 vtable size, uint16 table
size, then one uint16 offset per field (0 = absent, the field's default); a reference field holds a
uint32 offset relative to its own position; a vector or string is a uint32 count then its elements
(a string's bytes are followed by a 0). Every read here is checked against the buffer, and every
problem raises ValueError naming the file and the path of the field, e.g.
"model.tflite: subgraphs[0].tensors[3].shape: vector of 4000000000 elements past the end of the
file". The reader follows only the references the caller asks for (the schema is walked, never the
data), so a cycle cannot loop and the depth is the schema's.
"""

from __future__ import annotations

import struct

import numpy as np

_U8, _U16, _I32, _U32 = struct.Struct("<B"), struct.Struct("<H"), struct.Struct("<i"), struct.Struct("<I")

# Scalar field formats: struct format and size.
SCALARS = {"bool": "<?", "int8": "<b", "uint8": "<B", "int16": "<h", "uint16": "<H", "int32": "<i",
           "uint32": "<I", "int64": "<q", "uint64": "<Q", "float32": "<f"}
_NUMPY = {"int8": "<i1", "uint8": "<u1", "int32": "<i4", "uint32": "<u4", "int64": "<i8", "float32": "<f4",
          "int16": "<i2"}


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


class Buffer:
    """The file's bytes and its name for errors."""

    def __init__(self, data: bytes, name: str):
        self.data = data
        self.name = name
        self.size = len(data)

    def fail(self, path: str, problem: str):
        raise ValueError(f"{self.name}: {path}: {problem}")

    def check_range(self, pos: int, size: int, path: str, what: str) -> None:
        if pos < 0 or size < 0 or pos + size > self.size:
            self.fail(path, f"{what} at byte {pos} ({size} bytes) is past the end of the {self.size}-byte file")

    def read(self, st: struct.Struct, pos: int, path: str, what: str):
        self.check_range(pos, st.size, path, what)
        return st.unpack_from(self.data, pos)[0]

    def follow(self, pos: int, path: str) -> int:
        """The position a uint32 offset at pos refers to (checked to lie inside the file)."""
        target = pos + self.read(_U32, pos, path, "offset")
        if target >= self.size:
            self.fail(path, f"offset to byte {target} is past the end of the {self.size}-byte file")
        return target

    def root(self, what: str) -> "Table":
        if self.size < 8:
            self.fail("root", f"a {self.size}-byte file is too short for a FlatBuffer (at least 8 bytes)")
        return Table(self, self.follow(0, what), what)


class Table:
    """A table at pos; path names it in errors (e.g. "subgraphs[0].tensors[3]")."""

    __slots__ = ("buf", "pos", "path", "_vtable", "_fields", "_size")

    def __init__(self, buf: Buffer, pos: int, path: str):
        self.buf, self.pos, self.path = buf, pos, path
        vtable = pos - buf.read(_I32, pos, path, "table")
        if vtable < 0 or vtable + 4 > buf.size:
            buf.fail(path, f"vtable at byte {vtable} is outside the {buf.size}-byte file")
        vsize = buf.read(_U16, vtable, path, "vtable size")
        self._size = buf.read(_U16, vtable + 2, path, "table size")
        if vsize < 4 or vsize % 2:
            buf.fail(path, f"vtable size {vsize} is not an even number >= 4")
        buf.check_range(vtable, vsize, path, "vtable")
        buf.check_range(pos, max(self._size, 4), path, "table")
        self._vtable = vtable
        self._fields = (vsize - 4) // 2

    def _field(self, fid: int, size: int, name: str) -> int | None:
        """The absolute position of field fid (size bytes inline), or None when absent."""
        if fid >= self._fields:
            return None
        off = self.buf.read(_U16, self._vtable + 4 + 2 * fid, self.path, "vtable entry")
        if off == 0:
            return None
        if off < 4 or off + size > self._size:
            self.buf.fail(_join(self.path, name), f"field offset {off} is outside the table's {self._size} bytes")
        return self.pos + off

    def scalar(self, fid: int, kind: str, name: str, default=0):
        pos = self._field(fid, struct.calcsize(SCALARS[kind]), name)
        if pos is None:
            return default
        return self.buf.read(struct.Struct(SCALARS[kind]), pos, _join(self.path, name), kind)

    def table(self, fid: int, name: str) -> "Table | None":
        pos = self._field(fid, 4, name)
        if pos is None:
            return None
        path = _join(self.path, name)
        return Table(self.buf, self.buf.follow(pos, path), path)

    def _vector(self, fid: int, name: str, elem_size: int) -> tuple[int, int, str] | None:
        pos = self._field(fid, 4, name)
        if pos is None:
            return None
        path = _join(self.path, name)
        start = self.buf.follow(pos, path)
        count = self.buf.read(_U32, start, path, "vector length")
        if count * elem_size > self.buf.size - start - 4:
            self.buf.fail(path, f"vector of {count} elements of {elem_size} bytes runs past the end of the "
                                f"{self.buf.size}-byte file")
        return start + 4, count, path

    def array(self, fid: int, kind: str, name: str) -> np.ndarray | None:
        """A vector of scalars as a numpy array (a copy), or None when absent."""
        size = np.dtype(_NUMPY[kind]).itemsize
        v = self._vector(fid, name, size)
        if v is None:
            return None
        start, count, _ = v
        return np.frombuffer(self.buf.data, dtype=_NUMPY[kind], count=count, offset=start).astype(kind)

    def bytes(self, fid: int, name: str) -> bytes | None:
        v = self._vector(fid, name, 1)
        if v is None:
            return None
        start, count, _ = v
        return self.buf.data[start:start + count]

    def string(self, fid: int, name: str) -> str | None:
        raw = self.bytes(fid, name)
        if raw is None:
            return None
        return raw.decode("utf-8", errors="replace")

    def tables(self, fid: int, name: str) -> "TableVector":
        v = self._vector(fid, name, 4)
        if v is None:
            return TableVector(self.buf, 0, 0, _join(self.path, name))
        return TableVector(self.buf, *v)


class TableVector:
    """A vector of table references, each read when asked for."""

    __slots__ = ("buf", "start", "count", "path")

    def __init__(self, buf: Buffer, start: int, count: int, path: str):
        self.buf, self.start, self.count, self.path = buf, start, count, path

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i: int) -> Table:
        if not 0 <= i < self.count:
            raise IndexError(i)
        pos = self.start + 4 * i
        path = f"{self.path}[{i}]"
        return Table(self.buf, self.buf.follow(pos, path), path)

    def __iter__(self):
        for i in range(self.count):
            yield self[i]
