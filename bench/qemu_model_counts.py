#!/usr/bin/env python3
"""Executed-instruction counts (QEMU TCG: an instruction count, not cycles) of zoo models on emulated
Cortex-M cores, per kernel variant, each run checked bit-identical with the host runtime.

    bench/qemu_model_counts.py --run cortex-m55:scalar,dsp,mve --run cortex-m4:scalar,dsp [models...]

Each model is exported, quantized (2 calibration samples) and lowered for <cpu>+int8, written as a
program and run with cortexm.qemu.run(count_instructions=True, isa=...) on its zoo example inputs.
"default" as an isa means the core's best variant. Prints one row per model.
"""

from __future__ import annotations

import argparse
import sys

import cortexm
from cortexm import qemu

ZOO = ["deep_autoencoder", "ds_cnn", "mobilenet_v1_025", "mobilenet_v2_96", "mobilenet_v3_small_96",
       "resnet8", "silero_vad", "wav2letter", "yolo_style"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", default=ZOO)
    p.add_argument("--run", action="append", metavar="CPU:ISA,ISA",
                   help="a core and its kernel variants (default: cortex-m55:scalar,dsp,mve and cortex-m4:scalar,dsp)")
    args = p.parse_args(argv)
    runs = []
    for spec in args.run or ["cortex-m55:scalar,dsp,mve", "cortex-m4:scalar,dsp"]:
        cpu, _, isas = spec.partition(":")
        runs += [(cpu, None if isa == "default" else isa) for isa in (isas or "default").split(",")]
    print(f"{'model':22} " + " ".join(f"{cpu + ':' + (isa or 'default'):>22}" for cpu, isa in runs))
    for name in args.models:
        model, example, calibration = cortexm.models.get(name)
        inputs = [x.numpy() for x in example]
        graph = cortexm.quantize(cortexm.export(model, example), calibration(2), progress=False)
        programs = {}
        cells = []
        for cpu, isa in runs:
            if cpu not in programs:
                target = f"{cpu}+int8"
                programs[cpu] = cortexm.to_program(cortexm.lower(graph, target), target=target)
            program = programs[cpu]
            try:
                r = qemu.run(program, inputs, cpu, count_instructions=True, isa=isa)
            except ValueError as e:
                cells.append("does not fit" if "does not fit" in str(e) else "error")
                print(f"  {name} on {cpu}: {e}", file=sys.stderr)
                continue
            host = program.run(*inputs)
            host = list(host) if isinstance(host, tuple) else [host]
            same = all(a.tobytes() == b.tobytes() for a, b in zip(r.outputs, host))
            cells.append(f"{r.instructions:,}" + ("" if same else " DIFFERS"))
        print(f"{name:22} " + " ".join(f"{c:>22}" for c in cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
