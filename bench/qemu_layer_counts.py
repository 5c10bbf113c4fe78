#!/usr/bin/env python3
"""Executed-instruction counts (QEMU TCG, an instruction count, not cycles) of the conv, depthwise,
linear, add and mul kernels on layer shapes from bench/shapes/ (conv, depthwise, linear) or
bench/target/elementwise_shapes.txt (add, mul: per element instead of per MAC), for each kernel
variant on emulated Cortex-M cores.

    bench/qemu_layer_counts.py bench/shapes/ds_cnn.txt --run cortex-m55:scalar,dsp,mve --run cortex-m4:scalar,dsp

Each run builds bench/target/layer_counts.elf for the core with CORTEXM_KERNEL_ISA forcing the variant
(build/layer-counts-<cpu>-<isa>), runs it under qemu-system-arm with the instruction-count plugin of
firmware/plugin/insn_count.c and prints one row per layer: MACs, then instructions and instructions per
MAC for every run. --layers picks layers by name.
"""

from __future__ import annotations

import argparse
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MACHINES = {"cortex-m3": "mps2-an385", "cortex-m4": "mps2-an386", "cortex-m7": "mps2-an500",
            "cortex-m33": "mps2-an505", "cortex-m55": "mps3-an547"}
ISAS = {"scalar": 0, "dsp": 1, "mve": 2}
KINDS = {"conv": 0, "depthwise": 1, "linear": 2, "add": 3, "mul": 4}


def read_shapes(path: Path):
    layers, columns = [], None
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if columns is None:
            columns = fields
            continue
        row = dict(zip(columns, fields))
        layer = {k: (v if k in ("name", "kind") else int(v)) for k, v in row.items()}
        layer.setdefault("groups", 1)
        layer.setdefault("dilation_h", 1)
        layers.append(layer)
    return layers


def out_size(i, k, s, d, before, after):
    return (i + before + after - d * (k - 1) - 1) // s + 1


def macs(layer) -> int:
    """Multiply-accumulates; for add and mul, elements."""
    if layer["kind"] in ("add", "mul"):
        return layer["N"] * layer["H"] * layer["W"] * layer["C_in"]
    if layer["kind"] == "linear":
        return layer["N"] * layer["C_in"] * layer["C_out"]
    d = layer["dilation_h"]
    oh = out_size(layer["H"], layer["KH"], layer["stride_h"], d, layer["pad_top"], layer["pad_bottom"])
    ow = out_size(layer["W"], layer["KW"], layer["stride_w"], d, layer["pad_left"], layer["pad_right"])
    per_output = layer["KH"] * layer["KW"] * (1 if layer["kind"] == "depthwise" else layer["C_in"] // layer["groups"])
    return layer["N"] * oh * ow * layer["C_out"] * per_output


def record(layer) -> bytes:
    return struct.pack("<16i", KINDS[layer["kind"]], layer["N"], layer["H"], layer["W"], layer["C_in"],
                       layer["C_out"], layer["KH"], layer["KW"], layer["stride_h"], layer["stride_w"],
                       layer["pad_top"], layer["pad_left"], layer["pad_bottom"], layer["pad_right"],
                       layer["groups"], layer["dilation_h"])


def check(cmd, **kw):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed:\n{proc.stdout[-3000:]}")
    return proc.stdout


def build_firmware(cpu: str, isa: str) -> Path:
    build = ROOT / "build" / f"layer-counts-{cpu}-{isa}"
    if not (build / "build.ninja").is_file():
        cmd = ["cmake", "-S", ROOT, "-B", build, "-G", "Ninja",
               f"-DCMAKE_TOOLCHAIN_FILE={ROOT / 'cmake' / 'arm-none-eabi.cmake'}", f"-DCORTEXM_CPU={cpu}",
               "-DCORTEXM_KERNELS_ONLY=ON", "-DCORTEXM_BUILD_FIRMWARE=ON", "-DCMAKE_BUILD_TYPE=Release",
               f"-DCORTEXM_KERNEL_ISA={ISAS[isa]}"]
        if shutil.which("ccache"):
            cmd += ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
        check(cmd)
    check(["cmake", "--build", build, "--target", "layer_counts", "--", "-j2"])
    return build / "bench" / "target" / "layer_counts.elf"


def build_plugin() -> Path:
    src = ROOT / "firmware" / "plugin" / "insn_count.c"
    out = ROOT / "build" / "qemu-plugin" / "libinsn_count.so"
    if not out.is_file() or out.stat().st_mtime < src.stat().st_mtime:
        out.parent.mkdir(parents=True, exist_ok=True)
        check(["cc", "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-o", out, src])
    return out


def marker_address(elf: Path) -> int:
    for line in check(["arm-none-eabi-nm", elf]).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == "cortexm_insn_marker":
            return int(parts[0], 16) & ~1
    sys.exit(f"{elf} has no cortexm_insn_marker")


def count(cpu: str, isa: str, layers) -> list[int]:
    elf = build_firmware(cpu, isa)
    plugin = build_plugin()
    with tempfile.TemporaryDirectory(prefix="cortexm-layers-") as tmp:
        tmp = Path(tmp)
        (tmp / "layers.bin").write_bytes(b"".join(record(layer) for layer in layers))
        counts = tmp / "counts.txt"
        check(["qemu-system-arm", "-M", MACHINES[cpu], "-nographic", "-monitor", "none", "-serial", "none",
               "-semihosting-config", "enable=on,target=native,arg=layer_counts,arg=layers.bin",
               "-kernel", elf, "-plugin", f"{plugin},marker={marker_address(elf):#x},out={counts}"], cwd=tmp)
        hits = [int(x) for x in counts.read_text().split() if x.isdigit()]
    hits = hits[:2 * len(layers)]
    if len(hits) != 2 * len(layers):
        sys.exit(f"{cpu} {isa}: {len(hits)} marker hits for {len(layers)} layers")
    return [hits[2 * i + 1] - hits[2 * i] for i in range(len(layers))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shapes", type=Path)
    ap.add_argument("--run", action="append", default=[], metavar="CPU:ISA[,ISA...]",
                    help="core and kernel variants (scalar, dsp, mve); default cortex-m55:scalar,dsp,mve")
    ap.add_argument("--layers", default="", help="comma-separated layer names (default: all)")
    args = ap.parse_args()
    layers = read_shapes(args.shapes)
    if args.layers:
        wanted = args.layers.split(",")
        layers = [layer for layer in layers if layer["name"] in wanted]
    runs = []
    for spec in args.run or ["cortex-m55:scalar,dsp,mve"]:
        cpu, _, isas = spec.partition(":")
        if cpu not in MACHINES:
            sys.exit(f"unknown cpu {cpu!r}; choose from {', '.join(MACHINES)}")
        for isa in isas.split(","):
            if isa not in ISAS:
                sys.exit(f"unknown isa {isa!r}; choose from {', '.join(ISAS)}")
            runs.append((cpu, isa))
    results = {run: count(*run, layers) for run in runs}
    names = [f"{cpu.removeprefix('cortex-')} {isa}" for cpu, isa in runs]
    print(f"# {args.shapes.name}: executed instructions per kernel call under QEMU (instruction count, not cycles)")
    print(f"{'layer':<20} {'kind':<9} {'MACs|elems':>10} " + " ".join(f"{n:>23}" for n in names))
    totals = [0] * len(runs)
    total_macs = 0
    for i, layer in enumerate(layers):
        m = macs(layer)
        total_macs += m
        unit = "elem" if layer["kind"] in ("add", "mul") else "MAC"
        cells = []
        for j, run in enumerate(runs):
            n = results[run][i]
            totals[j] += n
            cells.append(f"{n:>11} ({n / m:5.2f}/{unit:<4})")
        print(f"{layer['name']:<20} {layer['kind']:<9} {m:>10} " + " ".join(cells))
    print(f"{'total':<20} {'':<9} {total_macs:>10} " + " ".join(f"{t:>11} {'':<12}" for t in totals))


if __name__ == "__main__":
    main()
