"""Runs a program file on the host runtime.

    python -m cortexm.run model.cmpte [--inputs file.npz] [--profile] [--qemu CPU]

Inputs come from --inputs (arrays in the program's input order: by input name, else arr_0, arr_1,
...), else from the program's first bundled case. With bundled inputs and expected outputs every
case is verified bit for bit.
With --qemu CPU (cortex-m55, cortex-m4, ...) the program runs on that core emulated by QEMU instead
(cortexm.run_on_qemu), its outputs are compared with the host runtime's, and the executed
instruction count is printed (per op with --profile): instructions, not cycles.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def read_inputs(path, program):
    with np.load(path) as npz:
        names = [t["name"] for t in program.inputs]
        if all(n in npz.files for n in names):
            return [npz[n] for n in names]
        if len(npz.files) != len(names):
            raise ValueError(f"{path} holds {len(npz.files)} arrays, the program takes {len(names)} inputs "
                             f"({', '.join(names)})")
        return [npz[f"arr_{i}"] if f"arr_{i}" in npz.files else npz[npz.files[i]] for i in range(len(names))]


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
    p.add_argument("--inputs", help=".npz with the inputs")
    p.add_argument("--profile", action="store_true",
                   help="print host time per op (with --qemu: executed instructions per op)")
    p.add_argument("--qemu", metavar="CPU", help="run on this Cortex-M under QEMU (cortex-m55, cortex-m4, ...)")
    p.add_argument("--isa", choices=["scalar", "dsp", "mve"],
                   help="with --qemu: force this kernel variant (default: the core's best)")
    args = p.parse_args(argv)
    import cortexm

    try:
        program = cortexm.load_program(args.program)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(program.summary())
    bundled = program.bundled()
    if args.inputs:
        try:
            inputs = read_inputs(args.inputs, program)
        except (OSError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    elif bundled:
        inputs = list(bundled[0][0])
        print("inputs: the first bundled case")
    else:
        print("error: the program has no bundled inputs; pass --inputs file.npz", file=sys.stderr)
        return 1
    if args.qemu:
        return run_qemu(program, inputs, args.qemu, args.profile, args.isa)
    try:
        outs = program.run(*inputs)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    outs = outs if isinstance(outs, tuple) else (outs,)
    for k, out in enumerate(outs):
        print(describe(k, out))
    if args.profile:
        for name, kernel, seconds in program.profile(*inputs):
            print(f"  {seconds * 1e6:10.1f} us  {kernel:<26} {name}")
    if bundled:
        try:
            n = program.verify()
        except ValueError as e:
            print(f"verify: FAILED: {e}", file=sys.stderr)
            return 3
        print(f"verify: {n} bundled case(s), outputs bit-exact with the expected outputs")
    return 0


def run_qemu(program, inputs, cpu, per_op, isa=None) -> int:
    from . import qemu

    try:
        result = qemu.run(program, inputs, cpu, count_instructions=True, per_op=per_op, isa=isa)
        host = program.run(*inputs)
    except (ValueError, RuntimeError, TimeoutError) as e:  # a missing tool, a failed build: one line each
        print(f"error: {str(e).strip()}", file=sys.stderr)
        return 1
    host = host if isinstance(host, tuple) else (host,)
    print(f"ran on {cpu} under QEMU ({result.machine}), kernels: {isa or 'the core default'}")
    for k, out in enumerate(result.outputs):
        print(describe(k, out))
    print(f"executed instructions (QEMU instruction count, not cycles): {result.instructions}")
    if per_op:
        for name, kernel, count in result.op_instructions:
            print(f"  {count:12d} instructions  {kernel:<26} {name}")
    same = all(a.tobytes() == b.tobytes() for a, b in zip(result.outputs, host))
    if not same:
        print(f"compare: FAILED: the outputs on {cpu} differ from the host runtime's", file=sys.stderr)
        return 3
    print(f"compare: outputs on {cpu} bit-exact with the host runtime")
    return 0


if __name__ == "__main__":
    sys.exit(main())
