#!/usr/bin/env python3
"""Executed-instruction counts (QEMU TCG, an instruction count, not cycles) of cortexm's conv,
depthwise, linear, add, mul and average-pool kernels on layer shapes from bench/shapes/*.txt (whole
models) or bench/target/elementwise_shapes.txt, for each kernel variant on emulated Cortex-M cores,
optionally side by side with CMSIS-NN's functions on the same data.

    bench/qemu_layer_counts.py bench/shapes/ds_cnn.txt --run cortex-m55:scalar,dsp,mve --run cortex-m4:scalar,dsp
    CMSIS_NN_DIR=~/CMSIS-NN bench/qemu_layer_counts.py bench/shapes/*.txt --run cortex-m55:mve --run cortex-m4:dsp

Each run builds bench/target/layer_counts.elf for the core with CORTEXM_KERNEL_ISA forcing the variant
(build/layer-counts-<cpu>-<isa>), runs it under qemu-system-arm with the instruction-count plugin of
firmware/plugin/insn_count.c and prints one row per layer: MACs (add, mul, avgpool: elements read),
then instructions and instructions per MAC for every run, and the kernel's scratch bytes.

With --cmsis-nn DIR (default: the environment's CMSIS_NN_DIR) the firmware also holds CMSIS-NN's
public functions from that source tree, built at CMSIS-NN's default -Ofast for the same core (the
M55's build uses MVE, the M4's DSP), runs both on each layer's data and compares their output bytes
on the target; the tables then show, per run, both instruction counts, cortexm / CMSIS-NN and both
scratch sizes, and the script fails naming every layer whose outputs differ.
"""

from __future__ import annotations

import argparse
import os
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
KINDS = {"conv": 0, "depthwise": 1, "linear": 2, "add": 3, "mul": 4, "avgpool": 5}
# The variant CMSIS-NN compiles to on each core (its ARM_MATH_MVEI / ARM_MATH_DSP from the -mcpu).
CMSIS_ISA = {"cortex-m3": "scalar", "cortex-m4": "dsp", "cortex-m7": "dsp", "cortex-m33": "dsp", "cortex-m55": "mve"}
ELEMENTWISE = ("add", "mul", "avgpool")


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
    """Multiply-accumulates; for add, mul and avgpool, input elements."""
    if layer["kind"] in ELEMENTWISE:
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


def build_firmware(cpu: str, isa: str, cmsis_nn: Path | None) -> Path:
    build = ROOT / "build" / f"layer-counts-{cpu}-{isa}"
    cmd = ["cmake", "-S", ROOT, "-B", build, f"-DCORTEXM_CMSIS_NN_DIR={cmsis_nn or ''}"]
    if not (build / "build.ninja").is_file():
        cmd += ["-G", "Ninja", f"-DCMAKE_TOOLCHAIN_FILE={ROOT / 'cmake' / 'arm-none-eabi.cmake'}", f"-DCORTEXM_CPU={cpu}",
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


def run_firmware(elf: Path, cpu: str, layers, corrupt: bool = False) -> list[dict[str, int]]:
    """Runs the layers once; returns each layer's report line as a dict with "counts": the
    instructions of each of its marker pairs (cortexm's call last, CMSIS-NN's measured one before)."""
    plugin = build_plugin()
    with tempfile.TemporaryDirectory(prefix="cortexm-layers-") as tmp:
        tmp = Path(tmp)
        (tmp / "layers.bin").write_bytes(b"".join(record(layer) for layer in layers))
        counts = tmp / "counts.txt"
        cmd = ["qemu-system-arm", "-M", MACHINES[cpu], "-nographic", "-monitor", "none", "-serial", "none",
               "-semihosting-config", "enable=on,target=native,arg=layer_counts,arg=layers.bin" + (",arg=corrupt" if corrupt else ""),
               "-kernel", elf, "-plugin", f"{plugin},marker={marker_address(elf):#x},out={counts}"]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp)
        # Exit code 2: every layer ran, some outputs differ (the caller names them).
        if proc.returncode not in (0, 2):
            sys.exit(f"{' '.join(map(str, cmd))} failed:\n{proc.stdout[-3000:]}")
        hits = [int(x) for x in counts.read_text().split() if x.isdigit()]
    reports = []
    for line in proc.stdout.splitlines():
        fields = line.split()
        if fields[:1] == ["layer"] and len(fields) % 2 == 0:
            reports.append({fields[i]: int(fields[i + 1]) for i in range(0, len(fields), 2)})
    pairs = sum(report["calls"] for report in reports)
    if len(reports) != len(layers) or len(hits) < 2 * pairs:
        sys.exit(f"{elf}: {len(hits)} marker hits and {len(reports)} reports for {len(layers)} layers:\n"
                 f"{proc.stdout[-3000:]}")
    at = 0
    for report in reports:
        report["counts"] = [hits[2 * i + 1] - hits[2 * i] for i in range(at, at + report["calls"])]
        at += report["calls"]
    return reports


