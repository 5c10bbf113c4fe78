"""write_file_atomically: every file cortexm writes goes through it; write_directory_atomically: a
set of files that must change together (Program.export_c's sources)."""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import secrets
import shutil
import stat
import time

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


def _fsync_directory(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: str, b: str) -> bool:
    """Swaps the names of the directories a and b in one step (Linux's renameat2 RENAME_EXCHANGE).
    False where the system or the file system cannot."""
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), a, None, b)


def _swap(directory: str, staging: str) -> None:
    """Gives staging the name directory and the old directory the name staging."""
    if _exchange(directory, staging):
        return
    # Two renames: in between, directory is missing (never a mix of old and new files).
    parked = staging + ".old"
    os.rename(directory, parked)
    try:
        os.rename(staging, directory)
    except BaseException:
        os.rename(parked, directory)
        raise
    os.rename(parked, staging)


# A staging directory younger than this is never taken for abandoned (its writer may not hold its
# lock yet).
_ABANDONED_AFTER_S = 60.0


def _remove_abandoned(parent: str, base: str, owned) -> None:
    """Removes the staging directories of path's writers that were killed before they finished (no
    live writer holds their lock) when every entry is one owned(name) says a writer writes: never
    what else a directory holds (a kill while the other entries moved leaves those to the user)."""
    prefix = f".{base}.cortexm-"
    for entry in os.listdir(parent):
        stale = os.path.join(parent, entry)
        if not (entry.startswith(prefix) and entry.endswith(".tmp")) or not os.path.isdir(stale) \
                or os.path.islink(stale):
            continue
        try:
            fd = os.open(stale, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if time.time() - os.fstat(fd).st_mtime > _ABANDONED_AFTER_S and all(
                    owned(name) or (name.startswith(".") and name.endswith(".tmp")) for name in os.listdir(stale)):
                shutil.rmtree(stale, ignore_errors=True)
        except OSError:  # a live writer's (locked), or gone meanwhile
            pass
        finally:
            os.close(fd)


def write_directory_atomically(path: str | os.PathLike, files: dict, owned=None) -> None:
    """Makes the directory path hold files ({file name: bytes}) as one set: they are written into a
    new directory next to it (`.<name>.cortexm-<pid>-<hex>.tmp`, locked while its writer lives),
    which then takes the name path in one step, so readers, a crash or a kill -9 see all the old
    files or all the new ones, never a mix. The other entries of an existing directory (a build
    directory, ...) are moved into the new one afterwards. An existing directory's mode is kept; a
    new one gets 0777 minus the umask, and missing parents are created. The next write removes what
    a killed writer left when it holds only files a writer writes (owned(name), default: the names
    in files), else leaves it (the entries of the user's it was moving). ValueError when path is the
    current directory or holds it (it would be left deleted under the process), OSError on failure,
    with path as it was."""
    path = os.path.realpath(os.fspath(path))
    cwd = os.path.realpath(os.getcwd())
    if cwd == path or cwd.startswith(path.rstrip(os.sep) + os.sep):
        raise ValueError(f"directory {path!r} is or holds the current directory, which replacing it would "
                         f"delete under this process: give a directory of its own")
    parent, base = os.path.split(path)
    os.makedirs(parent, exist_ok=True)
    _remove_abandoned(parent, base, owned or files.__contains__)
    staging = os.path.join(parent, f".{base}.cortexm-{os.getpid()}-{secrets.token_hex(4)}.tmp")
    os.mkdir(staging)
    lock = _locked(staging)
    try:
        try:
            for name, data in files.items():
                write_file_atomically(os.path.join(staging, name), data)
            try:
                old = _locked(path)  # also waits for another writer of path to finish
            except FileNotFoundError:
                old = None
            if old is None:
                os.rename(staging, path)
            else:
                try:
                    os.chmod(staging, stat.S_IMODE(os.fstat(old).st_mode))
                    _swap(path, staging)
                except BaseException:
                    os.close(old)
                    raise
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if old is not None:  # staging now holds the old directory, still locked
            try:
                for entry in sorted(os.listdir(staging)):
                    if entry not in files:
                        os.rename(os.path.join(staging, entry), os.path.join(path, entry))
                shutil.rmtree(staging)
            finally:
                os.close(old)
    finally:
        os.close(lock)
    _fsync_directory(path)
    _fsync_directory(parent)


def _locked(directory: str) -> int:
    """An open descriptor of directory holding its exclusive flock (released when closed)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd
