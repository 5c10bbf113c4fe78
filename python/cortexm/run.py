"""Runs a program file on the host runtime.

    python -m cortexm.run model.cmpte [--inputs file.npz] [--profile] [--qemu CPU]

Inputs come from --inputs (a .npz of arrays in the program's input order: by input name, else
arr_0, arr_1, ...; a .npy for a one-input program), else from the program's first bundled case.
With bundled inputs and expected outputs every case is verified bit for bit.
With --qemu CPU (cortex-m55, cortex-m4, ...) the program runs on that core emulated by QEMU instead
(cortexm.run_on_qemu), its outputs are compared with the host runtime's (and with the bundled
expected outputs, every case), and the executed instruction count is printed (per op with
--profile): instructions, not cycles.
Errors are one "error:" line: exit status 2 for a bad argument, program or input, 1 for a missing
tool or a failed build, 3 when outputs differ from the expected or the host runtime's ones.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import cortexm

from . import qemu
from .escape import printable


def read_inputs(path, program):
    """The input arrays from a .npz (by input name, else in order) or a .npy (a one-input program);
    ValueError naming the file otherwise."""
    names = [t["name"] for t in program.inputs]
    try:
        loaded = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ValueError(f"--inputs {path!r}: cannot be read as .npz / .npy ({e})") from None
    if isinstance(loaded, np.ndarray):
        if len(names) != 1:
            raise ValueError(f"--inputs {path!r} holds one array (.npy), the program takes {len(names)} inputs "
                             f"({', '.join(names)}): give a .npz with one array per input")
        return [loaded]
    with loaded as npz:
        if all(n in npz.files for n in names):
            return [npz[n] for n in names]
        if len(npz.files) != len(names):
            raise ValueError(f"--inputs {path!r} holds {len(npz.files)} arrays, the program takes {len(names)} "
                             f"inputs ({', '.join(names)})")
        return [npz[f"arr_{i}"] if f"arr_{i}" in npz.files else npz[npz.files[i]] for i in range(len(names))]


def error(message) -> None:
    """One line on stderr: 'error: <message>', its control characters escaped."""
    text = str(message).strip()
    print(f"error: {printable(text.splitlines()[0] if text else type(message).__name__)}", file=sys.stderr)


def describe(k, out):
    line = f"output {k}: {out.dtype}{list(out.shape)}"
    if out.size:
        line += f" min {out.min():.6g} max {out.max():.6g} mean {out.astype(np.float64).mean():.6g}"
        if out.ndim >= 1 and out.size == out.shape[-1] * (out.size // out.shape[-1]) and out.ndim <= 2:
            line += f" argmax {np.argmax(out.reshape(-1, out.shape[-1]), axis=-1).tolist()[:8]}"
    return line


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m cortexm.run", description=__doc__.splitlines()[0])
    p.add_argument("program", help="program file (.cmpte)")
    p.add_argument("--inputs", help=".npz with the inputs (a .npy for a one-input program)")
    p.add_argument("--profile", action="store_true",
                   help="print host time per op (with --qemu: executed instructions per op)")
    p.add_argument("--qemu", metavar="CPU", help="run on this Cortex-M under QEMU (cortex-m55, cortex-m4, ...)")
    p.add_argument("--isa", choices=["scalar", "dsp", "mve"],
                   help="with --qemu: force this kernel variant (default: the core's best)")
    args = p.parse_args(argv)
    if args.qemu is not None and args.qemu not in qemu.MACHINES:
        error(f"--qemu {args.qemu!r} has no QEMU machine: choose one of {', '.join(qemu.MACHINES)}")
        return 2
    if args.isa and not args.qemu:
        error(f"--isa {args.isa} needs --qemu CPU")
        return 2
    try:
        program = cortexm.load_program(args.program)
    except OSError as e:
        error(f"cannot read program {args.program!r}: {e.strerror or e}")
        return 2
    except ValueError as e:
        error(e)
        return 2
    print(printable(program.summary()))
    bundled = program.bundled()
    if args.inputs:
        try:
            inputs = read_inputs(args.inputs, program)
        except ValueError as e:
            error(e)
            return 2
    elif bundled:
        inputs = list(bundled[0][0])
        print("inputs: the first bundled case")
    else:
        error("the program has no bundled inputs; pass --inputs file.npz")
        return 2
    if args.qemu:
        return run_qemu(program, inputs, args.qemu, args.profile, args.isa, bundled, inputs_given=bool(args.inputs))
    try:
        outs = program.run(*inputs)
    except ValueError as e:
        error(e)
        return 2
    outs = outs if isinstance(outs, tuple) else (outs,)
    for k, out in enumerate(outs):
        print(describe(k, out))
    if args.profile:
        for name, kernel, seconds in program.profile(*inputs):
            print(f"  {seconds * 1e6:10.1f} us  {kernel:<26} {printable(name)}")
    if bundled:
        try:
            n = program.verify()
        except ValueError as e:
            print(f"verify: FAILED: {e}", file=sys.stderr)
            return 3
        print(f"verify: {n} bundled case(s), outputs bit-exact with the expected outputs")
    return 0


def verify_on_qemu(program, bundled, cpu, isa, first_outputs=None) -> str | None:
    """None when the outputs on the core equal every bundled case's expected outputs bit for bit,
    else what differs. first_outputs: case 0's outputs when they have been run already."""
    outputs = [] if first_outputs is None else [tuple(first_outputs)]
    if len(bundled) > len(outputs):
        rest = qemu.run_cases(program, [case[0] for case in bundled[len(outputs):]], cpu, isa=isa)
        outputs += [o if isinstance(o, tuple) else (o,) for o in rest]
    for c, ((_, expected), got) in enumerate(zip(bundled, outputs)):
        for k, (a, b) in enumerate(zip(got, expected)):
            if a.tobytes() != b.tobytes():
                return f"bundled case {c}: output {k} on {cpu} differs from the expected output"
    return None


