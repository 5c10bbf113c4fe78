"""write_file_atomically: every file cortexm writes goes through it."""

from __future__ import annotations

import os

from . import _core


def write_file_atomically(path: str | os.PathLike, data: bytes, argument: str = "write_file_atomically: path") -> None:
    """Writes data to an unnamed temporary file next to path, fsyncs it and gives it the name path
    (linked in place for a new file, renamed over an old one), then fsyncs the directory: readers, a
    crash or a kill -9 see the old file or the whole new one. A replaced file keeps its mode; a new
    one gets 0666 minus the umask. A writer killed in the instant between naming its temporary
    (`.<name>.cortexm-<pid>-<n>.tmp`, locked until renamed) and renaming it leaves that file, which
    the next write to path removes. OSError with errno on failure (FileNotFoundError for a missing
    directory, ...), and nothing left behind. path is a str or os.PathLike: bytes or None raise
    TypeError, a NUL character ValueError, naming `argument`, before anything is written."""
    _core.write_file_atomically(path, bytes(data), argument)
