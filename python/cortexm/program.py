"""Program files: a lowered graph serialized for the cortexm runtime (src/program/program.fbs).

``program = cortexm.to_program(lowered)`` writes the graph with its memory plan, ``program.run(x)``
runs it on the host runtime (the same C++ that runs on a Cortex-M), ``program.save(path)`` /
``cortexm.load_program(path)`` move it through a file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from . import _core
from ._core import Graph
from .atomic_write import write_file_atomically
from .escape import printable
from .export_c import export_c as _export_c
from .memory_plan import STEPS_PER_ROW, Box, html_page, plan_memory, write_plot
from .patches import fit

# The FlatBuffers schema of program files (for flatc --json and other readers), installed with
# the package.
SCHEMA = os.path.join(os.path.dirname(__file__), "program.fbs")

__all__ = ["Program", "ProgramMemoryPlan", "to_program", "load_program", "write_file_atomically"]


@dataclass(frozen=True)
class Buffer:
    """One arena buffer of a program: a tensor (or an op's scratch) and the op steps it is live."""

    name: str
    offset: int
    size: int
    first: int  # first op step it is live (-1: a graph input, live before the first op)
    last: int  # last op step it is live
    kind: str  # "input", "value", "output", "scratch"
    alias_of: str | None = None  # a view planned onto another tensor's bytes
    # A depthwise or pointwise conv output written over its dying input from below it: (that input, the lag in bytes,
    # the bytes the two share at the op's step).
    in_place_over: tuple[str, int, int] | None = None
    # A root whose aliases outlive it: the last step its own bytes are read (a quantize's int8 output
    # written over its dying float input keeps only its own bytes live after), else None: all of last.
    own_last: int | None = None
    written_over: bool = False  # an op (not a view) wrote this alias over its root's bytes


class ProgramMemoryPlan:
    """The arena of a program as placed: buffers, lifetimes, arena size and the lower bound (the
    largest sum of live bytes at any op step; no placement can use less)."""

    def __init__(self, buffers: list[Buffer], arena_size: int, num_ops: int, op_names: Sequence[str] = ()):
        self.buffers = buffers
        self.arena_size = arena_size
        self.num_ops = num_ops
        self.op_names = list(op_names)  # per op step
        live = [0] * max(num_ops, 1)
        aliases: dict[str, list[Buffer]] = {}
        for b in buffers:
            if b.alias_of is not None:
                aliases.setdefault(b.alias_of, []).append(b)
        for b in buffers:
            if b.alias_of is not None:
                continue
            own_last = b.last if b.own_last is None else b.own_last
            for step in range(max(b.first, 0), b.last + 1):
                # Aliases start at the root's first byte: the group holds its largest live member.
                live[step] += max([b.size] * (step <= own_last) +
                                  [a.size for a in aliases.get(b.name, ()) if a.first <= step <= a.last] + [0])
            if b.in_place_over is not None:  # its bytes over its input's count once at its step
                live[b.first] -= b.in_place_over[2]
        self.lower_bound = max(live) if buffers else 0

    def table(self) -> str:
        rows = [f"{'buffer':<40} {'kind':<8} {'offset':>10} {'size':>10} {'live':>12}  alias"]
        inputs = {b.name for b in self.buffers if b.kind == "input"}
        for b in sorted(self.buffers, key=lambda b: (b.offset, b.first)):
            over_input = b.alias_of in inputs and b.written_over
            rows.append(f"{printable(b.name)[:40]:<40} {b.kind:<8} {b.offset:>10} {b.size:>10} "
                        f"{f'{b.first}..{b.last}':>12}  {printable(b.alias_of or '')}"
                        + (" (over a graph input: set inputs before every run)" if over_input else "")
                        + (f"{printable(b.in_place_over[0])} (in place, {b.in_place_over[1]} B below)"
                           if b.in_place_over else ""))
        rows.append(f"arena {self.arena_size} bytes, lower bound {self.lower_bound} bytes "
                    f"({self.arena_size - self.lower_bound} above it)")
        return "\n".join(rows)

    def __str__(self):
        return self.table()

    def boxes(self) -> list:
        """The buffers as cortexm.memory_plan draws them (step -1: before the first op)."""
        kinds = {"value": "intermediate"}
        boxes = []
        for b in self.buffers:
            detail = f"{b.kind} {b.name}: {b.size} B at {b.offset}, steps {b.first}-{b.last}"
            if b.alias_of is not None:
                detail += f", alias of {b.alias_of}"
            if b.in_place_over is not None:
                detail += f", written in place over {b.in_place_over[0]} from {b.in_place_over[1]} B below it"
            boxes.append(Box(b.name, kinds.get(b.kind, b.kind), b.offset, b.size, b.first, b.last,
                             "alias" if b.alias_of is not None else "in place" if b.in_place_over else "", detail))
        return boxes

    def plot(self, path: str | os.PathLike, title: str | None = None, steps_per_row: int | None = None) -> None:
        """The timeline (x = op step, y = arena offset), written atomically: a PNG (or the format the
        extension names) in rows of steps_per_row steps, or for a .html path a self-contained page;
        see cortexm.memory_plan.plot_boxes / html_page."""
        write_plot(path, self.boxes(), self.arena_size, dict(enumerate(self.op_names)),
                   title or f"arena {self.arena_size} B, lower bound {self.lower_bound} B",
                   [(f"lower bound {self.lower_bound} B", self.lower_bound)],
                   STEPS_PER_ROW if steps_per_row is None else steps_per_row, self.table())

    def to_html(self, title: str | None = None) -> str:
        return html_page(self.boxes(), self.arena_size, dict(enumerate(self.op_names)),
                         title or f"arena {self.arena_size} B, lower bound {self.lower_bound} B",
                         [(f"lower bound {self.lower_bound} B", self.lower_bound)], self.table())


def _plan_from_program(loaded) -> ProgramMemoryPlan:
    tensors = {t["index"]: t for t in loaded.tensors()}
    ops = loaded.ops()
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for step, op in enumerate(ops):
        for t in op["outputs"]:
            first.setdefault(t, step)
            last[t] = max(last.get(t, step), step)
        for t in op["inputs"]:
            if t >= 0:
                last[t] = max(last.get(t, step), step)
    inputs = {t["index"] for t in loaded.inputs}
    outputs = {t["index"] for t in loaded.outputs}
    end = max(len(ops) - 1, 0)
    # An output at an input's offset shares its bytes: a view, or an op run in place over an input
    # that dies there (the loader accepts no other overlap of an op's output with its inputs).
    alias: dict[int, int] = {}
    written_over = set()  # aliases an op in place wrote (not a view)
    for op in ops:
        dst = op["outputs"][0] if op["outputs"] else -1
        for src in op["inputs"]:
            if src >= 0 and dst >= 0 and tensors[src]["location"] == "arena" and \
                    tensors[src]["offset"] == tensors[dst]["offset"] and tensors[dst]["nbytes"] > 0:
                alias[dst] = alias.get(src, src)
                if op["kernel"] != "View":
                    written_over.add(dst)
                break
    # An output starting below an input it overlaps: a depthwise or pointwise conv written over its input from the
    # kernel's lag below it (the loader checked the lag).
    below: dict[int, tuple[str, int, int]] = {}
    for op in ops:
        dst = op["outputs"][0] if op["outputs"] else -1
        src = op["inputs"][0] if op["inputs"] else -1
        if dst < 0 or src < 0 or dst in alias or tensors[src]["location"] != "arena":
            continue
        d, s_ = tensors[dst], tensors[src]
        shared = min(d["offset"] + d["nbytes"], s_["offset"] + s_["nbytes"]) - max(d["offset"], s_["offset"])
        if d["offset"] < s_["offset"] and shared > 0:
            below[dst] = (s_["name"], s_["offset"] - d["offset"], shared)
    span: dict[int, list[int]] = {}
    for i, t in tensors.items():
        if t["location"] != "arena":
            continue
        start = -1 if i in inputs else first.get(i, 0)
        stop = end if i in outputs else last.get(i, start)
        owner = alias.get(i, i)
        lo, hi = span.get(owner, [start, stop])
        span[owner] = [min(lo, start), max(hi, stop)]
    buffers = []
    for i, t in tensors.items():
        if t["location"] != "arena":
            continue
        kind = "input" if i in inputs else "output" if i in outputs else "value"
        if i in alias:
            start = -1 if i in inputs else first.get(i, 0)
            stop = end if i in outputs else last.get(i, start)
            buffers.append(Buffer(t["name"], t["offset"], t["nbytes"], start, stop, kind,
                                  tensors[alias[i]]["name"], written_over=i in written_over))
        else:
            own_last = end if i in outputs else last.get(i, -1 if i in inputs else first.get(i, 0))
            buffers.append(Buffer(t["name"], t["offset"], t["nbytes"], span[i][0], span[i][1], kind,
                                  in_place_over=below.get(i), own_last=own_last if own_last < span[i][1] else None))
    for step, op in enumerate(ops):
        if op["scratch_size"]:
            buffers.append(Buffer(f"{op['name']} scratch", op["scratch_offset"], op["scratch_size"],
                                  step, step, "scratch"))
    return ProgramMemoryPlan(buffers, loaded.arena_size, len(ops), [op["name"] for op in ops])


class Program:
    """A program on the host runtime. Build one with cortexm.to_program or cortexm.load_program."""

    def __init__(self, data: bytes, origin: str = "program", plan=None, layout: str = "as stored"):
        self._data = bytes(data)
        self._loaded = _core.LoadedProgram(self._data, origin)
        self._plan = plan
        #: to_program(arena_limit=...)'s choice (cortexm.patches.PatchPlan), else None
        self.patch_plan = None
        #: how the arena was placed: "planner", "caller", "sequential (no reuse)" or "as stored"
        self.layout = layout

    @property
    def data(self) -> bytes:
        return self._data

    @property
    def arena_size(self) -> int:
        """Arena bytes on the core the program was written for (its target's kernels)."""
        return self._loaded.arena_size

    @property
    def scalar_arena_size(self) -> int:
        """Arena bytes with the portable scalar kernels (the host runtime, a core without DSP or
        MVE): arena_size plus the scratch they need beyond the target's plan, if any."""
        return self._loaded.required_arena_size

    @property
    def constant_size(self) -> int:
        return self._loaded.constant_size

    @property
    def num_ops(self) -> int:
        return self._loaded.num_ops

    @property
    def float_ops(self) -> int:
        """Ops that run as float fallback (not lowered to int8 kernels)."""
        return self._loaded.float_ops

    @property
    def target(self) -> str:
        return self._loaded.target

    @property
    def inputs(self):
        return self._loaded.inputs

    @property
    def outputs(self):
        return self._loaded.outputs

    def ops(self):
        return self._loaded.ops()

    def tensors(self):
        return self._loaded.tensors()

    def run(self, *inputs):
        """Runs the program on numpy inputs (logical shapes, as the graph takes them); returns one
        array, or a tuple for several outputs."""
        outs = self._loaded.run([np.asarray(x) for x in inputs])
        return outs[0] if len(outs) == 1 else tuple(outs)

    def run_batch(self, cases, threads: int | None = None) -> list:
        """Runs the program on many cases at once: `cases` is an iterable of input tuples (or of
        single arrays, for a one-input program). They are spread over `threads` threads (default:
        the CPUs this process may use; at most 256, and no more than there are cases), each on an
        arena of its own, the kernels running with the GIL released. Returns what run(*case) returns
        for each case, in order, bit-identical with one-by-one runs. A thread the OS cannot start is a
        RuntimeError naming the count."""
        one_input = len(self._loaded.inputs) == 1
        lists = []
        for case in cases:
            if one_input and not isinstance(case, (tuple, list)):
                case = (case,)
            lists.append([np.asarray(x) for x in case])
        if threads is None:
            threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"run_batch: threads = {threads!r} must be an int >= 1")
        return [outs[0] if len(outs) == 1 else tuple(outs) for outs in self._loaded.run_batch(lists, threads)]

    def profile(self, *inputs):
        """Runs once and returns [(op name, kernel, seconds)] measured around each op on the host."""
        _, stats = self._loaded.run_profiled([np.asarray(x) for x in inputs])
        return [(op["name"], op["kernel"], s) for op, s in zip(self._loaded.ops(), stats["seconds"])]

    def bundled(self):
        """The bundled cases: [(inputs, expected outputs)]."""
        return self._loaded.bundled()

    def verify(self) -> int:
        """Runs every bundled case and checks the outputs equal the expected ones bit for bit.
        Returns the number of cases; raises ValueError naming the case and output that differs."""
        cases = self._loaded.bundled()
        if not cases:
            raise ValueError("the program has no bundled inputs to verify (to_program(..., bundle_inputs=...))")
        for c, (ins, expected) in enumerate(cases):
            outs = self._loaded.run(list(ins))
            for k, (got, want) in enumerate(zip(outs, expected)):
                if got.tobytes() != want.tobytes():
                    diff = np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))
                    raise ValueError(f"bundled case {c}: output {k} differs from the expected output "
                                     f"(max abs difference {diff})")
        return len(cases)

    def memory_plan(self):
        """The arena plan: the planner's MemoryPlan when the program was made from a graph with it,
        otherwise the plan read back from the program (buffers, lifetimes, lower bound, table, plot)."""
        if self._plan is not None:
            return self._plan
        return _plan_from_program(self._loaded)

    def save(self, path: str | os.PathLike) -> None:
        write_file_atomically(path, self._data, "Program.save: path")

    def export_c(self, dir: str | os.PathLike, name: str | None = None) -> dict:
        """Writes the program as C for firmware: <name>_program.c (the bytes, 16-byte aligned, in
        section .rodata.cortexm_program), <name>_program.h (sizes, inputs, outputs), <name>_ops.cc
        (the resolver of exactly the program's kernels: no other kernel is linked), main.cc (load,
        run, compare the bundled outputs: PASS / FAIL), cortexm.cmake and CMakeLists.txt, as one
        set: dir is replaced in one step by a new directory holding them (and dir's other entries,
        moved over), never a mix of old and new files. name (default "model") must be a C
        identifier; dir is created when missing and cannot be the current directory.
        Returns {kind: path}. See cortexm.export_c and docs/program.md."""
        return _export_c(self, dir, name)

    def summary(self) -> str:
        text = (f"program for {printable(self.target)}: {self.num_ops} ops ({self.float_ops} float fallback), "
                f"arena {self.arena_size} bytes, constants {self.constant_size} bytes")
        return text + (f"; {printable(self.patch_plan)}" if self.patch_plan is not None else "")

    def __repr__(self):
        return f"<cortexm.Program {self.summary()}>"


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


IO_KINDS = ("float", "int8")


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
    quantized at the boundary.
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
    if io == "int8":
        lowered = lowered.copy()
        _core.make_io_int8(lowered)
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


def load_program(path: str | os.PathLike) -> Program:
    """Reads and verifies a program file; ValueError names the field of a bad file. path is a str or
    os.PathLike (TypeError otherwise) naming a regular file of at most 2^31 - 2 bytes, the loader's
    limit: a directory, device or FIFO, or a larger file, is an OSError before anything is read."""
    data = _core.read_program_file(path)
    return Program(data, os.fspath(path))
