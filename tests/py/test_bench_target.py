"""bench/qemu_layer_counts.py against CMSIS-NN (make bench-target, docs/performance.md): a few small
layers of every kind on the Cortex-M55 (cortexm's MVE variant beside CMSIS-NN's MVE build) give
identical output bytes, the table parses, and a corrupted CMSIS-NN output makes the bench fail
naming the layer. Needs qemu-system-arm, arm-none-eabi-g++ and a CMSIS-NN source tree in
CMSIS_NN_DIR (git clone https://github.com/ARM-software/CMSIS-NN).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CMSIS_NN_DIR = os.environ.get("CMSIS_NN_DIR", "")

pytestmark = [
    pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                       reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)"),
    pytest.mark.skipif(not CMSIS_NN_DIR, reason="CMSIS_NN_DIR does not name a CMSIS-NN source tree"),
]

SHAPES = """\
name kind N H W C_in C_out KH KW stride_h stride_w pad_top pad_left pad_bottom pad_right
conv3x3 conv 1 8 8 8 16 3 3 1 1 1 1 1 1
conv1x1 conv 1 6 6 16 24 1 1 1 1 0 0 0 0
conv1x3 conv 1 1 16 8 8 1 3 1 1 0 1 0 1
dw3x3_s2 depthwise 1 8 8 16 16 3 3 2 2 1 1 1 1
fc linear 1 1 1 64 20 1 1 1 1 0 0 0 0
add add 1 4 4 12 12 1 1 1 1 0 0 0 0
mul mul 1 4 4 12 12 1 1 1 1 0 0 0 0
pool6x6 avgpool 1 6 6 32 32 6 6 6 6 0 0 0 0
"""
LAYERS = [line.split()[:2] for line in SHAPES.splitlines()[1:]]


def bench(tmp_path, *extra):
    shapes = tmp_path / "small.txt"
    shapes.write_text(SHAPES)
    return subprocess.run([sys.executable, str(ROOT / "bench" / "qemu_layer_counts.py"), str(shapes),
                           "--run", "cortex-m55:mve", "--cmsis-nn", CMSIS_NN_DIR, *extra],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)


def test_cortexm_and_cmsis_nn_give_identical_bytes_and_the_table_parses(tmp_path):
    proc = bench(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "# outputs: identical bytes from CMSIS-NN and cortexm on every layer"
    rows = {}
    for line in proc.stdout.splitlines():
        fields = line.split()
        if len(fields) == 8 and fields[0] in {name for name, _ in LAYERS} | {"total"}:
            rows[fields[0]] = fields
    assert sorted(rows) == sorted([name for name, _ in LAYERS] + ["total"]), proc.stdout
    for name, kind in LAYERS:
        _, got_kind, macs, cmsis, ours, ratio, cmsis_scratch, scratch = rows[name]
        assert got_kind == kind
        assert int(macs) > 0 and int(cmsis) > 0 and int(ours) > 0, rows[name]
        assert abs(float(ratio) - int(ours) / int(cmsis)) < 0.006, rows[name]
        assert int(cmsis_scratch) >= 0 and int(scratch) >= 0, rows[name]
    total = rows["total"]
    assert int(total[3]) == sum(int(rows[name][3]) for name, _ in LAYERS)
    assert int(total[4]) == sum(int(rows[name][4]) for name, _ in LAYERS)
    summary = [line.split() for line in proc.stdout.splitlines() if line.startswith("small ")]
    assert summary == [["small", "cortex-m55", "mve", str(len(LAYERS)), total[3], total[4], total[5]]], proc.stdout


def test_a_corrupted_cmsis_nn_output_fails_the_bench_naming_the_layer(tmp_path):
    proc = bench(tmp_path, "--corrupt-cmsis-output")
    assert proc.returncode != 0, proc.stdout
    for name, _ in LAYERS:
        assert (f"small {name} on cortex-m55: 1 output bytes differ, the first at byte 0; against cortexm's "
                f"reference kernel, cortexm's mve variant differs in 0 bytes, CMSIS-NN in 1") in proc.stderr, proc.stderr
