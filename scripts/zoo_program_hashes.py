"""sha256 of every zoo model's program, built as `python -m cortexm.aot --model M --target T --quantize`
(default calibration: the model's 8 first calibration samples, seed 0; int8 activations, nearest weight
rounding), one line per model and target. A refactor that must not change any program's bytes prints
the same lines before and after.

    python scripts/zoo_program_hashes.py [--models M ...] [--targets T ...] [--int16]

--int16 adds each model's 16x8 program (--activations int16) for the first target.
torch runs on one thread: its float sums (random weights, calibration) depend on the thread count,
and so would the scales and the bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys

os.environ["OMP_NUM_THREADS"] = "1"  # before torch is imported

import cortexm
from cortexm import _core

DEFAULT_TARGETS = ("cortex-m55+int8", "cortex-m4+int8")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=cortexm.models.names())
    p.add_argument("--targets", nargs="+", default=list(DEFAULT_TARGETS))
    p.add_argument("--int16", action="store_true", help="also the 16x8 program on the first target")
    args = p.parse_args(argv)
    unknown = sorted(set(args.models) - set(cortexm.models.names()))
    if unknown:
        p.error(f"--models {unknown}: not zoo models ({', '.join(cortexm.models.names())})")
    targets = [_core.CortexMTargetConfig.from_string(t) for t in args.targets]
    for name in args.models:
        model, example, calibration = cortexm.models.get(name)
        graph = cortexm.export(model, tuple(example))
        samples = list(calibration(8))  # aot's default --calibration-samples
        builds = [("int8", t, s) for t, s in zip(args.targets, targets)]
        if args.int16:
            builds.append(("16x8", args.targets[0], targets[0]))
        quantized = {}
        for activations, target_name, target in builds:
            if activations not in quantized:
                quantizer = cortexm.CortexMQuantizer(activation_dtype="int16" if activations == "16x8" else "int8",
                                                     fuse_magnitude=False, weight_rounding="nearest", precision=None)
                quantized[activations] = cortexm.quantize(graph, samples, quantizer, progress=False)
            try:
                lowered = cortexm.lower(quantized[activations], target)
                data = bytes(cortexm.to_program(lowered, target=target).data)
                digest = hashlib.sha256(data).hexdigest()
            except NotImplementedError as e:  # the same refusal before and after is the same program
                digest = f"not writable: {str(e).splitlines()[0]}"
            print(f"{name} {target_name} {activations} {digest}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
