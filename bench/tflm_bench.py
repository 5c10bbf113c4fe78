#!/usr/bin/env python3
"""Side by side on QEMU: TFLite Micro + CMSIS-NN against cortexm on the same .tflite files.

    bench/tflm_bench.py --tflm-dir TFLITE_MICRO_DIR --cmsis-nn-dir CMSIS_NN_DIR \\
        --flatbuffers-dir FLATBUFFERS_DIR --gemmlowp-dir GEMMLOWP_DIR --models-dir MLPERF_TINY_DIR \\
        [--cpu cortex-m55 --cpu cortex-m4] [models...]

(each directory option defaults to the environment variable of its name; make bench-tflm passes
them). Per model and core, bench/tflm/CMakeLists.txt builds two firmwares with arm-none-eabi-gcc:
TFLM's interpreter with its CMSIS-NN kernels and a MicroMutableOpResolver of exactly the model's
ops, running the .tflite from flash; and cortexm's program imported from the same file
(cortexm.from_tflite -> lower for <cpu>+int8 -> to_program with the file's own int8 boundary ->
Program.export_c). Both run one inference on the same deterministic input (numpy seed 0, uniform
over the input's dtype), with the same startup code and linker script, and print their outputs:
the bench fails unless they are byte-identical. Columns:

- instructions: executed instructions (QEMU's TCG plugin firmware/plugin/insn_count.c; an
  instruction count, not cycles) between two marker calls around TFLM's Invoke() and cortexm's
  runtime::execute(): the inference alone, interpreter included; set-up (AllocateTensors,
  Program::load) and input/output copies are outside;
- arena: TFLM's interpreter.arena_used_bytes() after AllocateTensors (its planner's tensors plus
  its persistent allocations: node and tensor structs, kernel op data); cortexm's program arena
  (activations and scratch) plus its per-op state (each op's params decoded once by
  Program::init_op_state, Program.op_state_size bytes);
- firmware: text + data of the linked ELF (arm-none-eabi-size): code, the model (the .tflite, or
  the cortexm program), the shared input, startup code and C library.

Ratios are cortexm / TFLM. --per-op then prints each model's instructions layer by layer, paired
in order within each builtin (TFLM's from a build with its profiler, which TFLM calls only with
its error strings, as its BUILD_TYPE=release_with_logs; cortexm's from the QEMU runner's per-op
markers), with the totals per builtin.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODELS = ["kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8", "str_ww_ref_model"]
CPUS = ["cortex-m55", "cortex-m4"]

# TFLite builtin -> (MicroMutableOpResolver method, tensorflow/lite/micro/kernels/<file>.cc)
TFLM_OPS = {
    "ADD": ("AddAdd", "add"),
    "AVERAGE_POOL_2D": ("AddAveragePool2D", "pooling"),
    "CONCATENATION": ("AddConcatenation", "concatenation"),
    "CONV_2D": ("AddConv2D", "conv"),
    "DEPTHWISE_CONV_2D": ("AddDepthwiseConv2D", "depthwise_conv"),
    "DEQUANTIZE": ("AddDequantize", "dequantize"),
    "FULLY_CONNECTED": ("AddFullyConnected", "fully_connected"),
    "LOGISTIC": ("AddLogistic", "logistic"),
    "MAX_POOL_2D": ("AddMaxPool2D", "pooling"),
    "MEAN": ("AddMean", "reduce"),
    "MUL": ("AddMul", "mul"),
    "PAD": ("AddPad", "pad"),
    "QUANTIZE": ("AddQuantize", "quantize"),
    "RESHAPE": ("AddReshape", "reshape"),
    "SOFTMAX": ("AddSoftmax", "softmax"),
    "SUB": ("AddSub", "sub"),
}

# The M55's script with code, constants and data in DDR (TFLM's static arena and the larger
# models do not fit the 512 KB TCMs; the counts and sizes do not depend on the addresses).
M55_SCRIPT = """/* mps3-an547 for the TFLM bench: vector table in the ITCM, the rest in DDR. */
MEMORY
{
  VECTORS (rx) : ORIGIN = 0x10000000, LENGTH = 512K
  CODE (rx) : ORIGIN = 0x70000000, LENGTH = 64M
  DATA (rw) : ORIGIN = 0x74000000, LENGTH = 64M
  BULK (rw) : ORIGIN = 0x78000000, LENGTH = 128M
}
INCLUDE common.ld
"""


class BenchError(RuntimeError):
    pass


def check(cmd, what: str, cwd=None) -> str:
    proc = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd)
    if proc.returncode != 0:
        raise BenchError(f"{what} failed ({' '.join(map(str, cmd))}):\n{proc.stdout[-4000:]}")
    return proc.stdout


def write_if_changed(path: Path, text: str) -> None:
    """Leaves an unchanged file alone (ninja then rebuilds nothing); writes atomically otherwise."""
    if path.is_file() and path.read_text() == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def c_bytes(data: bytes) -> str:
    return "\n".join("  " + "".join(f"0x{b:02x}," for b in data[i:i + 16]) for i in range(0, len(data), 16))


def flatbuffers_version(header: Path):
    text = header.read_text()
    return tuple(int(re.search(rf"#define FLATBUFFERS_VERSION_{part} (\d+)", text).group(1))
                 for part in ("MAJOR", "MINOR", "REVISION"))


def check_dirs(args) -> None:
    """Each source directory holds what the build reads; the flatbuffers headers are the version
    TFLM's generated schema asserts."""
    need = {"--tflm-dir": (args.tflm_dir, "tensorflow/lite/micro/micro_interpreter.h"),
            "--cmsis-nn-dir": (args.cmsis_nn_dir, "Include/arm_nnfunctions.h"),
            "--flatbuffers-dir": (args.flatbuffers_dir, "include/flatbuffers/base.h"),
            "--gemmlowp-dir": (args.gemmlowp_dir, "fixedpoint/fixedpoint.h")}
    for flag, (path, marker) in need.items():
        if path is None or not (Path(path) / marker).is_file():
            raise BenchError(f"{flag} {path}: not a source tree with {marker}")
    schema = (Path(args.tflm_dir) / "tensorflow/lite/schema/schema_generated.h").read_text()
    m = re.search(r"FLATBUFFERS_VERSION_MAJOR == (\d+) &&\s*FLATBUFFERS_VERSION_MINOR == (\d+) &&\s*"
                  r"FLATBUFFERS_VERSION_REVISION == (\d+)", schema)
    have = flatbuffers_version(Path(args.flatbuffers_dir) / "include/flatbuffers/base.h")
    if m and tuple(map(int, m.groups())) != have:
        want = ".".join(m.groups())
        raise BenchError(f"--flatbuffers-dir {args.flatbuffers_dir} is flatbuffers {'.'.join(map(str, have))}; "
                         f"TFLM's schema_generated.h needs {want}: check out its tag v{want}")
    for tool in ("arm-none-eabi-g++", "arm-none-eabi-size", "qemu-system-arm", "cmake", "ninja"):
        if not shutil.which(tool):
            raise BenchError(f"{tool} is not installed (scripts/setup.sh installs the toolchain and QEMU)")


