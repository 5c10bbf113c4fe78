"""to_program: a lowered graph as a Program (program.py), with its memory plan (the planner's, or
cortexm.patches' patch-by-patch plan under an arena limit) and bundled cases."""

from __future__ import annotations

import numpy as np

from . import _core
from ._core import Graph
from .memory_plan import plan_memory
from .patches import fit
from .program import Program

__all__ = ["IO_KINDS", "lowered_target", "to_program"]


def _as_cases(bundle_inputs) -> list[tuple]:
    if bundle_inputs is None:
        return []
    if isinstance(bundle_inputs, np.ndarray) or hasattr(bundle_inputs, "numpy"):
        return [(bundle_inputs,)]
    cases = list(bundle_inputs)
    if cases and (isinstance(cases[0], np.ndarray) or hasattr(cases[0], "numpy")):
        return [tuple(cases)]  # one case given as a tuple of inputs
    return [tuple(c) for c in cases]


def lowered_target(lowered: Graph) -> str | None:
    """The target cortexm.lower lowered the graph for (recorded on its cortex_m nodes), or None."""
    targets = {n.meta["lowered_for"] for n in lowered.nodes if "lowered_for" in n.meta}
    if len(targets) > 1:
        raise ValueError(f"the graph mixes nodes lowered for {', '.join(sorted(targets))}: lower it once, for one target")
    return targets.pop() if targets else None


IO_KINDS = ("float", "int8", "int16")


def _quantized_inputs(graph: Graph, int8_graph: Graph, arrays: list) -> list:
    """Inputs for int8_graph (graph made int8 at its boundary): each array of another dtype than the
    int8 input is taken as graph's input and quantized by graph's own quantize op."""
    float_inputs = {i for i, (a, v) in enumerate(zip(arrays, int8_graph.inputs)) if a.dtype != np.dtype(v.dtype)}
    if not float_inputs:
        return arrays
    quantize_of = {graph.inputs[i].users[0].name: i for i in float_inputs if graph.inputs[i].users}
    made = {}

    def observe(node, outs):
        if node.name in quantize_of:
            made[quantize_of[node.name]] = outs[0]

    graph.run(*arrays, observe=observe)
    return [made.get(i, a) for i, a in enumerate(arrays)]


def to_program(lowered: Graph, *, target: str | _core.CortexMTargetConfig | None = None,
               bundle_inputs=None, layout: dict | str | None = None, io: str = "float",
               arena_limit: int | None = None, preserve_inputs: bool = False) -> Program:
    """Writes a lowered graph as a program for target: by default the one cortexm.lower lowered it
    for (recorded in the graph; "cortex-m55+int8" for a graph no lowering touched); a different
    target is a ValueError. bundle_inputs: one tuple of inputs or a list of tuples;
    each is run through the graph interpreter and stored with its outputs for Program.verify().
    layout: None places the arena with the memory planner (cortexm's src/planner), "sequential"
    gives every buffer its own bytes, a dict gives explicit offsets.
    io: "float" (the graph's inputs and outputs as they are) or "int8": the program takes and gives
    the int8 tensors the graph's boundary quantize / dequantize ops make and read (those ops are left
    out; a float bundled input is quantized by the graph's own quantize op); each input's and output's scale and zero point are in
    Program.inputs / outputs and export_c's header. ValueError names an input or output that is not
    quantized at the boundary. "int16": the same for int16 tensors and int8 ones, each input and
    output in the integer type the graph quantizes it to (a .tflite's own int16 boundary, or an
    SVDF's int16 state beside int8 inputs: cortexm.tflite.program_io).
    arena_limit: bytes the arena may take: when the whole-tensor plan is larger, the stage before a
    split tensor runs patch by patch (cortexm.patches.fit: split and grid with the fewest extra
    MACs that fit); Program.patch_plan reports the arena, MAC overhead and plan. ValueError names
    the limit and the smallest arena found when no plan fits (it needs layout=None).
    preserve_inputs: with the planner's layout, ops may write over a graph input once it is dead (a
    run consumes its inputs, as TFLite Micro's arena does: set every input before every run, as
    Program.run and the runners do); True keeps the inputs intact through a run, at the arena that
    costs. Graph outputs are never written over.
    Raises NotImplementedError naming the first node the runtime cannot run."""
    if not isinstance(lowered, Graph):
        raise ValueError(f"to_program takes a cortexm.Graph, got {type(lowered).__name__}")
    if not isinstance(preserve_inputs, bool):
        raise ValueError(f"to_program: preserve_inputs = {preserve_inputs!r} must be a bool")
    if not isinstance(io, str) or io not in IO_KINDS:
        raise ValueError(f"to_program: io = {io!r} must be one of {', '.join(map(repr, IO_KINDS))}")
    recorded = lowered_target(lowered)
    if target is None:
        target = recorded or "cortex-m55+int8"
    target = str(target if isinstance(target, _core.CortexMTargetConfig) else _core.CortexMTargetConfig.from_string(target))
    if recorded is not None and target != recorded:
        raise ValueError(f"to_program(target={target!r}): the graph was lowered for {recorded!r}; give that "
                         f"target (or none), or lower again for {target!r}")
    graph_as_given = lowered
    if io in ("int8", "int16"):
        lowered = lowered.copy()
        (_core.make_io_int8 if io == "int8" else _core.make_io_int16)(lowered)
    _core.check_runnable(lowered)
    patch_plan = None
    if arena_limit is not None:
        if layout is not None:
            raise ValueError(f"to_program: arena_limit = {arena_limit!r} needs the planner's layout (layout=None), "
                             f"got layout = {layout!r}")
        patch_plan = fit(lowered, arena_limit, target, preserve_inputs)
        lowered = patch_plan.graph
    how, plan = "caller", None
    if layout is None:
        info = _core.planned_layout(lowered, target, preserve_inputs)
        if info["extra_scratch"] == 0:  # the arena is exactly the planner's plan
            plan = plan_memory(lowered, preserve_inputs=preserve_inputs)
        how = (f"planner ({info['policy']}): plan {info['plan_arena_size']} B, planner lower bound "
               f"{info['lower_bound']} B, + {info['extra_scratch']} B scratch the graph does not declare")
    elif layout == "sequential":
        how = "sequential (no reuse)"
    bundled = []
    for case in _as_cases(bundle_inputs):
        arrays = [np.ascontiguousarray(x.numpy() if hasattr(x, "numpy") else x) for x in case]
        if lowered is not graph_as_given:
            arrays = _quantized_inputs(graph_as_given, lowered, arrays)
        outs = lowered.run(*arrays)
        outs = list(outs) if isinstance(outs, tuple) else [outs]
        bundled.append((arrays, outs))
    data = _core.write_program(lowered, target, layout, bundled, preserve_inputs)
    program = Program(data, "program", plan, how)
    if patch_plan is not None:
        if program.arena_size > arena_limit:
            raise ValueError(f"to_program: arena_limit = {arena_limit} B: the program's arena is {program.arena_size} B "
                             f"({patch_plan}; + the scratch its kernels need beyond the plan)")
        patch_plan.arena_size = program.arena_size
        program.patch_plan = patch_plan
        if plan is not None and patch_plan.split is not None:
            plan.patches = str(patch_plan)
            plan.patch_of = {v.name: n.meta["patch"] for n in lowered.nodes if "patch" in n.meta for v in n.outputs}
    return program
