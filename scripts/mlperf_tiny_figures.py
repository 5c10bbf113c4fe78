"""Per MLPerf Tiny reference model (MLPERF_TINY_DIR): from_tflite -> lower -> program, and its ops,
layout nodes (permute_copy / _clone_dim_order; an aliased permute moves nothing), arena bytes and executed instructions per
inference on QEMU (an instruction count, not cycles; one random int8 input).

    MLPERF_TINY_DIR=dir PYTHONPATH=python python scripts/mlperf_tiny_figures.py [--cpu cortex-m55] [model ...]
"""

from __future__ import annotations

import argparse
import collections
import os

import numpy as np

import cortexm
from cortexm import qemu
from cortexm.tflite import program_io

MODELS = ["kws_ref_model.tflite", "vww_96_int8.tflite", "pretrainedResnet_quant.tflite", "ad01_int8.tflite",
          "str_ww_ref_model.tflite"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=MODELS)
    parser.add_argument("--cpu", default="cortex-m55")
    args = parser.parse_args()
    directory = os.environ.get("MLPERF_TINY_DIR")
    if not directory:
        raise SystemExit("MLPERF_TINY_DIR: set it to a directory holding the MLPerf Tiny .tflite files")
    print("| model | ops | layout nodes | arena bytes | instructions |")
    print("|---|---|---|---|---|")
    for name in args.models:
        with open(os.path.join(directory, name), "rb") as f:
            data = f.read()
        lowered = cortexm.lower(cortexm.from_tflite(data), f"{args.cpu}+int8")
        program = cortexm.to_program(lowered, io=program_io(data))
        counts = collections.Counter(n.op for n in lowered.nodes)
        moves = counts["aten.permute_copy.default"] + counts["dim_order_ops._clone_dim_order.default"]
        spec = program.inputs[0]
        x = np.random.default_rng(0).integers(-128, 128, size=spec["shape"]).astype(spec["dtype"])
        run = qemu.run(program, [x], args.cpu, count_instructions=True)
        print(f"| {name} | {program.num_ops} | {moves} | {program.arena_size} | {run.instructions} |", flush=True)


if __name__ == "__main__":
    main()
