"""write_file_atomically: every file cortexm writes goes through it."""

from __future__ import annotations

import os
import tempfile


def write_file_atomically(path: str | os.PathLike, data: bytes) -> None:
    """Writes data to a temporary file next to path, then renames it over path: readers see the
    old file or the whole new one, never a partial file."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