def model_ops(model: bytes, name: str) -> list:
    """The model's builtins in first-use order; every one must be in TFLM_OPS."""
    from cortexm.tflite.model import parse

    ops = list(dict.fromkeys(op.builtin for op in parse(model, name).operators))
    missing = [op for op in ops if op not in TFLM_OPS]
    if missing:
        raise BenchError(f"{name}: the bench registers no TFLM kernel for {', '.join(missing)}; add them to "
                         f"TFLM_OPS in bench/tflm_bench.py")
    return ops


def bench_input(model: bytes, name: str) -> np.ndarray:
    from cortexm.tflite.model import parse

    parsed = parse(model, name)
    if len(parsed.inputs) != 1:
        raise BenchError(f"{name}: the bench runs models with one input, it has {len(parsed.inputs)}")
    t = parsed.tensors[parsed.inputs[0]]
    dtype = {"INT8": np.int8, "INT16": np.int16}.get(t.type)
    if dtype is None:
        raise BenchError(f"{name}: input of type {t.type}; the bench takes int8 or int16 inputs")
    info = np.iinfo(dtype)
    rng = np.random.default_rng(0)
    return rng.integers(info.min, info.max + 1, size=tuple(t.shape), dtype=np.int64).astype(dtype)


def generate(gen: Path, name: str, model: bytes, cpu: str):
    """Writes gen/<name>/: model_data.c, input.c, tflm_ops.h and cortexm/ (export_c). Returns the
    input array and the cortexm program."""
    import cortexm
    from cortexm.tflite import program_io

    ops = model_ops(model, name)
    x = bench_input(model, name)
    d = gen / name
    write_if_changed(d / "model_data.c",
                     f"// {name}.tflite for TFLM, generated by bench/tflm_bench.py.\n#include <stdint.h>\n"
                     f"__attribute__((aligned(16))) const unsigned char bench_model[{len(model)}] = {{\n"
                     f"{c_bytes(model)}\n}};\n")
    write_if_changed(d / "input.c",
                     f"// The bench's input for {name} (numpy seed 0), generated by bench/tflm_bench.py.\n"
                     f"#include <stdint.h>\nconst uint32_t bench_input_bytes = {x.nbytes}u;\n"
                     f"__attribute__((aligned(16))) const int8_t bench_input[{x.nbytes}] = {{\n"
                     f"{c_bytes(x.tobytes())}\n}};\n")
    calls = " && ".join(f"(r).{TFLM_OPS[op][0]}() == kTfLiteOk" for op in ops)
    write_if_changed(d / "tflm_ops.h",
                     f"// {name}'s builtins ({', '.join(ops)}), generated by bench/tflm_bench.py.\n"
                     f"#define BENCH_TFLM_NUM_OPS {len(ops)}\n#define BENCH_TFLM_REGISTER_OPS(r) ({calls})\n")
    target = f"{cpu}+int8"
    program = cortexm.to_program(cortexm.lower(cortexm.from_tflite(model), target), io=program_io(model))
    # Exported again only when the program changed (export_c rewrites every file, ninja would
    # rebuild them): the hash of the exported program sits beside the export.
    digest = hashlib.sha256(program.data).hexdigest()
    stamp = d / "cortexm.sha256"
    if not (d / "cortexm" / "model_program.c").is_file() or not stamp.is_file() or stamp.read_text() != digest:
        program.export_c(d / "cortexm", "model")
        write_if_changed(stamp, digest)
    return x, program, ops


