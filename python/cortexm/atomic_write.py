"""write_file_atomically: every file cortexm writes goes through it."""

from __future__ import annotations

import os

from . import _core


def write_file_atomically(path: str | os.PathLike, data: bytes) -> None:
    """Writes data to an unnamed temporary file next to path (with the mode of the file it
    replaces), fsyncs it and renames it over path: readers, a crash or a kill -9 see the old file
    or the whole new one, and no temporary file is left behind. OSError (with errno) on failure."""
    _core.write_file_atomically(os.fspath(path), bytes(data))
