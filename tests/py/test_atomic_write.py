"""Every file cortexm writes goes through one atomic writer (_core.write_file_atomically): the old
file or the whole new one at the destination, its mode kept, nothing left behind, OSError with
errno on failure, even when the writer is killed with SIGKILL."""

import os
import signal
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

import cortexm
from cortexm import _core
from cortexm.program import write_file_atomically


def test_replacing_keeps_the_mode(tmp_path):
    path = tmp_path / "p.bin"
    path.write_bytes(b"old")
    os.chmod(path, 0o644)
    write_file_atomically(path, b"new")
    assert path.read_bytes() == b"new" and stat.S_IMODE(path.stat().st_mode) == 0o644
    os.chmod(path, 0o755)
    _core.write_file_atomically(str(path), b"newer")
    assert path.read_bytes() == b"newer" and stat.S_IMODE(path.stat().st_mode) == 0o755
    assert os.listdir(tmp_path) == ["p.bin"]


def test_new_file_gets_the_umask_default(tmp_path):
    old = os.umask(0o027)
    try:
        write_file_atomically(tmp_path / "new.bin", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.bin").stat().st_mode) == 0o640


def test_failures_are_oserrors_with_errno_and_leave_nothing(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        write_file_atomically(tmp_path / "missing_dir" / "p.bin", b"x")
    assert e.value.errno == 2 and "missing_dir" in str(e.value)
    (tmp_path / "a_dir").mkdir()
    with pytest.raises(IsADirectoryError, match="rename failed"):
        write_file_atomically(tmp_path / "a_dir", b"x")
    assert os.listdir(tmp_path) == ["a_dir"] and os.listdir(tmp_path / "a_dir") == []
    with pytest.raises(FileNotFoundError, match="cannot read"):
        cortexm.Graph.load(tmp_path / "missing.cmg")
    with pytest.raises(IsADirectoryError, match="read failed"):
        cortexm.Graph.load(tmp_path / "a_dir")
    with pytest.raises(FileNotFoundError):
        cortexm.Graph().save(tmp_path / "missing_dir" / "g.cmg")


KILL_WRITER = """
import sys
from cortexm import _core
data = bytes([int(sys.argv[2])]) * (32 << 20)
print("ready", flush=True)
while True:
    _core.write_file_atomically(sys.argv[1], data)
"""


def test_kill_9_leaves_the_old_or_the_new_file_and_no_temporary(tmp_path):
    path = tmp_path / "big.bin"
    path.write_bytes(b"\x01" * (16 << 20))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    rng = np.random.default_rng(0)
    for attempt in range(8):
        fill = 2 + attempt
        proc = subprocess.Popen([sys.executable, "-c", KILL_WRITER, str(path), str(fill)], env=env,
                                stdout=subprocess.PIPE)
        assert proc.stdout.readline() == b"ready\n"
        time.sleep(float(rng.uniform(0.0, 0.15)))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        assert os.listdir(tmp_path) == ["big.bin"], f"attempt {attempt}"
        data = path.read_bytes()
        assert len(set(data)) == 1 and len(data) in (16 << 20, 32 << 20), f"attempt {attempt}"
