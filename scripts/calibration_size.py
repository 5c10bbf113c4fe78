"""How many calibration samples quantization needs: output SQNR against float (held-out samples,
seed 1) after calibrating on the first n samples (seed 0), per zoo model and precision, and the
smallest n within 0.5 dB of n = 256's. The rule quantize warns by (docs/accuracy.md) comes from it.

    OMP_NUM_THREADS=1 PYTHONPATH=python python scripts/calibration_size.py [--models ds_cnn ...]
"""
import argparse
import sys

import cortexm
from cortexm.quantizer.auto import output_sqnrs_db

SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def as_list(outputs) -> list:
    return list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="+", default=["ds_cnn", "kws_digits", "resnet8", "deep_autoencoder",
                                                    "mobilenet_v1_025", "yolo_style"])
    ap.add_argument("--precisions", nargs="+", default=["int8", "16x8"])
    ap.add_argument("--eval", type=int, default=16)
    args = ap.parse_args(argv)
    print("| model | precision | " + " | ".join(f"n={n}" for n in SIZES) + " | smallest n within 0.5 dB |")
    print("|---|---|" + "---|" * (len(SIZES) + 1))
    for name in args.models:
        model, example, calibration = cortexm.models.get(name)
        graph = cortexm.export(model, example)
        pool = list(calibration(max(SIZES), seed=0))
        held = [[t.numpy() for t in s] for s in calibration(args.eval, seed=1)]
        want = [as_list(graph.run(*s)) for s in held]
        for precision in args.precisions:
            row = []
            for n in SIZES:
                qgraph = cortexm.quantize(graph, pool[:n], precision=precision, progress=False)
                row.append(min(output_sqnrs_db(want, [as_list(qgraph.run(*s)) for s in held])))
            enough = next(n for n, s in zip(SIZES, row) if s >= row[-1] - 0.5)
            print(f"| {name} | {precision} | " + " | ".join(f"{s:.1f}" for s in row) + f" | {enough} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
