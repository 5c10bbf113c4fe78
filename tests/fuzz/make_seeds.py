#!/usr/bin/env python3
"""Regenerates the fuzz seed corpora: tests/fuzz/corpus/program/seed_*.cmpte (every program builder
of tests/py/test_program.py, with bundled IO, and the ds_cnn and resnet8 zoo programs) and
tests/fuzz/corpus/graph/seed_*.cmg (the same graphs, and ds_cnn as exported, quantized and lowered).
Files not named seed_* are regression inputs the fuzzers found; they are kept.
Run from the repository root: PYTHONPATH=python .venv/bin/python tests/fuzz/make_seeds.py
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "py"))

import cortexm  # noqa: E402
import test_program as t  # noqa: E402
from cortexm.aot import load_model  # noqa: E402

CORPUS = ROOT / "tests" / "fuzz" / "corpus"


def zoo(name):
    model, example, calibration = load_model(name)
    graph = cortexm.export(model, example)
    qgraph = cortexm.quantize(graph, list(calibration(4)) if calibration else [example], progress=False)
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    inputs = tuple(x.detach().numpy() for x in example)
    return graph, qgraph, lowered, cortexm.to_program(lowered, bundle_inputs=inputs)


def main():
    for kind in ("program", "graph"):
        (CORPUS / kind).mkdir(parents=True, exist_ok=True)
        for old in (CORPUS / kind).glob("seed_*"):
            old.unlink()
    builders = sorted(name for name in dir(t) if name.startswith("g_"))
    for name in builders:
        graph, inputs = getattr(t, name)()
        program = cortexm.to_program(graph, bundle_inputs=tuple(inputs))
        program.save(CORPUS / "program" / f"seed_{name[2:]}.cmpte")
        graph.save(CORPUS / "graph" / f"seed_{name[2:]}.cmg")
    for name in ("ds_cnn", "resnet8"):
        graph, qgraph, lowered, program = zoo(name)
        program.save(CORPUS / "program" / f"seed_{name}.cmpte")
        if name == "ds_cnn":
            lowered.save(CORPUS / "graph" / f"seed_{name}_lowered.cmg")
            graph.save(CORPUS / "graph" / f"seed_{name}_exported.cmg")
            qgraph.save(CORPUS / "graph" / f"seed_{name}_quantized.cmg")
    for kind in ("program", "graph"):
        files = sorted((CORPUS / kind).glob("seed_*"))
        print(f"{len(files)} {kind} seeds, {sum(f.stat().st_size for f in files)} bytes")


if __name__ == "__main__":
    main()
