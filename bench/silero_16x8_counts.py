#!/usr/bin/env python3
"""Executed instructions (QEMU TCG instruction count, not cycles) of silero_vad in 16x8 on an
emulated Cortex-M core, in total and per kernel, the QEMU outputs checked bit-identical with the
host runtime.

    PYTHONPATH=python bench/silero_16x8_counts.py [--cpu cortex-m55] [--isa scalar|dsp|mve]

silero_vad is quantized with CortexMQuantizer(activation_dtype="int16", fuse_magnitude=True) on 2
calibration samples, lowered for <cpu>+int8, written as a program for that target and run with
cortexm.qemu.run(count_instructions=True, per_op=True) on the zoo example inputs.
"""

from __future__ import annotations

import argparse
import collections
import sys

import cortexm
from cortexm import qemu


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpu", default="cortex-m55")
    p.add_argument("--isa", default=None, help="force a kernel variant (default: the core's best)")
    args = p.parse_args(argv)
    model, example, calibration = cortexm.models.get("silero_vad")
    graph = cortexm.export(model, example)
    quantizer = cortexm.CortexMQuantizer(activation_dtype="int16", fuse_magnitude=True)
    qgraph = cortexm.quantize(graph, calibration(2), quantizer, progress=False)
    target = f"{args.cpu}+int8"
    program = cortexm.to_program(cortexm.lower(qgraph, target), target=target)
    inputs = [x.numpy() for x in example]
    result = qemu.run(program, inputs, args.cpu, count_instructions=True, per_op=True, isa=args.isa)
    host = program.run(*inputs)
    if len(result.outputs) != len(host) or any(
            a.dtype != b.dtype or a.tobytes() != b.tobytes() for a, b in zip(result.outputs, host)):
        print("QEMU outputs differ from the host runtime's", file=sys.stderr)
        return 1
    per_kernel = collections.Counter()
    for _, kernel, count in result.op_instructions:
        per_kernel[kernel] += count
    kernels = args.isa or "best"
    print(f"silero_vad 16x8 on {args.cpu} ({kernels} kernels): {result.instructions:,} "
          "instructions")
    for kernel, count in per_kernel.most_common():
        print(f"  {kernel:40} {count:>12,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
