"""Progress bars on long work: shown on a terminal (a pseudo-terminal here), nowhere else."""
import fcntl
import os
import pty
import select
import struct
import termios
import subprocess
import sys
from pathlib import Path

import pytest

from cortexm.qemu import ninja_steps

ROOT = Path(__file__).resolve().parents[2]

# Calibration, precision="auto", GPTQ and the patch search, on small models.
CHILD = r"""
import sys, warnings
sys.path.insert(0, {tests!r})
import numpy as np, torch
import cortexm
from cortexm.quantizer import CalibrationWarning
warnings.simplefilter("ignore", CalibrationWarning)  # auto calibrates on 16 samples here, for speed
from cortexm import _core
from test_patches import awkward_graph

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(144, 3)).eval()
graph = cortexm.export(model, (torch.randn(1, 1, 8, 8),))
samples = [(torch.randn(1, 1, 8, 8),) for _ in range(120)]
cortexm.quantize(graph, samples, cortexm.CortexMQuantizer(weight_rounding="gptq"))
cortexm.quantize(graph, samples[:16], precision="auto")
g, _ = awkward_graph(channels=40, project=3)
_core.run_pass("AnnotateScratch", g, _core.CortexMTargetConfig.from_string("cortex-m55+int8"))
cortexm.to_program(g, arena_limit=cortexm.to_program(g).arena_size - 16)
print("done", file=sys.stderr)
"""
BARS = ("calibrating", "GPTQ rounding", "precision auto", "patch plans")


def _child_env():
    env = dict(os.environ, COLUMNS="120")  # cortexm as this test imports it (installed, or the PYTHONPATH's)
    env.pop("TERM", None)
    return env


def _code() -> str:
    return CHILD.format(tests=str(ROOT / "tests" / "py"))


def test_bars_show_on_a_terminal():
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # a 120-column terminal
    proc = subprocess.Popen([sys.executable, "-c", _code()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=terminal, env=_child_env())
    os.close(terminal)
    seen = b""
    while True:
        ready, _, _ = select.select([controller], [], [], 300)
        if not ready:
            proc.kill()
            pytest.fail(f"no output for 300 s; so far: {seen[-2000:]!r}")
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(controller)
    assert proc.wait(timeout=60) == 0, seen[-4000:]
    text = seen.decode(errors="replace")
    for what in BARS:
        assert what in text, f"no '{what}' bar on the terminal: {text[-3000:]!r}"
    assert "/120" in text  # calibration counts against its total
    assert "done" in text


def test_no_bars_off_a_terminal():
    proc = subprocess.run([sys.executable, "-c", _code()], stdin=subprocess.DEVNULL, capture_output=True,
                          env=_child_env(), timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stderr.strip() == b"done"


def test_progress_false_is_quiet_on_a_terminal_too():
    import cortexm.progress as progress

    class Terminal:
        def isatty(self):
            return True

        def write(self, text):
            raise AssertionError(f"wrote {text!r}")

        def flush(self):
            pass

    saved, sys.stderr = sys.stderr, Terminal()
    try:
        assert progress.on_terminal()
        shown = progress.bar(range(3), desc="x", enabled=False)
        assert list(shown) == [0, 1, 2]
        shown.update()
        shown.close()
    finally:
        sys.stderr = saved


def test_ninja_steps_are_read_from_its_status_lines():
    lines = ["[1/80] Building CXX object a.o\n", "warning: x\n", "[80/80] Linking CXX executable r.elf\n",
             "ninja: no work to do.\n"]
    assert list(ninja_steps(lines)) == [(1, 80), (80, 80)]