def configure(build: Path, gen: Path, cpu: str, args, kernels: list, per_op: bool) -> None:
    from cortexm import qemu

    machine = qemu.MACHINES[cpu]
    if machine == "mps3-an547":
        script = build / "mps3-an547-bench.ld"
        write_if_changed(script, M55_SCRIPT)
    else:
        script = ROOT / "firmware" / "ld" / f"{machine}.ld"
    cmd = ["cmake", "-S", ROOT / "bench" / "tflm", "-B", build, "-G", "Ninja",
           f"-DCMAKE_TOOLCHAIN_FILE={ROOT / 'cmake' / 'arm-none-eabi.cmake'}", f"-DCORTEXM_CPU={cpu}",
           f"-DCORTEXM_ROOT={ROOT}", f"-DTFLITE_MICRO_DIR={Path(args.tflm_dir).resolve()}",
           f"-DCMSIS_NN_DIR={Path(args.cmsis_nn_dir).resolve()}",
           f"-DFLATBUFFERS_DIR={Path(args.flatbuffers_dir).resolve()}",
           f"-DGEMMLOWP_DIR={Path(args.gemmlowp_dir).resolve()}", f"-DBENCH_GEN_DIR={gen}",
           f"-DBENCH_LINKER_SCRIPT={script}", f"-DTFLM_KERNELS={';'.join(kernels)}",
           f"-DBENCH_TFLM_PER_OP={'ON' if per_op else 'OFF'}", "-DCMAKE_BUILD_TYPE=Release"]
    if shutil.which("ccache"):
        cmd += ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
    check(cmd, f"configuring the bench for {cpu}")


