"""Every file cortexm writes goes through one atomic writer (_core.write_file_atomically): the old
file or the whole new one at the destination, its mode kept, nothing left behind, OSError with
errno on failure, even when the writer is killed with SIGKILL. A replacement needs a named
temporary for the instant between linking and renaming it (Linux cannot rename an unnamed file
over another): a writer killed in that instant leaves it, and the next write to the path removes
it."""

import errno
import fcntl
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

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
    with pytest.raises(IsADirectoryError, match="cannot read a graph file from a directory"):
        cortexm.Graph.load(tmp_path / "a_dir")
    with pytest.raises(FileNotFoundError):
        cortexm.Graph().save(tmp_path / "missing_dir" / "g.cmg")


def run_and_kill(script, args, delay):
    """Runs script in a new interpreter until it prints "ready", lets it write for delay seconds,
    then kills it with SIGKILL."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, "-c", script, *map(str, args)], env=env, stdout=subprocess.PIPE)
    assert proc.stdout.readline() == b"ready\n"
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()


def assert_only_abandoned_temporaries(directory, name):
    """Besides name, directory holds at most the temporary of one writer killed between linking
    and renaming it (each write removes the earlier ones before it links its own)."""
    others = sorted(set(os.listdir(directory)) - {name})
    assert name in os.listdir(directory)
    assert len(others) <= 1 and all(re.fullmatch(rf"\.{re.escape(name)}\.cortexm-\d+-\d+\.tmp", f)
                                    for f in others), others


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
    rng = np.random.default_rng(0)
    for attempt in range(8):
        run_and_kill(KILL_WRITER, [path, 2 + attempt], float(rng.uniform(0.0, 0.15)))
        assert_only_abandoned_temporaries(tmp_path, "big.bin")
        data = path.read_bytes()
        assert len(set(data)) == 1 and len(data) in (16 << 20, 32 << 20), f"attempt {attempt}"
    write_file_atomically(path, b"last")
    assert os.listdir(tmp_path) == ["big.bin"]


def test_a_write_error_raises_its_errno_and_leaves_the_old_file(tmp_path):
    # RLIMIT_FSIZE makes the write fail with EFBIG part-way (SIGXFSZ ignored, as a server would).
    path = tmp_path / "p.bin"
    path.write_bytes(b"old")
    script = (
        "import resource, signal, sys\n"
        "from cortexm import _core\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
        "try:\n"
        "    _core.write_file_atomically(sys.argv[1], b'x' * 100000)\n"
        "except OSError as e:\n"
        "    print(type(e).__name__, e.errno, e.filename)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", script, str(path)], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    assert out == ["OSError", str(errno.EFBIG), str(path)]
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["p.bin"]


def test_the_next_write_removes_the_temporaries_of_killed_writers(tmp_path):
    # A writer killed between naming its temporary and renaming it leaves `.<name>.cortexm-*.tmp`;
    # a temporary still locked by its writer, and files of other names, stay.
    path = tmp_path / "p.bin"
    abandoned = tmp_path / ".p.bin.cortexm-4242-0.tmp"
    in_use = tmp_path / ".p.bin.cortexm-4243-0.tmp"
    other = tmp_path / ".q.bin.cortexm-4244-0.tmp"
    for f in (abandoned, in_use, other):
        f.write_bytes(b"partial")
    with open(in_use, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        write_file_atomically(path, b"new")
        assert sorted(os.listdir(tmp_path)) == sorted([in_use.name, other.name, "p.bin"])
    assert path.read_bytes() == b"new"


SAVE_LOOP = """
import sys
import numpy as np
import cortexm
# A program with 16 MB of int8 weights (a 4096 x 4096 linear), saved over and over.
g = cortexm.Graph()
x = g.add_input("x", [1, 4096], "int8")
w = g.add_constant("w", np.random.default_rng(int(sys.argv[2])).integers(-128, 128, (4096, 4096)).astype(np.int8))
b = g.add_constant("b", np.zeros(4096, np.int32))
g.outputs = [g.call("cortex_m.quantized_linear.default", [x, w, b],
                    {"input_offset": 0, "filter_offset": 0, "output_offset": 0,
                     "requantize_multipliers": [1 << 30], "requantize_shifts": [-10]}, name="fc")]
program = cortexm.to_program(g)
with open(sys.argv[3], "wb") as ref:
    ref.write(program.data)
print("ready", flush=True)
while True:
    program.save(sys.argv[1])
"""


def test_kill_9_during_program_save_at_random_points(tmp_path):
    out_dir, ref_dir = tmp_path / "out", tmp_path / "ref"
    out_dir.mkdir()
    ref_dir.mkdir()
    path = out_dir / "big.cmpte"
    rng = np.random.default_rng(1)
    old = Path(__file__).parents[1] / "fuzz" / "corpus" / "program" / "seed_softmax.cmpte"
    path.write_bytes(old.read_bytes())
    os.chmod(path, 0o640)
    previous = old.read_bytes()
    for attempt in range(12):
        ref = ref_dir / f"{attempt}.cmpte"
        run_and_kill(SAVE_LOOP, [path, attempt, ref], float(rng.uniform(0.0, 0.3)))
        new = ref.read_bytes()
        assert_only_abandoned_temporaries(out_dir, "big.cmpte")
        data = path.read_bytes()
        assert data in (new, previous), f"attempt {attempt}: neither the old nor the new program"
        assert stat.S_IMODE(path.stat().st_mode) == 0o640, f"attempt {attempt}"
        cortexm.load_program(path)
        previous = data
    cortexm.load_program(path).save(path)
    assert os.listdir(out_dir) == ["big.cmpte"]
