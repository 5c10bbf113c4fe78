#!/usr/bin/env python3
"""Whole models on the host, one thread, in the same run: cortexm's Program.run (bit-exact with the
Cortex-M; the host kernels' x86 variant as cortexm.host_kernels() reports it) against PyTorch's own
int8 CPU path (FX graph mode, x86 backend: fbgemm / oneDNN kernels) and PyTorch fp32. Milliseconds
per input, the fastest of --repeats timed passes over --inputs random inputs (the least disturbed by
other load on the machine).

    PYTHONPATH=python bench/host_models.py [--models mobilenet_v2_96,mobilenet_v2,ds_cnn,wav2letter]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import cortexm


def per_input_ms(run, cases, repeats: int) -> float:
    run(cases[0])  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for c in cases:
            run(c)
        times.append((time.perf_counter() - start) * 1e3 / len(cases))
    return min(times)


def torch_int8(model, example, calibration):
    """PyTorch's FX post-training int8 (x86 backend), calibrated on the same samples."""
    import torch
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    torch.backends.quantized.engine = "x86"
    prepared = prepare_fx(model, get_default_qconfig_mapping("x86"), example)
    with torch.no_grad():
        for sample in calibration:
            prepared(*sample)
    return convert_fx(prepared)


def main(argv=None) -> int:
    import torch

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="mobilenet_v2_96,mobilenet_v2,ds_cnn,wav2letter")
    p.add_argument("--inputs", type=int, default=8)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", category=UserWarning, module=r"torch\.ao\.")
    print(f"one thread; cortexm host kernels: {cortexm.host_kernels()}; torch {torch.__version__}")
    print(f"{'model':24s} {'cortexm ms':>11s} {'torch int8 ms':>14s} {'torch fp32 ms':>14s} {'int8 / cortexm':>15s}")
    for name in args.models.split(","):
        model, example, calibration = cortexm.models.get(name)
        model = model.eval()
        samples = calibration(2)
        graph = cortexm.quantize(cortexm.export(model, example), samples, progress=False)
        program = cortexm.to_program(cortexm.lower(graph))
        rng = np.random.default_rng(0)
        cases = [tuple(rng.standard_normal(x.shape).astype(np.float32) for x in example) for _ in range(args.inputs)]
        torch_cases = [tuple(torch.from_numpy(x) for x in c) for c in cases]
        ours = per_input_ms(lambda c: program.run(*c), cases, args.repeats)
        quantized = torch_int8(model, example, samples)
        with torch.no_grad():
            int8 = per_input_ms(lambda c: quantized(*c), torch_cases, args.repeats)
            fp32 = per_input_ms(lambda c: model(*c), torch_cases, args.repeats)
        print(f"{name:24s} {ours:11.2f} {int8:14.2f} {fp32:14.2f} {int8 / ours:15.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