def count(cpu: str, isa: str, layers, cmsis_nn: Path | None = None, corrupt: bool = False) -> list[dict[str, int]]:
    """Per layer: cortexm's instructions and scratch bytes; with CMSIS-NN also its instructions,
    scratch bytes, whether it fell back to arm_convolve_s8, and the output bytes that differ
    (mismatches, first)."""
    rows = []
    for report in run_firmware(build_firmware(cpu, isa, cmsis_nn), cpu, layers, corrupt):
        row = {"cortexm": report["counts"][-1], "scratch": report["scratch"]}
        if cmsis_nn:
            row.update(cmsis=report["counts"][-2], cmsis_scratch=report["cmsis_scratch"],
                       fallback=report["cmsis_fallback"], mismatches=report["mismatches"], first=report["first"],
                       cortexm_vs_reference=report["cortexm_vs_reference"],
                       cmsis_vs_reference=report["cmsis_vs_reference"])
        rows.append(row)
    return rows


def print_variants(title: str, layers, runs, results) -> None:
    """cortexm alone: one column pair per run."""
    names = [f"{cpu.removeprefix('cortex-')} {isa}" for cpu, isa in runs]
    print(f"# {title}: executed instructions per kernel call under QEMU (instruction count, not cycles); scratch bytes")
    print(f"{'layer':<22} {'kind':<9} {'MACs|elems':>10} " + " ".join(f"{n:>23} {'scratch':>8}" for n in names))
    totals = [0] * len(runs)
    total_macs = 0
    for i, layer in enumerate(layers):
        m = macs(layer)
        total_macs += m
        unit = "elem" if layer["kind"] in ELEMENTWISE else "MAC"
        cells = []
        for j, run in enumerate(runs):
            row = results[run][i]
            totals[j] += row["cortexm"]
            cells.append(f"{row['cortexm']:>11} ({row['cortexm'] / m:5.2f}/{unit:<4}) {row['scratch']:>8}")
        print(f"{layer['name']:<22} {layer['kind']:<9} {m:>10} " + " ".join(cells))
    print(f"{'total':<22} {'-':<9} {total_macs:>10} " + " ".join(f"{t:>11} {'':<12} {'':>8}" for t in totals))


