#!/usr/bin/env python3
"""Executed instructions (QEMU TCG instruction count, not cycles) of silero_vad in 16x8 on an
emulated Cortex-M core, in total and per kernel, the QEMU outputs checked bit-identical with the
host runtime; with --int16-weights, some or all of its conv / linear layers 16x16 (int16 weights).

    PYTHONPATH=python bench/silero_16x8_counts.py [--cpu cortex-m55] [--isa scalar|dsp|mve]
        [--int16-weights none|encoder|all | --auto]

silero_vad is quantized with CortexMQuantizer(activation_dtype="int16", fuse_magnitude=True,
int16_weights=...) on 2 calibration samples, lowered for <cpu>+int8, written as a program for that
target and run with cortexm.qemu.run(count_instructions=True, per_op=True) on the zoo example
inputs. It also prints the program's constant bytes and the conv / linear weight bytes among them.
--auto quantizes with CortexMQuantizer(precision="auto", state_feedback={1: 1}) on 256 calibration
samples instead (its choice of int16 groups and weights; GPTQ needs the samples).
"""

from __future__ import annotations

import argparse
import collections
import sys

import numpy as np

import cortexm
from cortexm import qemu

WEIGHT_OPS = ("aten.convolution.default", "aten.linear.default", "aten.addmm.default")


def weight_names(graph, which: str) -> list:
    """The conv / linear / addmm weight constants of `which` layers: none, the encoder's convs
    ('encoder.' names), all."""
    names = []
    for n in graph.nodes:
        if n.op in WEIGHT_OPS:
            w = n.inputs[2] if n.op == "aten.addmm.default" else n.inputs[1]
            names.append(w.name if w.kind == "constant" else w.producer.inputs[0].name)
    return {"none": [], "encoder": [w for w in names if w.startswith("encoder.")], "all": names}[which]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpu", default="cortex-m55")
    p.add_argument("--isa", default=None, help="force a kernel variant (default: the core's best)")
    p.add_argument("--auto", action="store_true", help="precision='auto' (state declared) instead of 16x8")
    p.add_argument("--int16-weights", default="none", choices=("none", "encoder", "all"),
                   help="the conv / linear layers made 16x16 (int16 weights)")
    args = p.parse_args(argv)
    model, example, calibration = cortexm.models.get("silero_vad")
    graph = cortexm.export(model, example)
    if args.auto:
        quantizer = cortexm.CortexMQuantizer(precision="auto", state_feedback=cortexm.models.state_feedback("silero_vad"))
        qgraph = cortexm.quantize(graph, calibration(256), quantizer, progress=False)
        print(cortexm.quantization_report(qgraph).precision.__str__().splitlines()[0])
    else:
        quantizer = cortexm.CortexMQuantizer(activation_dtype="int16", fuse_magnitude=True,
                                             int16_weights=weight_names(graph, args.int16_weights))
        qgraph = cortexm.quantize(graph, calibration(2), quantizer, progress=False)
    target = f"{args.cpu}+int8"
    lowered = cortexm.lower(qgraph, target)
    program = cortexm.to_program(lowered, target=target)
    weight_bytes = sum(np.asarray(n.inputs[1].data).nbytes for n in lowered.nodes
                       if n.op.startswith(("cortex_m.quantized_conv2d", "cortex_m.quantized_linear")))
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
    setting = "precision auto" if args.auto else f"16x8, int16 weights: {args.int16_weights}"
    print(f"silero_vad {setting}, on {args.cpu} ({kernels} kernels): "
          f"{result.instructions:,} instructions; constants {program.constant_size:,} bytes, conv / linear "
          f"weights {weight_bytes:,} bytes")
    for kernel, count in per_kernel.most_common():
        print(f"  {kernel:40} {count:>12,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
