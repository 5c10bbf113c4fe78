"""Memory plans: where every tensor and scratch buffer of a lowered graph lives in one arena.

``cortexm.plan_memory(lowered)`` plans a graph (src/planner, see docs/memory_planning.md) and returns
a :class:`MemoryPlan`: the arena size, the lower bound (the peak over steps of the aligned bytes
live at that step, in the plan's model of execution: "in-place" when ops proved safe write over
their dying input, "tensor-level" when every op holds its whole inputs and output), the
tensor-level bound, the placement policy that won, one :class:`Buffer` row per tensor and scratch
buffer, a text table and a PNG timeline.
"""

from __future__ import annotations

import io
import operator
import os
from dataclasses import dataclass
from typing import Optional, Sequence

from . import _core

__all__ = ["Buffer", "MemoryPlan", "plan_memory", "placement_policies"]

PATCH_EDGE = "#dd8452"  # the plot's outline of tensors made patch by patch


@dataclass(frozen=True)
class Buffer:
    """One row of a memory plan: a tensor (input, intermediate, output) or a node's scratch.

    ``first``/``last`` are the steps (positions in execution order, inclusive) it is live;
    ``alias_of`` names the tensor whose bytes it shares (view/squeeze/unsqueeze, or the input an
    in-place op wrote over: then ``in_place`` is True), else None.
    """

    name: str
    op: str  # the producing op ("input" for graph inputs; the owning op for scratch)
    shape: tuple
    dtype: str
    offset: int
    size: int  # bytes, not rounded up to the alignment
    first: int
    last: int
    alias_of: Optional[str]
    kind: str  # "input", "intermediate", "output" or "scratch"
    value_id: int = -1  # graph value id; -1 for scratch
    node_index: int = -1  # step of the producing (or owning) node; -1 for graph inputs
    in_place: bool = False  # its op wrote it over alias_of's bytes (that input died there)