def run_firmware(elf: Path, cpu: str, workdir: Path, timeout: float = 1800):
    """Runs a bench firmware under QEMU with the instruction-count plugin: (outputs as a list of
    bytes, arena bytes, marker counts)."""
    from cortexm import qemu

    counts = workdir / (elf.stem + ".counts")
    counts.unlink(missing_ok=True)
    cmd = qemu._qemu_command(qemu.MACHINES[cpu], elf, [elf.stem]) + [
        "-plugin", f"{qemu._build_plugin()},marker={qemu._marker_address(elf):#x},out={counts}"]
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise BenchError(f"{elf.name} on {cpu} did not finish within {timeout} s") from e
    log = proc.stdout
    if proc.returncode != 0 or not log.rstrip().endswith("ok"):
        raise BenchError(f"{elf.name} on {cpu} failed (exit code {proc.returncode}):\n{log[-3000:]}")
    outputs = [bytes.fromhex(h) for h in re.findall(r"^output \d+\n([0-9a-f]*)$", log, re.M)]
    arena = int(re.search(r"^arena (\d+)$", log, re.M).group(1))
    marks = [int(line) for line in counts.read_text().split("\n") if line and not line.startswith("total")]
    return outputs, arena, marks


def firmware_bytes(elf: Path) -> int:
    """text + data of arm-none-eabi-size (Berkeley format)."""
    line = check(["arm-none-eabi-size", elf], f"arm-none-eabi-size {elf}").splitlines()[1].split()
    return int(line[0]) + int(line[1])


def check_identical(name: str, cpu: str, tflm: list, ours: list) -> None:
    """Raises BenchError unless both gave the same outputs (lists of bytes), naming the first
    differing output and byte."""
    if len(tflm) != len(ours):
        raise BenchError(f"{name} on {cpu}: TFLM gave {len(tflm)} outputs, cortexm {len(ours)}")
    for i, (a, b) in enumerate(zip(tflm, ours)):
        if a != b:
            first = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
            raise BenchError(f"{name} on {cpu}: cortexm's output {i} differs from TFLM's on the same input from "
                             f"byte {first} ({len(a)} bytes from TFLM, {len(b)} from cortexm):\n"
                             f"  TFLM    {a.hex()}\n  cortexm {b.hex()}")


def symbol_bytes(elf: Path, name: str) -> int:
    out = check(["arm-none-eabi-nm", "-S", elf], f"arm-none-eabi-nm {elf}")
    m = re.search(rf"^[0-9a-f]+ ([0-9a-f]+) \w {re.escape(name)}$", out, re.M)
    if not m:
        raise BenchError(f"{elf} has no symbol {name}")
    return int(m.group(1), 16)


