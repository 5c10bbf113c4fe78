"""Program files: a lowered graph serialized for the cortexm runtime (src/program/program.fbs).

``program = cortexm.to_program(lowered)`` writes the graph with its memory plan, ``program.run(x)``
runs it on the host runtime (the same C++ that runs on a Cortex-M), ``program.save(path)`` /
``cortexm.load_program(path)`` move it through a file.

This module is the Program wrapper; build.py builds programs from lowered graphs (to_program,
re-exported here), program_plan.py reads a program's memory plan back and draws it.
"""

from __future__ import annotations

import os

import numpy as np

from . import _core
from .atomic_write import write_file_atomically
from .escape import printable
from .export_c import export_c as _export_c
from .program_plan import Buffer, ProgramMemoryPlan, _plan_from_program  # Buffer: re-exported

# The FlatBuffers schema of program files (for flatc --json and other readers), installed with
# the package.
SCHEMA = os.path.join(os.path.dirname(__file__), "program.fbs")

__all__ = ["Program", "ProgramMemoryPlan", "to_program", "load_program", "write_file_atomically"]


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
    def op_state_size(self) -> int:
        """Bytes of per-op state (each op's kernel params decoded once at load, as TFLite Micro keeps
        its per-op data in its arena): what firmware gives Program::init_op_state beside the arena.
        The same on every core."""
        return self._loaded.op_state_size

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


def load_program(path: str | os.PathLike) -> Program:
    """Reads and verifies a program file; ValueError names the field of a bad file. path is a str or
    os.PathLike (TypeError otherwise) naming a regular file of at most 2^31 - 2 bytes, the loader's
    limit: a directory, device or FIFO, or a larger file, is an OSError before anything is read."""
    data = _core.read_program_file(path)
    return Program(data, os.fspath(path))


# to_program builds Programs (build.py imports this module): re-exported for
# `from cortexm.program import to_program`, once Program is defined.
from .build import IO_KINDS, lowered_target, to_program  # noqa: E402
