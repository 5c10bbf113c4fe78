#!/usr/bin/env python3
"""Host runtime throughput: Program.run one input at a time against Program.run_batch over threads,
on a zoo model (outputs checked identical). Wall-clock milliseconds per input on this machine.

    PYTHONPATH=python bench/host_batch.py [--model mobilenet_v2_96] [--inputs 40] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import cortexm


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="mobilenet_v2_96")
    p.add_argument("--inputs", type=int, default=40)
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    args = p.parse_args(argv)
    model, example, calibration = cortexm.models.get(args.model)
    graph = cortexm.quantize(cortexm.export(model, example), calibration(2), progress=False)
    program = cortexm.to_program(cortexm.lower(graph))
    rng = np.random.default_rng(0)
    cases = [tuple(rng.standard_normal(x.shape).astype(np.float32) for x in example) for _ in range(args.inputs)]
    program.run(*cases[0])  # warm up
    start = time.perf_counter()
    one_by_one = [program.run(*c) for c in cases]
    sequential = time.perf_counter() - start
    start = time.perf_counter()
    batched = program.run_batch(cases, threads=args.threads)
    parallel = time.perf_counter() - start
    flat = lambda r: r if isinstance(r, tuple) else (r,)
    assert all(a.tobytes() == b.tobytes() for x, y in zip(one_by_one, batched) for a, b in zip(flat(x), flat(y)))
    n = len(cases)
    print(f"{args.model}, {n} inputs: run {sequential * 1e3 / n:.1f} ms per input, run_batch(threads={args.threads}) "
          f"{parallel * 1e3 / n:.1f} ms per input ({sequential / parallel:.2f}x), outputs identical")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