def measure(args, cpu: str, names: list, models: dict) -> list:
    """Builds and runs both firmwares of every model on cpu: one dict per model."""
    build = Path(args.build_dir) / cpu
    gen = build / "gen"
    generated = {name: generate(gen, name, models[name], cpu) for name in names}
    write_if_changed(gen / "models.cmake", f"set(BENCH_MODELS {' '.join(names)})\n")
    kernels = sorted({TFLM_OPS[op][1] for _, _, ops in generated.values() for op in ops})
    configure(build, gen, cpu, args, kernels, per_op=False)
    targets = [f"{side}_{name}" for name in names for side in ("tflm", "cortexm")]
    print(f"building {len(targets)} firmwares for {cpu} in {build}", file=sys.stderr, flush=True)
    check(["cmake", "--build", build, "--target", *targets, "--", f"-j{args.jobs}"], f"building the {cpu} firmwares")
    rows = []
    for name in names:
        x, program, ops = generated[name]
        row = {"model": name, "cpu": cpu, "ops": ops}
        for side in ("tflm", "cortexm"):
            elf = build / f"{side}_{name}.elf"
            outputs, arena, marks = run_firmware(elf, cpu, build)
            if len(marks) != 2:
                raise BenchError(f"{elf.name}: the plugin saw {len(marks)} marker hits, expected 2")
            row[side] = {"outputs": outputs, "arena": arena, "instructions": marks[1] - marks[0],
                         "firmware": firmware_bytes(elf),
                         "model": symbol_bytes(elf, "bench_model" if side == "tflm" else "model_program")}
        check_identical(name, cpu, row["tflm"]["outputs"], row["cortexm"]["outputs"])
        rows.append(row)
        t, c = row["tflm"], row["cortexm"]
        print(f"  {name} on {cpu}: outputs identical; TFLM / cortexm: instructions {t['instructions']:,} / "
              f"{c['instructions']:,}, arena {t['arena']:,} / {c['arena']:,}, firmware {t['firmware']:,} / "
              f"{c['firmware']:,}, of which the model {t['model']:,} (.tflite) / {c['model']:,} (program)",
              file=sys.stderr, flush=True)
    return rows


# cortexm kernel -> the TFLite builtin it stands for in the per-op comparison (Permute and View:
# the layout changes around the convolutions and TFLM's RESHAPE).
KERNEL_BUILTIN = {"QuantizedConv2d": "CONV_2D", "QuantizedDepthwiseConv2d": "DEPTHWISE_CONV_2D",
                  "QuantizedLinear": "FULLY_CONNECTED", "QuantizedAvgPool2d": "AVERAGE_POOL_2D",
                  "QuantizedMaxPool2d": "MAX_POOL_2D", "QuantizedAdd": "ADD", "QuantizedSoftmax": "SOFTMAX",
                  "Permute": "RESHAPE, layout", "View": "RESHAPE, layout"}


def per_op(args, cpu: str, names: list, models: dict) -> list:
    """Per-op instructions of both on cpu, paired layer by layer: TFLM's from the per-op build
    (its profiler around each op), cortexm's from the runner's per-op markers. One list of
    (category, TFLM op, TFLM instructions, cortexm op, cortexm instructions) per model."""
    from cortexm import qemu
    from cortexm.tflite.model import parse

    build = Path(args.build_dir) / (cpu + "-per-op")
    gen = build / "gen"
    generated = {name: generate(gen, name, models[name], cpu) for name in names}
    write_if_changed(gen / "models.cmake", f"set(BENCH_MODELS {' '.join(names)})\n")
    kernels = sorted({TFLM_OPS[op][1] for _, _, ops in generated.values() for op in ops})
    configure(build, gen, cpu, args, kernels, per_op=True)
    check(["cmake", "--build", build, "--target", *[f"tflm_{n}" for n in names], "--", f"-j{args.jobs}"],
          f"building the {cpu} per-op firmwares")
    result = {}
    for name in names:
        x, program, _ = generated[name]
        builtins = [op.builtin for op in parse(models[name], name).operators]
        outputs, _, marks = run_firmware(build / f"tflm_{name}.elf", cpu, build)
        marks = marks[-(2 * len(builtins) + 2):]  # start, (begin, end) per op, end
        tflm = [(b, f"{b.lower()} {i}", marks[2 + 2 * i] - marks[1 + 2 * i]) for i, b in enumerate(builtins)]
        run = qemu.run(program, [x], cpu, per_op=True)
        check_identical(f"{name} (per-op runs)", cpu, outputs, [o.tobytes() for o in run.outputs])
        ours = [(KERNEL_BUILTIN.get(kernel, kernel), op, n) for op, kernel, n in run.op_instructions]
        rows = []
        for category in dict.fromkeys(KERNEL_BUILTIN.get(b, b) if b != "RESHAPE" else "RESHAPE, layout"
                                      for b in builtins + [c for c, _, _ in ours]):
            theirs = [t for t in tflm if (t[0] if t[0] != "RESHAPE" else "RESHAPE, layout") == category]
            mine = [c for c in ours if c[0] == category]
            for k in range(max(len(theirs), len(mine))):
                t = theirs[k] if k < len(theirs) else (category, "", 0)
                c = mine[k] if k < len(mine) else (category, "", 0)
                rows.append((category, t[1], t[2], c[1], c[2]))
        result[name] = rows
    return result