def print_comparison(title: str, cpu: str, isa: str, layers, rows) -> tuple[int, int]:
    """CMSIS-NN beside cortexm on one core; returns both totals."""
    print(f"# {title} on {cpu}: CMSIS-NN ({CMSIS_ISA[cpu]} build) vs cortexm ({isa} variant), executed instructions "
          f"per kernel call under QEMU (instruction count, not cycles); ratio = cortexm / CMSIS-NN; scratch in bytes")
    print(f"{'layer':<22} {'kind':<9} {'MACs|elems':>10} {'CMSIS-NN':>11} {'cortexm':>11} {'ratio':>6} "
          f"{'CMSIS-NN_scratch':>16} {'cortexm_scratch':>15}")
    total_cmsis = total_cortexm = total_macs = 0
    fallbacks = []
    for layer, row in zip(layers, rows):
        m = macs(layer)
        total_macs += m
        total_cmsis += row["cmsis"]
        total_cortexm += row["cortexm"]
        flag = "  OUTPUTS DIFFER" if row["mismatches"] else ""
        if row["fallback"]:
            fallbacks.append(layer["name"])
            flag += "  (CMSIS-NN: arm_convolve_s8)"
        print(f"{layer['name']:<22} {layer['kind']:<9} {m:>10} {row['cmsis']:>11} {row['cortexm']:>11} "
              f"{row['cortexm'] / row['cmsis']:>6.2f} {row['cmsis_scratch']:>16} {row['scratch']:>15}{flag}")
    print(f"{'total':<22} {'-':<9} {total_macs:>10} {total_cmsis:>11} {total_cortexm:>11} "
          f"{total_cortexm / total_cmsis:>6.2f} {'-':>16} {'-':>15}")
    if fallbacks:
        print(f"# arm_convolve_wrapper_s8 returned an error on {', '.join(fallbacks)} (its {CMSIS_ISA[cpu]} pick "
              "refuses that padding); CMSIS-NN's column is arm_convolve_s8 there")
    return total_cmsis, total_cortexm


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shapes", type=Path, nargs="+", help="layer shape files, one model each")
    ap.add_argument("--run", action="append", default=[], metavar="CPU:ISA[,ISA...]",
                    help="core and kernel variants (scalar, dsp, mve); default cortex-m55:scalar,dsp,mve")
    ap.add_argument("--layers", default="", help="comma-separated layer names (default: all)")
    ap.add_argument("--cmsis-nn", type=Path, default=os.environ.get("CMSIS_NN_DIR") or None, metavar="DIR",
                    help="CMSIS-NN source tree to compare with (default: $CMSIS_NN_DIR; none: cortexm alone)")
    ap.add_argument("--corrupt-cmsis-output", action="store_true",
                    help="flip a bit of CMSIS-NN's first output byte per layer after it ran (tests: the check must fail)")
    args = ap.parse_args()
    cmsis_nn = args.cmsis_nn.expanduser().resolve() if args.cmsis_nn else None
    if cmsis_nn and not (cmsis_nn / "Include" / "arm_nnfunctions.h").is_file():
        sys.exit(f"{cmsis_nn} is not a CMSIS-NN source tree (no Include/arm_nnfunctions.h); "
                 "git clone https://github.com/ARM-software/CMSIS-NN")
    if args.corrupt_cmsis_output and not cmsis_nn:
        sys.exit("--corrupt-cmsis-output needs --cmsis-nn (or CMSIS_NN_DIR)")
    models = []
    for path in args.shapes:
        layers = read_shapes(path)
        if args.layers:
            wanted = args.layers.split(",")
            layers = [layer for layer in layers if layer["name"] in wanted]
        if layers:
            models.append((path.stem, layers))
    if not models:
        sys.exit("no layers to run")
    runs = []
    for spec in args.run or ["cortex-m55:scalar,dsp,mve"]:
        cpu, _, isas = spec.partition(":")
        if cpu not in MACHINES:
            sys.exit(f"unknown cpu {cpu!r}; choose from {', '.join(MACHINES)}")
        for isa in isas.split(","):
            if isa not in ISAS:
                sys.exit(f"unknown isa {isa!r}; choose from {', '.join(ISAS)}")
            runs.append((cpu, isa))
    if not cmsis_nn:
        for model, layers in models:
            print_variants(model, layers, runs, {run: count(*run, layers) for run in runs})
        return
    commit = subprocess.run(["git", "-C", cmsis_nn, "rev-parse", "--short=8", "HEAD"], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.strip()
    print(f"# CMSIS-NN: {cmsis_nn}" + (f" at commit {commit}" if commit else ""))
    summary, differ = [], []
    for cpu, isa in runs:
        for model, layers in models:
            rows = count(cpu, isa, layers, cmsis_nn, args.corrupt_cmsis_output)
            summary.append((model, cpu, isa, len(layers), *print_comparison(model, cpu, isa, layers, rows)))
            print()
            differ += [f"{model} {layer['name']} on {cpu}: {row['mismatches']} output bytes differ, the first at byte "
                       f"{row['first']}; against cortexm's reference kernel, cortexm's {isa} variant differs in "
                       f"{row['cortexm_vs_reference']} bytes, CMSIS-NN in {row['cmsis_vs_reference']}"
                       for layer, row in zip(layers, rows) if row["mismatches"]]
    print("# per-model totals: executed instructions (instruction count, not cycles); ratio = cortexm / CMSIS-NN")
    print(f"{'model':<18} {'core':<11} {'variant':<8} {'layers':>6} {'CMSIS-NN':>12} {'cortexm':>12} {'ratio':>6}")
    for model, cpu, isa, n, cmsis, ours in summary:
        print(f"{model:<18} {cpu:<11} {isa:<8} {n:>6} {cmsis:>12} {ours:>12} {ours / cmsis:>6.2f}")
    if differ:
        sys.exit("cortexm and CMSIS-NN outputs differ on the same data:\n" + "\n".join(differ))
    print("# outputs: identical bytes from CMSIS-NN and cortexm on every layer")


if __name__ == "__main__":
    main()
