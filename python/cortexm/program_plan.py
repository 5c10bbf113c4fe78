"""A program's arena plan read back from the program file (Program.memory_plan() of a loaded
program): its buffers with their lifetimes, the table and the plots (cortexm.memory_plan draws them)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

from .escape import printable
from .memory_plan import STEPS_PER_ROW, Box, html_page, write_plot

__all__ = ["Buffer", "ProgramMemoryPlan"]


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
