#!/usr/bin/env python3
"""Flash and RAM of the firmware Program.export_c makes for each zoo model, built for a Cortex-M
core with arm-none-eabi-gcc and run on QEMU (bit-identical with the host runtime or it fails).

    PYTHONPATH=python bench/firmware_size.py [--cpu cortex-m55] [models...]

Each model is exported, quantized (2 calibration samples) and lowered for <cpu>+int8, written as a
program with its zoo example inputs bundled, exported with export_c and built twice from the
generated CMake project (Release): kernels at the build type's -O3, and with
CORTEXM_KERNEL_OPTIMIZATION=-Os. On the M55 the ELF is linked with code, constants, data and stack
in DDR (firmware/ld/mps3-an547-large.ld with its data region moved there too: wav2letter's arena
does not fit the 512 KB DTCM; the sizes do not depend on the addresses), on other cores with the
machine's script. Columns (bytes):

- kernels: the kernels the program registers (<name>_ops.cc; the conv, depthwise and average-pool
  kernels with only the code paths its ops take);
- code: flash besides the program: .vectors, .text, .ARM.exidx, .init_array and .data's initial
  values, less the program array (the generated main, startup code, runtime, kernels, C library);
- code -Os: the same with the kernels built with -Os;
- program: the program array (weights, biases, tables and the op list) in flash;
- arena: the program's arena (activations and scratch), a static array of main.cc;
- other RAM: .data and .bss besides the arena (main's output buffer, the C library's state);
- stack: the most stack the run used, measured by painting the stack under QEMU;
- instructions: executed instructions (QEMU's TCG plugin firmware/plugin/insn_count.c, not cycles)
  from runtime::execute's entry to the end of main: the run, the output copy and the printing
  (loading and verifying the program come before).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import cortexm
from cortexm import qemu

ROOT = Path(__file__).resolve().parents[1]
ZOO = ["deep_autoencoder", "ds_cnn", "mobilenet_v1_025", "mobilenet_v2_96", "mobilenet_v3_small_96",
       "resnet8", "silero_vad", "wav2letter", "yolo_style"]
CODE_SECTIONS = (".vectors", ".text", ".ARM.exidx", ".init_array", ".data")
VARIANTS = {"default": [], "os": ["-DCORTEXM_KERNEL_OPTIMIZATION=-Os"]}


def check(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{proc.stdout[-3000:]}")
    return proc.stdout


# mps3-an547-large.ld with DATA in DDR as well (QEMU's AN547 DDR: 256 MB through 0x70000000).
M55_SCRIPT = """MEMORY
{
  VECTORS (rx) : ORIGIN = 0x10000000, LENGTH = 512K
  CODE (rx) : ORIGIN = 0x70000000, LENGTH = 64M
  DATA (rw) : ORIGIN = 0x74000000, LENGTH = 64M
  BULK (rw) : ORIGIN = 0x78000000, LENGTH = 128M
}
INCLUDE common.ld
"""


def configure(top: Path, cpu: str, variant: str) -> Path:
    out = top / f"build-{variant}"
    if not (out / "build.ninja").is_file():
        machine = qemu.MACHINES[cpu]
        cmd = ["cmake", "-S", str(top / "src"), "-B", str(out), "-G", "Ninja", f"-DCORTEXM_ROOT={ROOT}",
               f"-DCMAKE_TOOLCHAIN_FILE={ROOT / 'cmake' / 'arm-none-eabi.cmake'}", f"-DCORTEXM_CPU={cpu}",
               f"-DCORTEXM_QEMU_MACHINE={machine}", *VARIANTS[variant]]
        if machine == "mps3-an547":
            script = top / "mps3-an547-ddr.ld"
            script.write_text(M55_SCRIPT)
            cmd.append(f"-DCORTEXM_LINKER_SCRIPT={script}")
        if shutil.which("ccache"):
            cmd += ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
        check(cmd)
    return out


def sections(elf: Path) -> dict:
    out = check(["arm-none-eabi-size", "-A", str(elf)])
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\.\S+)\s+(\d+)\s+\d+$", out, re.M)}


def symbol_size(elf: Path, name: str) -> int:
    out = check(["arm-none-eabi-nm", "-S", str(elf)])
    m = re.search(rf"^[0-9a-f]+ ([0-9a-f]+) \w {re.escape(name)}$", out, re.M)
    if not m:
        raise RuntimeError(f"{elf} has no symbol {name}")
    return int(m.group(1), 16)


EXECUTE = "cortexm::runtime::execute(cortexm::runtime::Program const&,"  # demangled, any trailing parameters


def run_counted(elf: Path, cpu: str, workdir: Path):
    """Runs elf on QEMU with the instruction-count plugin marking runtime::execute's entry: (exit
    code, log, instructions from the first execute to the end)."""
    address = next(int(line.split()[0], 16) & ~1 for line in check(["arm-none-eabi-nm", "-C", str(elf)]).splitlines()
                   if line.split(" ", 2)[-1].startswith(EXECUTE))
    counts = workdir / "counts.txt"
    cmd = qemu._qemu_command(qemu.MACHINES[cpu], elf, []) + [
        "-plugin", f"{qemu._build_plugin()},marker={address:#x},out={counts}"]
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=1800)
    lines = counts.read_text().split()
    return proc.returncode, proc.stdout, int(lines[-1]) - int(lines[0])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", default=ZOO)
    p.add_argument("--cpu", default="cortex-m55", choices=sorted(qemu.MACHINES))
    p.add_argument("--dir", type=Path, default=ROOT / "build" / "firmware-size",
                   help="where the exported projects are built (default build/firmware-size)")
    args = p.parse_args(argv)
    top = args.dir / args.cpu
    (top / "src").mkdir(parents=True, exist_ok=True)
    programs = {}
    for name in args.models:
        model, example, calibration = cortexm.models.get(name)
        inputs = tuple(x.numpy() for x in example)
        graph = cortexm.quantize(cortexm.export(model, example), calibration(2), progress=False)
        target = f"{args.cpu}+int8"
        programs[name] = cortexm.to_program(cortexm.lower(graph, target), bundle_inputs=inputs)
        programs[name].export_c(top / "src" / name, name)
        print(f"exported {name}", file=sys.stderr)
    subdirs = sorted(d.name for d in (top / "src").iterdir() if (d / "CMakeLists.txt").is_file())
    (top / "src" / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.24)\nproject(cortexm_firmware_size LANGUAGES C CXX)\n"
        + "".join(f"add_subdirectory({d})\n" for d in subdirs))

    print("| model | kernels | code | code, kernels -Os | program | arena | other RAM | stack | instructions | "
          "instructions, kernels -Os |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, program in programs.items():
        cells = {}
        for variant in VARIANTS:
            out = configure(top, args.cpu, variant)
            check(["cmake", "--build", str(out), "--target", f"{name}_main", "--", f"-j{os.cpu_count() or 2}"])
            elf = out / name / f"{name}_main.elf"
            code, log, instructions = run_counted(elf, args.cpu, out)
            if code != 0 or not log.rstrip().endswith("PASS"):
                raise RuntimeError(f"{name} ({variant}) did not pass on {args.cpu}:\n{log[-2000:]}")
            s = sections(elf)
            program_bytes = symbol_size(elf, f"{name}_program")
            cells[variant] = sum(s.get(k, 0) for k in CODE_SECTIONS) - program_bytes
            cells[variant + " instructions"] = instructions
            if variant == "default":
                stack = int(re.search(r"^stack: (\d+) bytes used", log, re.M).group(1))
                ram = s.get(".data", 0) + s.get(".bss", 0)
                kernels = len({op["kernel"] for op in program.ops()})
        print(f"| {name} | {kernels} | {cells['default']} | {cells['os']} | {program_bytes} | "
              f"{program.arena_size} | {ram - program.arena_size} | {stack} | {cells['default instructions']} | "
              f"{cells['os instructions']} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