def per_op_table(name: str, cpu: str, rows: list) -> str:
    lines = [f"{name} on {cpu} (per-op builds: counts include the markers' few instructions per op)",
             "| op | TFLM op | TFLM instructions | cortexm op | cortexm instructions | ratio |",
             "| --- | --- | ---: | --- | ---: | ---: |"]
    totals = {}
    for category, t_op, t_n, c_op, c_n in rows:
        ratio = f"{c_n / t_n:.2f}" if t_n else ""
        lines.append(f"| {category} | {t_op} | {t_n:,} | {c_op} | {c_n:,} | {ratio} |")
        a, b = totals.get(category, (0, 0))
        totals[category] = (a + t_n, b + c_n)
    for category, (t_n, c_n) in totals.items():
        ratio = f"{c_n / t_n:.2f}" if t_n else ""
        lines.append(f"| **{category}, all** | | {t_n:,} | | {c_n:,} | {ratio} |")
    return "\n".join(lines)


def table(rows: list) -> str:
    lines = ["| model | core | TFLM instructions | cortexm instructions | ratio | TFLM arena | cortexm arena | ratio | "
             "TFLM firmware | cortexm firmware | ratio |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        t, c = r["tflm"], r["cortexm"]
        lines.append(f"| {r['model']} | {r['cpu'].replace('cortex-', '').upper()} | {t['instructions']:,} | "
                     f"{c['instructions']:,} | {c['instructions'] / t['instructions']:.2f} | {t['arena']:,} | "
                     f"{c['arena']:,} | {c['arena'] / t['arena']:.2f} | {t['firmware']:,} | {c['firmware']:,} | "
                     f"{c['firmware'] / t['firmware']:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    env = os.environ.get
    p.add_argument("models", nargs="*", default=MODELS, help="model names: <models-dir>/<name>.tflite")
    p.add_argument("--tflm-dir", default=env("TFLITE_MICRO_DIR") or env("TFLM_DIR"))
    p.add_argument("--cmsis-nn-dir", default=env("CMSIS_NN_DIR"))
    p.add_argument("--flatbuffers-dir", default=env("FLATBUFFERS_DIR"))
    p.add_argument("--gemmlowp-dir", default=env("GEMMLOWP_DIR"))
    p.add_argument("--models-dir", default=env("MLPERF_TINY_DIR") or env("MODELS_DIR"))
    p.add_argument("--cpu", action="append", choices=CPUS, help="default: cortex-m55 and cortex-m4")
    p.add_argument("--build-dir", default=str(ROOT / "build" / "bench-tflm"))
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--per-op", action="store_true", help="also print the per-op instructions of both")
    args = p.parse_args(argv)
    if not args.models_dir:
        p.error("--models-dir (or MLPERF_TINY_DIR): the directory holding the .tflite files")
    models = {}
    for name in args.models:
        path = Path(args.models_dir) / (name if name.endswith(".tflite") else name + ".tflite")
        try:
            models[path.stem] = path.read_bytes()
        except OSError as e:
            p.error(f"model {name}: cannot read {path}: {e.strerror}")
    try:
        check_dirs(args)
        rows = []
        for cpu in args.cpu or CPUS:
            rows += measure(args, cpu, list(models), models)
        print(table(rows), flush=True)
        if args.per_op:
            for cpu in args.cpu or CPUS:
                for name, op_rows in per_op(args, cpu, list(models), models).items():
                    print("\n" + per_op_table(name, cpu, op_rows), flush=True)
    except BenchError as e:
        print(f"bench-tflm: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
