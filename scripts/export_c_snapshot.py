"""Exports a few programs with Program.export_c into OUT/<case>/ so two trees' exporters can be
compared file by file (diff -r): zoo programs (ds_cnn, deep_autoencoder), a small hand-built graph
with float and int8 inputs, and the same with the crafted strings of test_export_c's
hostile_strings. Usage, from a tree whose python/ and tests/py/ are on PYTHONPATH:

  PYTHONPATH=python:tests/py .venv/bin/python scripts/export_c_snapshot.py OUT
"""

import sys
from pathlib import Path

import cortexm
import test_export_c
import zoo

HOSTILE = test_export_c.HOSTILE


def main(out: Path) -> None:
    programs = {}
    for name, target in (("ds_cnn", "cortex-m55+int8"), ("ds_cnn", "cortex-m4+int8"),
                         ("deep_autoencoder", "cortex-m55+int8")):
        _, example, _, _ = zoo.exported(name)
        programs[f"{name}-{target}"] = cortexm.to_program(zoo.lowered(name, target), target=target,
                                                          bundle_inputs=tuple(x.numpy() for x in example))
    graph, cases = test_export_c.small_graph()
    programs["small"] = cortexm.to_program(graph, bundle_inputs=[tuple(c) for c in cases])
    programs["small-no-cases"] = cortexm.to_program(graph)
    for case, program in programs.items():
        for name in ("model", "kws_1"):
            program.export_c(out / case / name, name)
    # The crafted strings a program file may hold, as the hostile_strings fixture makes them.
    inputs = cortexm.Program.inputs.fget
    cortexm.Program.target = property(lambda self: HOSTILE)
    cortexm.Program.inputs = property(lambda self: [dict(spec, name=HOSTILE + spec["name"])
                                                    for spec in inputs(self)])
    programs["small"].export_c(out / "small-hostile", "tiny")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
