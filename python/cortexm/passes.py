"""CortexMPassManager: orders and runs the lowering passes (C++ ones by name, Python callables)."""

from __future__ import annotations

import os
from typing import Callable, Iterable, Sequence, Union

from . import _core
from ._core import CortexMTargetConfig, Graph
from .qdq import is_quantized

PythonPass = Callable[[Graph, CortexMTargetConfig], object]
PassSpec = Union[str, PythonPass]

# Ops that only move or reshape data, as the C++ op registry flags them (OpSchema::is_data_movement).
DATA_MOVEMENT = frozenset(name for name in _core.registered_ops() if _core.op_info(name).is_data_movement)


def pass_name(spec: PassSpec) -> str:
    return spec if isinstance(spec, str) else getattr(spec, "name", getattr(spec, "__name__", repr(spec)))


def as_target(target: Union[str, CortexMTargetConfig]) -> CortexMTargetConfig:
    if isinstance(target, CortexMTargetConfig):
        return target
    if isinstance(target, str):
        return CortexMTargetConfig.from_string(target)
    raise ValueError(f"target must be a string like 'cortex-m55+int8' or a CortexMTargetConfig, got {target!r}")


class CortexMPassManager:
    """Runs passes over a graph in place.

    passes: names of C++ passes (see cortexm.pass_names()) or Python callables
    ``fn(graph, target) -> bool | None``; defaults to ``CortexMPassManager.pass_list``.
    skip_passes: names to leave out. intermediates: a directory that receives the graph after each
    pass as ``NN_<PassName>.cmg`` plus a readable ``.txt``.
    """

    # The default pipeline is src/passes/passes.def, in its order (docs/lowering.md describes it).
    pass_list: Sequence[str] = tuple(_core.default_passes())

    def __init__(self, graph: Graph, target_config: Union[str, CortexMTargetConfig] = "cortex-m55+int8",
                 passes: Iterable[PassSpec] | None = None, skip_passes: Iterable[str] = ()):
        self.graph = graph
        self.target = as_target(target_config)
        chosen = list(self.pass_list if passes is None else passes)
        known = set(_core.pass_names())
        for spec in chosen:
            if isinstance(spec, str) and spec not in known:
                raise ValueError(f"unknown pass '{spec}' (known: {', '.join(sorted(known))})")
            if not isinstance(spec, str) and not callable(spec):
                raise ValueError(f"pass {spec!r} is neither a pass name nor a callable")
        skip = set(skip_passes)
        unknown_skips = skip - {pass_name(p) for p in chosen}
        if unknown_skips:
            raise ValueError(f"skip_passes names passes not in the list: {', '.join(sorted(unknown_skips))}")
        self.passes = [p for p in chosen if pass_name(p) not in skip]
        self.changed: dict[str, bool] = {}

    def run(self, intermediates: str | os.PathLike | None = None) -> Graph:
        if intermediates is not None:
            os.makedirs(intermediates, exist_ok=True)
        for index, spec in enumerate(self.passes):
            name = pass_name(spec)
            if isinstance(spec, str):
                changed = _core.run_pass(spec, self.graph, self.target)
            else:
                changed = bool(spec(self.graph, self.target))
            self.changed[name] = changed
            self.graph.verify()
            if intermediates is not None:
                stem = os.path.join(os.fspath(intermediates), f"{index:02d}_{name}")
                self.graph.save(stem + ".cmg")
                _core.write_file_atomically(stem + ".txt", str(self.graph).encode("utf-8"))
        return self.graph


def lower(qgraph: Graph, target: Union[str, CortexMTargetConfig] = "cortex-m55+int8", *,
          passes: Iterable[PassSpec] | None = None, skip_passes: Iterable[str] = (),
          intermediates: str | os.PathLike | None = None) -> Graph:
    """Rewrites a quantized graph (cortexm.quantize's, or one PyTorch's PT2E flow quantized and
    cortexm.export captured) onto cortex_m int8 ops; returns a new graph, qgraph is left alone.

    Ops that cannot be lowered stay float between cortex_m dequantize / quantize nodes, with the
    reason in ``node.meta["lowering"]``, and run as float fallback in a program. With the default
    pipeline (no passes or skip_passes given), a node no program can run (an op without a float
    kernel, such as a float transposed convolution) is an UnsupportedError listing every such node
    (name, op, module path) at once.
    """
    graph = lower_unchecked(qgraph, target, passes=passes, skip_passes=skip_passes, intermediates=intermediates)
    if passes is None and not skip_passes:
        problems = _core.program_problems(graph)
        if problems:
            error = _core.UnsupportedError(
                f"cortexm.lower: {len(problems)} node{'s' if len(problems) > 1 else ''} no cortexm program can run:\n  "
                + "\n  ".join(p["message"] for p in problems))
            error.problems = problems
            raise error
    return graph


def lower_unchecked(qgraph: Graph, target: Union[str, CortexMTargetConfig] = "cortex-m55+int8", *,
                    passes: Iterable[PassSpec] | None = None, skip_passes: Iterable[str] = (),
                    intermediates: str | os.PathLike | None = None) -> Graph:
    """lower() without its final check that a program can run every node (cortexm.check lists
    those nodes itself)."""
    if not isinstance(qgraph, Graph):
        raise ValueError(f"lower takes a cortexm.Graph, got {type(qgraph).__name__}")
    if not is_quantized(qgraph):
        raise ValueError("lower needs a quantized graph: run cortexm.quantize(graph, calibration) first "
                         "(Cortex-M kernels are int8)")
    graph = qgraph.copy()
    manager = CortexMPassManager(graph, target, passes=passes, skip_passes=skip_passes)
    manager.run(intermediates)
    # The graph carries its target: to_program takes it from here (a different one is an error).
    for node in graph.nodes:
        if node.op.startswith("cortex_m."):
            node.set_meta("lowered_for", str(manager.target))
    return graph