class MemoryPlan:
    """A planned arena. Build one with :func:`plan_memory` (or from rows, e.g. a program's)."""

    def __init__(
        self,
        arena_size: int,
        lower_bound: int,
        buffers: Sequence[Buffer],
        *,
        alignment: int = 16,
        policy: str = "",
        num_steps: int = 0,
        in_place: bool = False,
        tensor_level_bound: Optional[int] = None,
    ):
        self.arena_size = int(arena_size)
        self.lower_bound = int(lower_bound)
        self.alignment = int(alignment)
        self.policy = policy
        self.num_steps = int(num_steps)
        self.buffers = list(buffers)
        self.in_place = bool(in_place)
        self.tensor_level_bound = int(self.lower_bound if tensor_level_bound is None else tensor_level_bound)
        #: the patch plan of a program made with to_program(arena_limit=...), and each patched
        #: tensor's patch ("row,col", or "join" for the cats assembling the split tensor)
        self.patches: Optional[str] = None
        self.patch_of: dict = {}

    @property
    def lower_bound_model(self) -> str:
        """The model of execution lower_bound bounds: "in-place" (ops proved safe write over their
        dying input) or "tensor-level" (every op holds its whole inputs and output)."""
        return "in-place" if self.in_place else "tensor-level"

    @classmethod
    def _from_core(cls, d: dict) -> "MemoryPlan":
        rows = [Buffer(**v) for v in d["values"]]
        for s in d["scratch"]:
            step = s["node_index"]
            rows.append(
                Buffer(
                    name=s["name"], op=s["op"], shape=(s["size"],), dtype="uint8", offset=s["offset"],
                    size=s["size"], first=step, last=step, alias_of=None, kind="scratch",
                    node_index=step,
                )
            )
        return cls(
            d["arena_size"], d["lower_bound"], rows, alignment=d["alignment"], policy=d["policy"],
            num_steps=d["num_steps"], in_place=d["in_place"], tensor_level_bound=d["tensor_level_bound"],
        )

    @property
    def ratio(self) -> float:
        """arena_size / lower_bound (1.0 when the plan is optimal; 1.0 for an empty plan)."""
        return self.arena_size / self.lower_bound if self.lower_bound else 1.0

    @property
    def scratch(self) -> list:
        return [b for b in self.buffers if b.kind == "scratch"]

    @property
    def tensors(self) -> list:
        return [b for b in self.buffers if b.kind != "scratch"]

    def check(self) -> str:
        """'' if the plan is consistent (aligned, inside the arena, no two buffers live at the same
        step overlapping, aliases inside their root), else the first problem."""
        ids = {b.name: b.value_id for b in self.tensors}
        values = []
        for b in self.tensors:
            if b.alias_of is not None and b.alias_of not in ids:
                return f"{b.name} aliases {b.alias_of!r}, which is not in the plan"
            alias = ids[b.alias_of] if b.alias_of is not None else -1
            values.append((b.value_id, b.offset, b.size, alias, b.first, b.last, b.in_place))
        scratch = [(b.node_index, b.offset, b.size) for b in self.scratch]
        return _core.check_memory_plan(
            self.arena_size, self.lower_bound, self.alignment, self.num_steps, values, scratch
        )

    def verify(self) -> None:
        """Raises ValueError naming the first problem :meth:`check` finds."""
        problem = self.check()
        if problem:
            raise ValueError(f"memory plan: {problem}")

    def table(self) -> str:
        """A readable table: one row per buffer by offset, then by step."""
        head = (
            f"memory plan: arena {self.arena_size} B, lower bound {self.lower_bound} B "
            f"({self.lower_bound_model}, x{self.ratio:.3f}), tensor-level bound {self.tensor_level_bound} B, "
            f"alignment {self.alignment}, policy {self.policy}, "
            f"{self.num_steps} steps, {len(self.tensors)} tensors "
            f"({sum(b.alias_of is not None and not b.in_place for b in self.tensors)} aliases, "
            f"{sum(b.in_place for b in self.tensors)} in place), "
            f"{len(self.scratch)} scratch"
        )
        header = ("offset", "size", "steps", "kind", "name", "op", "shape", "dtype", "alias of")
        if self.patch_of:
            head += "\n" + self.patches
            header += ("patch",)
        rows = [header]
        for b in sorted(self.buffers, key=lambda b: (b.offset, b.first, b.last, b.name)):
            rows.append(
                (
                    str(b.offset), str(b.size), f"{b.first}-{b.last}", b.kind, b.name, b.op,
                    "[" + ", ".join(str(d) for d in b.shape) + "]", b.dtype,
                    f"{b.alias_of} (in place)" if b.in_place else b.alias_of or "",
                ) + ((self.patch_of.get(b.name, ""),) if self.patch_of else ())
            )
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        right = {0, 1}
        lines = [head]
        for r in rows:
            cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
            lines.append("  ".join(cells).rstrip())
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return (
            f"<MemoryPlan arena={self.arena_size} lower_bound={self.lower_bound} "
            f"policy={self.policy!r} buffers={len(self.buffers)}>"
        )

    def plot(self, path, title: Optional[str] = None) -> None:
        """Writes a timeline of the buffers (x = step, y = arena offset) as an image (PNG unless the
        path says otherwise), atomically: a temporary file renamed over ``path``."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.patches import Rectangle

        colors = {"input": "#4c72b0", "intermediate": "#55a868", "output": "#c44e52", "scratch": "#8172b2"}
        steps = max(self.num_steps, 1)
        fig = Figure(figsize=(min(6 + steps * 0.12, 32), 6), dpi=100)  # Agg, no pyplot state
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        for b in self.buffers:
            if b.size == 0:
                continue
            aliased = b.alias_of is not None
            ax.add_patch(
                Rectangle(
                    (b.first, b.offset), b.last - b.first + 1, b.size,
                    facecolor="none" if aliased else colors.get(b.kind, "#999999"),
                    edgecolor=PATCH_EDGE if b.name in self.patch_of else "black",
                    linewidth=1.0 if b.name in self.patch_of else 0.4,
                    hatch=("xx" if b.in_place else "//") if aliased else None,
                    alpha=1.0 if aliased else 0.8,
                )
            )
        ax.axhline(self.arena_size, color="black", linewidth=1, label=f"arena {self.arena_size} B")
        ax.axhline(self.lower_bound, color="gray", linestyle="--", linewidth=1,
                   label=f"lower bound {self.lower_bound} B ({self.lower_bound_model})")
        if self.tensor_level_bound != self.lower_bound:
            ax.axhline(self.tensor_level_bound, color="gray", linestyle=":", linewidth=1,
                       label=f"tensor-level bound {self.tensor_level_bound} B")
        for kind, color in colors.items():
            if any(b.kind == kind for b in self.buffers):
                ax.add_patch(Rectangle((0, 0), 0, 0, facecolor=color, label=kind))
        if any(b.alias_of is not None and not b.in_place for b in self.buffers):
            ax.add_patch(Rectangle((0, 0), 0, 0, facecolor="none", hatch="//", label="alias"))
        if any(b.in_place for b in self.buffers):
            ax.add_patch(Rectangle((0, 0), 0, 0, facecolor="none", hatch="xx", label="in place"))
        if self.patch_of:
            ax.add_patch(Rectangle((0, 0), 0, 0, facecolor="none", edgecolor=PATCH_EDGE, label="patch by patch"))
        ax.set_xlim(0, steps)
        ax.set_ylim(0, max(self.arena_size, 1) * 1.05)
        ax.set_xlabel("step (node in execution order)")
        ax.set_ylabel("arena offset (bytes)")
        ax.set_title(title or f"memory plan ({self.policy}): arena {self.arena_size} B, "
                     f"lower bound {self.lower_bound} B ({self.lower_bound_model})")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
        fig.tight_layout()

        path = os.fspath(path)
        ext = os.path.splitext(path)[1].lstrip(".").lower() or "png"
        image = io.BytesIO()
        fig.savefig(image, format=ext)
        _core.write_file_atomically(path, image.getvalue())


def plan_memory(graph, alignment: int = 16, policy: Optional[str] = None, in_place: bool = True) -> MemoryPlan:
    """Plans the memory of a lowered graph in its execution order (see docs/memory_planning.md).

    ``policy`` None tries every placement policy and keeps the smallest arena; a name from
    :func:`placement_policies` forces one. ``in_place`` lets element-wise ops whose input dies at
    them write their output over it, and depthwise convs from their kernel's lag below it where
    that shrinks the arena, when the planner proves it legal (programs run that way); False plans
    at tensor level. Raises ValueError for a bad alignment, policy or order.
    """
    if not isinstance(in_place, bool):
        raise ValueError(f"plan_memory: in_place = {in_place!r} must be a bool")
    try:
        if isinstance(alignment, bool):
            raise TypeError
        alignment = operator.index(alignment)  # an int or numpy integer; a float is not truncated
    except TypeError:
        raise ValueError(f"plan_memory: alignment = {alignment!r} must be an int") from None
    if not -(2**63) <= alignment < 2**63:
        raise ValueError(f"plan_memory: alignment = {alignment} does not fit in int64")
    return MemoryPlan._from_core(_core.plan_memory(graph, alignment, policy, in_place))


def placement_policies() -> list:
    """Names of the placement policies, in the order plan_memory tries them."""
    return list(_core.placement_policies())
