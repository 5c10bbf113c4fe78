"""Runs programs on an emulated Cortex-M: QEMU's MPS2/MPS3 machines with the runner firmware.

``cortexm.run_on_qemu(program, inputs, cpu="cortex-m55")`` builds the runner for that core once
(arm-none-eabi, cached in build/qemu-<cpu> of a checkout or ~/.cache/cortexm for an installed package,
rebuilt when sources change), runs it
under qemu-system-arm with semihosting and returns the outputs as numpy arrays, like Program.run.
``run(...)`` also returns instruction counts from a TCG plugin: executed instructions, not cycles;
``run_cases(program, cases)`` runs many inputs in one boot (a held-out set, say).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import sys
import re
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .progress import bar, on_terminal
from .program import Program, load_program

__all__ = ["ISAS", "MACHINES", "QemuRun", "build_firmware", "build_runner", "bulk_bytes", "run", "run_cases",
           "run_elf", "run_kernel_tests", "run_on_qemu"]

#: the QEMU machine that has each core (firmware/ld/<machine>.ld holds its memory map)
MACHINES = {
    "cortex-m3": "mps2-an385",
    "cortex-m4": "mps2-an386",
    "cortex-m7": "mps2-an500",
    "cortex-m33": "mps2-an505",
    "cortex-m55": "mps3-an547",
}

_ALIGN = 16
# runner exit codes (firmware/runner/main.cc)
_EXIT_OK, _EXIT_HOST_FILE, _EXIT_TOO_BIG, _EXIT_FAULT, _EXIT_INVALID = 0, 1, 2, 3, 4


@dataclass
class QemuRun:
    """One run on QEMU: outputs, and with count_instructions the executed instructions (an
    instruction count from QEMU's TCG, not cycles) of the whole model and of each op."""

    outputs: list
    cpu: str
    machine: str
    instructions: int | None = None  # from just before the first op to just after the last one
    op_instructions: list = field(default_factory=list)  # [(op name, kernel, instructions)]
    isa: str | None = None  # the forced kernel variant, None: the core's best
    log: str = ""


_PACKAGED_SOURCE = Path(__file__).resolve().parent / "firmware_source"


def source_dir() -> Path:
    """The sources the runner firmware builds from (firmware/ and CMakeLists.txt): $CORTEXM_SOURCE_DIR,
    else the checkout this package sits in, else a checkout at or above the current directory, else
    the copy an installed package ships (cortexm/firmware_source: the runner only, no target tests)."""
    candidates = []
    if os.environ.get("CORTEXM_SOURCE_DIR"):
        candidates.append(Path(os.environ["CORTEXM_SOURCE_DIR"]))
    candidates.append(Path(__file__).resolve().parents[2])
    cwd = Path.cwd().resolve()
    candidates += [cwd, *cwd.parents, _PACKAGED_SOURCE]
    for c in candidates:
        if (c / "firmware" / "CMakeLists.txt").is_file() and (c / "CMakeLists.txt").is_file():
            return c
    raise RuntimeError("run_on_qemu builds the runner firmware from the cortexm sources, and this installation "
                       "has none: reinstall cortexm (pip install ships them in cortexm/firmware_source) or set "
                       "CORTEXM_SOURCE_DIR to a checkout")


def build_dir(root: Path | None = None) -> Path:
    """Where the firmware of `root` (default: source_dir()) is built: build/ of a checkout; for an
    installed package's sources, $CORTEXM_CACHE_DIR (default ~/.cache/cortexm) / build-<path hash>."""
    root = root or source_dir()
    if root.resolve() != _PACKAGED_SOURCE and os.access(root, os.W_OK):
        return root / "build"
    cache = Path(os.environ.get("CORTEXM_CACHE_DIR") or
                 Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cortexm")
    return cache / f"build-{hashlib.sha1(str(root.resolve()).encode()).hexdigest()[:12]}"


def _check_cpu(cpu: str) -> str:
    if cpu not in MACHINES:
        raise ValueError(f"cpu {cpu!r} has no QEMU machine; choose one of {', '.join(MACHINES)}")
    return MACHINES[cpu]


def bulk_bytes(cpu: str) -> int:
    """Bytes of the machine's RAM that hold the program file, its arena, inputs and outputs (the
    BULK region of firmware/ld/<machine>.ld)."""
    machine = _check_cpu(cpu)
    text = (source_dir() / "firmware" / "ld" / f"{machine}.ld").read_text()
    m = re.search(r"^\s*BULK\s*\([^)]*\)\s*:\s*ORIGIN\s*=\s*\w+\s*,\s*LENGTH\s*=\s*(\d+)([KM]?)", text, re.M)
    if not m:
        raise RuntimeError(f"firmware/ld/{machine}.ld has no BULK region")
    return int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20}[m.group(2)]


@contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# The Debian / Ubuntu packages that provide each tool the QEMU runs need.
_APT_PACKAGES = {
    "qemu-system-arm": "qemu-system-arm",
    "cmake": "cmake",
    "ninja": "ninja-build",
    "flatc": "flatbuffers-compiler libflatbuffers-dev",
    "arm-none-eabi-g++": "gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib",
    "arm-none-eabi-nm": "binutils-arm-none-eabi",
    "cc": "gcc",
}


def _tool(name: str) -> str:
    path = shutil.which(name)
    if not path:
        package = _APT_PACKAGES.get(name, name)
        raise RuntimeError(f"{name} is not installed: install it with `apt-get install {package}` "
                           f"(in a checkout, scripts/setup.sh installs everything)")
    return path


#: kernel variants (CORTEXM_KERNEL_ISA, cortexm/kernels/kernel_isa.h) and the cores that have them
ISAS = {"scalar": 0, "dsp": 1, "mve": 2}
_CORES_WITH = {"dsp": {"cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55"}, "mve": {"cortex-m55"}}


def _check_isa(cpu: str, isa: str | None) -> None:
    if isa is None:
        return
    if isa not in ISAS:
        raise ValueError(f"isa {isa!r}: choose one of {', '.join(ISAS)} (or None: the core's best)")
    if isa in _CORES_WITH and cpu not in _CORES_WITH[isa]:
        raise ValueError(f"isa {isa!r} needs a core with it ({', '.join(sorted(_CORES_WITH[isa]))}), not {cpu}")


def build_runner(cpu: str = "cortex-m55", jobs: int = 2, isa: str | None = None) -> Path:
    """Configures (once) and builds the runner for cpu in build/qemu-<cpu>; ninja rebuilds only
    what changed. isa forces a kernel variant (build/qemu-<cpu>-<isa>). Returns the ELF file."""
    return build_firmware(cpu, "cortexm_runner", jobs, isa)


def build_firmware(cpu: str, target: str, jobs: int = 2, isa: str | None = None) -> Path:
    """Builds a firmware target of firmware/CMakeLists.txt (cortexm_runner, cortexm_kernel_tests)
    for cpu in build/qemu-<cpu> (build/qemu-<cpu>-<isa> when isa forces a kernel variant).
    Returns its ELF file."""
    _check_cpu(cpu)
    _check_isa(cpu, isa)
    root = source_dir()
    if target != "cortexm_runner" and root.resolve() == _PACKAGED_SOURCE:
        raise RuntimeError(f"{target} builds from a cortexm checkout (the installed package ships the runner's "
                           f"sources only): set CORTEXM_SOURCE_DIR to one")
    name = f"qemu-{cpu}" + (f"-{isa}" if isa else "")
    builds = build_dir(root)
    build = builds / name
    for tool in ("cmake", "ninja", "arm-none-eabi-g++", "flatc"):
        _tool(tool)
    with _locked(builds / f".{name}.lock"):
        if not (build / "build.ninja").is_file():
            print(f"cortexm: building {target} for {cpu} in {build} (once; about a minute)", file=sys.stderr,
                  flush=True)
            configure = ["cmake", "-S", str(root), "-B", str(build), "-G", "Ninja",
                         f"-DCMAKE_TOOLCHAIN_FILE={root / 'cmake' / 'arm-none-eabi.cmake'}",
                         f"-DCORTEXM_CPU={cpu}", "-DCORTEXM_KERNELS_ONLY=ON", "-DCORTEXM_BUILD_FIRMWARE=ON",
                         "-DCMAKE_BUILD_TYPE=Release"]
            if isa:
                configure.append(f"-DCORTEXM_KERNEL_ISA={ISAS[isa]}")
            if shutil.which("ccache"):
                configure += ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
            _check_call(configure, f"configuring the {cpu} runner")
        _build(["cmake", "--build", str(build), "--target", target, "--", f"-j{jobs}"],
               f"building {target} for {cpu}")
    return build / "firmware" / f"{target}.elf"


def _build_plugin() -> Path:
    """The instruction-count plugin (firmware/plugin/insn_count.c) built with the host's cc."""
    root = source_dir()
    src = root / "firmware" / "plugin" / "insn_count.c"
    builds = build_dir(root)
    out = builds / "qemu-plugin" / "libinsn_count.so"
    with _locked(builds / ".qemu-plugin.lock"):
        if not out.is_file() or out.stat().st_mtime < src.stat().st_mtime:
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = out.with_suffix(".so.tmp")
            try:
                _check_call([_tool("cc"), "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-Wall",
                             "-o", str(tmp), str(src)], "building the instruction-count plugin")
                os.replace(tmp, out)
            finally:
                tmp.unlink(missing_ok=True)  # a failed or interrupted build leaves no partial plugin
    return out


_NINJA_STEP = re.compile(r"^\[(\d+)/(\d+)\] ")


def ninja_steps(lines):
    """(done, total) for each ninja progress line ("[12/80] Building CXX object ...") in lines."""
    for line in lines:
        m = _NINJA_STEP.match(line)
        if m:
            yield int(m.group(1)), int(m.group(2))


def _build(cmd, what):
    """_check_call for a ninja build, with a bar over its steps on a terminal."""
    if not on_terminal():
        return _check_call(cmd, what)
    kept = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc, \
            bar(desc=what, unit="step") as shown:
        for line in proc.stdout:
            kept.append(line)
            for done, total in ninja_steps([line]):
                if shown.total != total:
                    shown.reset(total=total)
                shown.update(done - shown.n)
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed ({' '.join(cmd)}):\n{''.join(kept)[-4000:]}")


def _check_call(cmd, what):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed ({' '.join(cmd)}):\n{proc.stdout[-4000:]}")


def _marker_address(elf: Path) -> int:
    out = subprocess.run([_tool("arm-none-eabi-nm"), str(elf)], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == "cortexm_insn_marker":
            return int(parts[0], 16) & ~1
    raise RuntimeError(f"{elf} has no cortexm_insn_marker symbol")


def _as_program(program):
    if isinstance(program, Program):
        return program
    if isinstance(program, (bytes, bytearray)):
        return Program(bytes(program))
    if isinstance(program, (str, os.PathLike)):
        return load_program(program)
    raise ValueError(f"run_on_qemu takes a cortexm.Program, program bytes or a path, got {type(program).__name__}")


def _input_arrays(program, inputs) -> list:
    if inputs is None:
        cases = program.bundled()
        if not cases:
            raise ValueError("the program has no bundled inputs; pass inputs")
        inputs = list(cases[0][0])
    elif isinstance(inputs, np.ndarray) or hasattr(inputs, "numpy"):
        inputs = [inputs]
    arrays = [np.asarray(x.numpy() if hasattr(x, "numpy") else x) for x in inputs]
    specs = program.inputs
    if len(arrays) != len(specs):
        raise ValueError(f"the program takes {len(specs)} inputs, got {len(arrays)}")
    for i, (a, spec) in enumerate(zip(arrays, specs)):
        want = np.dtype(spec["dtype"])
        if a.dtype != want or tuple(a.shape) != tuple(spec["shape"]):
            raise ValueError(f"input {i} ({spec['name']}) is {a.dtype}{list(a.shape)}, the program takes "
                             f"{want}{list(spec['shape'])}")
    return arrays


def _align(n: int) -> int:
    return (n + _ALIGN - 1) // _ALIGN * _ALIGN


def run(program, inputs=None, cpu: str = "cortex-m55", *, count_instructions: bool = False,
        per_op: bool = False, isa: str | None = None, timeout: float = 600.0) -> QemuRun:
    """Runs program (a cortexm.Program, its bytes or a .cmpte path) on inputs (None: its first
    bundled case) under QEMU. count_instructions adds the model's executed instructions; per_op
    also each op's (the runner then calls a marker around every op). isa forces the kernel
    variant ("scalar", "dsp", "mve"; None: the core's best). Raises ValueError for a bad cpu or isa,
    bad inputs, or a program that does not fit the machine's memory."""
    program = _as_program(program)
    runs = _run(program, [_input_arrays(program, inputs)], cpu, count_instructions=count_instructions,
                per_op=per_op, isa=isa, timeout=timeout)
    return runs[0]


def run_cases(program, cases, cpu: str = "cortex-m55", *, isa: str | None = None,
              timeout: float = 600.0) -> list:
    """Runs program once per case (each a tuple of inputs, or one array for a one-input program)
    in a single boot of the emulated cpu, as Program.run_batch does on the host: a list with each
    case's outputs (one array, or a tuple for several outputs). Same errors as run()."""
    program = _as_program(program)
    cases = [_input_arrays(program, c) for c in cases]
    if not cases:
        raise ValueError("cases: empty: give at least one case")
    runs = _run(program, cases, cpu, count_instructions=False, per_op=False, isa=isa, timeout=timeout)
    return [r.outputs[0] if len(r.outputs) == 1 else tuple(r.outputs) for r in runs]


def _run(program, cases: list, cpu: str, *, count_instructions: bool, per_op: bool, isa: str | None,
         timeout: float) -> list:
    """QemuRun per case of checked input arrays, all in one boot of the runner."""
    machine = _check_cpu(cpu)
    _check_isa(cpu, isa)
    input_bytes = sum(a.nbytes for a in cases[0])
    output_bytes = sum(int(np.prod(o["shape"], dtype=np.int64)) * np.dtype(o["dtype"]).itemsize
                       for o in program.outputs)
    needed = _align(_align(len(program.data)) + program.arena_size) + _align(input_bytes) + output_bytes
    available = bulk_bytes(cpu)
    if needed > available:
        raise ValueError(
            f"the program does not fit {cpu} ({machine}): program file {len(program.data)} B + arena "
            f"{program.arena_size} B + inputs {input_bytes} B + outputs {output_bytes} B = {needed} B, the "
            f"machine's RAM for them holds {available} B (BULK in firmware/ld/{machine}.ld)")
    _tool("qemu-system-arm")  # before the build, not after it
    elf = build_runner(cpu, isa=isa)
    plugin = _build_plugin() if count_instructions or per_op else None
    with tempfile.TemporaryDirectory(prefix="cortexm-qemu-") as tmp:
        tmp = Path(tmp)
        (tmp / "program.cmpte").write_bytes(program.data)
        (tmp / "inputs.bin").write_bytes(b"".join(np.ascontiguousarray(a).tobytes() for c in cases for a in c))
        args = ["runner", "program.cmpte", "inputs.bin", "outputs.bin"] + (["per-op"] if per_op else [])
        cmd = _qemu_command(machine, elf, args)
        if plugin:
            cmd += ["-plugin", f"{plugin},marker={_marker_address(elf):#x},out={tmp / 'counts.txt'}"]
        try:
            proc = subprocess.run(cmd, cwd=tmp, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise TimeoutError(f"qemu-system-arm -M {machine} did not finish within {timeout} s") from e
        log = proc.stdout
        if proc.returncode in (_EXIT_TOO_BIG, _EXIT_INVALID):
            raise ValueError(f"{cpu} ({machine}): {_runner_errors(log)}")
        if proc.returncode != _EXIT_OK:
            raise RuntimeError(f"the runner on {cpu} ({machine}) failed with exit code {proc.returncode}:\n{log}")
        data = (tmp / "outputs.bin").read_bytes()
        counts = _read_counts(tmp / "counts.txt") if plugin else None
    if len(data) != output_bytes * len(cases):
        raise RuntimeError(f"the runner wrote {len(data)} output bytes, {len(cases)} cases of the program's "
                           f"outputs take {output_bytes * len(cases)}")
    runs, offset = [], 0
    for _ in cases:
        outputs = []
        for spec in program.outputs:
            dtype = np.dtype(spec["dtype"])
            n = int(np.prod(spec["shape"], dtype=np.int64)) * dtype.itemsize
            outputs.append(np.frombuffer(data[offset:offset + n], dtype=dtype).reshape(spec["shape"]).copy())
            offset += n
        runs.append(QemuRun(outputs, cpu, machine, isa=isa, log=log))
    if counts is not None:
        runs[0].instructions, runs[0].op_instructions = _attribute(counts, program, per_op)
    return runs


def _qemu_command(machine: str, elf: Path, args: list) -> list:
    return [_tool("qemu-system-arm"), "-M", machine, "-nographic", "-monitor", "none", "-serial", "none",
            "-semihosting-config", ",".join(["enable=on", "target=native", *(f"arg={a}" for a in args)]),
            "-kernel", str(elf)]


# tests/cpp/<suite> as built for the target by firmware/CMakeLists.txt
TEST_SUITES = {"kernels": "cortexm_kernel_tests", "portable": "cortexm_portable_tests"}


def run_kernel_tests(cpu: str = "cortex-m55", gtest_args=(), suite: str = "kernels", timeout: float = 900.0):
    """Builds a gtest suite (tests/cpp/kernels or tests/cpp/portable) for cpu and runs it under
    QEMU. Returns (exit code, log): 0 when every test passed."""
    machine = _check_cpu(cpu)
    if suite not in TEST_SUITES:
        raise ValueError(f"suite {suite!r}: choose one of {', '.join(TEST_SUITES)}")
    for a in gtest_args:
        if not a.startswith("--gtest_") or " " in a or "," in a:
            raise ValueError(f"gtest argument {a!r}: only --gtest_* options without spaces or commas")
    elf = build_firmware(cpu, TEST_SUITES[suite])
    try:
        return run_elf(elf, cpu, ["tests", *gtest_args], timeout=timeout)
    except TimeoutError as e:
        raise TimeoutError(f"the {suite} tests on {cpu} did not finish within {timeout} s") from e


def run_elf(elf, cpu: str = "cortex-m55", args=(), timeout: float = 600.0):
    """Runs firmware linked with cortexm's startup code for cpu's QEMU machine (firmware/ld), e.g.
    an exported program's main (Program.export_c), with semihosting arguments args. Returns
    (exit code, console log): the exit code is main's return value, 3 after a fault."""
    machine = _check_cpu(cpu)
    try:
        proc = subprocess.run(_qemu_command(machine, Path(elf), list(args)), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise TimeoutError(f"qemu-system-arm -M {machine} did not finish within {timeout} s") from e
    return proc.returncode, proc.stdout


def _runner_errors(log: str) -> str:
    lines = [line.removeprefix("runner: ") for line in log.splitlines() if line.startswith("runner: ")]
    return "; ".join(lines) or log


def _read_counts(path: Path) -> list:
    return [int(line) for line in path.read_text().splitlines() if line and not line.startswith("total")]


def _attribute(counts: list, program, per_op: bool):
    """Marker hits: run start, (before, after) per op with per_op, run end."""
    expected = 2 + (2 * program.num_ops if per_op else 0)
    if len(counts) != expected:
        raise RuntimeError(f"the instruction-count plugin saw {len(counts)} marker hits, expected {expected}")
    total = counts[-1] - counts[0]
    ops = []
    if per_op:
        for i, op in enumerate(program.ops()):
            ops.append((op["name"], op["kernel"], counts[2 + 2 * i] - counts[1 + 2 * i]))
    return total, ops


def run_on_qemu(program, inputs=None, cpu: str = "cortex-m55", *, isa: str | None = None, timeout: float = 600.0):
    """Runs program on inputs (None: its first bundled case) on an emulated cpu and returns the
    outputs like Program.run: one array, or a tuple for several outputs."""
    outs = run(program, inputs, cpu, isa=isa, timeout=timeout).outputs
    return outs[0] if len(outs) == 1 else tuple(outs)