def run_qemu(program, inputs, cpu, per_op, isa=None, bundled=(), inputs_given=False) -> int:
    """--qemu: runs inputs on cpu and compares with the host runtime's outputs, and every bundled
    case's outputs on cpu with its expected outputs (exit 3 as the host run). inputs_given: the
    inputs are not the first bundled case's (--inputs)."""
    try:
        result = qemu.run(program, inputs, cpu, count_instructions=True, per_op=per_op, isa=isa)
        host = program.run(*inputs)
        differs = verify_on_qemu(program, bundled, cpu, isa, None if inputs_given else result.outputs) \
            if bundled else None
    except ValueError as e:  # a bad input, a program that does not fit the machine
        error(e)
        return 2
    except (RuntimeError, TimeoutError, OSError) as e:  # a missing tool, a failed build: one line each
        error(e)
        return 1
    host = host if isinstance(host, tuple) else (host,)
    print(f"ran on {cpu} under QEMU ({result.machine}), kernels: {isa or 'the core default'}")
    for k, out in enumerate(result.outputs):
        print(describe(k, out))
    print(f"executed instructions (QEMU instruction count, not cycles): {result.instructions}")
    if per_op:
        for name, kernel, count in result.op_instructions:
            print(f"  {count:12d} instructions  {kernel:<26} {printable(name)}")
    same = all(a.tobytes() == b.tobytes() for a, b in zip(result.outputs, host))
    if not same:
        print(f"compare: FAILED: the outputs on {cpu} differ from the host runtime's", file=sys.stderr)
        return 3
    print(f"compare: outputs on {cpu} bit-exact with the host runtime")
    if bundled:
        if differs:
            print(f"verify: FAILED: {differs}", file=sys.stderr)
            return 3
        print(f"verify: {len(bundled)} bundled case(s) on {cpu}, outputs bit-exact with the expected outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
