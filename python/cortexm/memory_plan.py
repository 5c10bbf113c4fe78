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
from html import escape
from dataclasses import dataclass
from typing import Optional, Sequence

from . import _core
from .escape import printable

__all__ = ["Box", "Buffer", "MemoryPlan", "plan_memory", "placement_policies"]

# Long models are drawn in rows of this many steps (a row per page width), so that every step keeps
# room for its node's name and no buffer is merged into an aggregate: the plot shows each one.
STEPS_PER_ROW = 40
COLORS = {"input": "#4c72b0", "intermediate": "#55a868", "output": "#c44e52", "scratch": "#8172b2"}
# Buffers thinner than this fraction of the arena are drawn this thick (a 48-byte output of a 16 KB
# arena would be under a pixel).
MIN_HEIGHT = 0.012

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
    def consumed_inputs(self) -> list:
        """Names of the graph inputs an op wrote over once they were dead (a run consumes them:
        set inputs before every run, or plan with preserve_inputs=True)."""
        inputs = {b.name for b in self.tensors if b.kind == "input"}
        return sorted({b.alias_of for b in self.tensors if b.in_place and b.alias_of in inputs})

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
        if self.consumed_inputs:
            head += (f"\ngraph inputs written over by the run (set them before every run): "
                     f"{', '.join(map(printable, self.consumed_inputs))}")
        header = ("offset", "size", "steps", "kind", "name", "op", "shape", "dtype", "alias of")
        if self.patch_of:
            head += "\n" + printable(self.patches)
            header += ("patch",)
        rows = [header]
        inputs = {b.name for b in self.tensors if b.kind == "input"}
        for b in sorted(self.buffers, key=lambda b: (b.offset, b.first, b.last, b.name)):
            rows.append(
                (
                    str(b.offset), str(b.size), f"{b.first}-{b.last}", b.kind, printable(b.name), printable(b.op),
                    "[" + ", ".join(str(d) for d in b.shape) + "]", b.dtype,
                    (f"{printable(b.alias_of)} (in place{', an input' if b.alias_of in inputs else ''})"
                     if b.in_place else printable(b.alias_of or "")),
                ) + ((printable(self.patch_of.get(b.name, "")),) if self.patch_of else ())
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

    def boxes(self) -> list:
        """The buffers as drawn by plot / to_html (see :class:`Box`)."""
        boxes = []
        for b in self.buffers:
            detail = (f"{b.kind} {b.name}: {b.op}, {b.dtype}[{', '.join(map(str, b.shape))}], "
                      f"{b.size} B at {b.offset}, steps {b.first}-{b.last}")
            if b.alias_of is not None:
                detail += f", {'written in place over' if b.in_place else 'alias of'} {b.alias_of}"
            patch = self.patch_of.get(b.name, "")
            if patch:
                detail += f", patch {patch}" if patch != "join" else ", the join of its patches"
            boxes.append(Box(b.name, b.kind, b.offset, b.size, b.first, b.last,
                             "in place" if b.in_place else "alias" if b.alias_of is not None else "", detail,
                             patch))
        return boxes

    def step_names(self) -> dict:
        """{step: name of the node run there} (its output's or scratch's name)."""
        names = {}
        for b in sorted(self.buffers, key=lambda b: b.kind == "scratch"):
            if b.node_index >= 0:
                names.setdefault(b.node_index, b.name.removesuffix(".scratch"))
        return names

    def _title(self) -> str:
        return (f"memory plan ({self.policy}): arena {self.arena_size} B, "
                f"lower bound {self.lower_bound} B ({self.lower_bound_model})")

    def plot(self, path, title: Optional[str] = None, steps_per_row: int = STEPS_PER_ROW) -> None:
        """Writes the timeline of the buffers (x = step, y = arena offset), atomically: a PNG (or the
        image format the path's extension names; see :func:`plot_boxes`), or, for a path ending in
        .html, the page :meth:`to_html` gives."""
        write_plot(path, self.boxes(), self.arena_size, self.step_names(), title or self._title(),
                   _bounds(self), steps_per_row, self.table())

    def to_html(self, title: Optional[str] = None) -> str:
        """A self-contained HTML page (inline SVG and CSS, nothing fetched) of the timeline, scrolling
        sideways for long models, each buffer named and described when hovered, then the table."""
        return html_page(self.boxes(), self.arena_size, self.step_names(), title or self._title(),
                         _bounds(self), self.table())


def _bounds(plan) -> list:
    bounds = [(f"lower bound {plan.lower_bound} B ({plan.lower_bound_model})", plan.lower_bound)]
    if plan.tensor_level_bound != plan.lower_bound:
        bounds.append((f"tensor-level bound {plan.tensor_level_bound} B", plan.tensor_level_bound))
    return bounds


@dataclass(frozen=True)
class Box:
    """A buffer as drawn: live over steps first..last (inclusive), bytes [offset, offset + size)."""

    name: str
    kind: str  # "input", "intermediate", "output" or "scratch"
    offset: int
    size: int
    first: int
    last: int
    shares: str  # "" (bytes of its own), "alias" or "in place" (over another buffer's bytes)
    detail: str  # one line saying what it is
    patch: str = ""  # made patch by patch: "row,col" of its patch, "join" for the cat of them




def _check_steps_per_row(steps_per_row) -> int:
    if isinstance(steps_per_row, bool) or not isinstance(steps_per_row, int) or steps_per_row < 1:
        raise ValueError(f"plot: steps_per_row = {steps_per_row!r} must be an int >= 1")
    return steps_per_row


def write_plot(path, boxes, arena_size: int, step_names: dict, title: str, bounds=(),
               steps_per_row: int = STEPS_PER_ROW, table: str = "") -> None:
    """A .html path gets html_page (with the table), any other plot_boxes' image; written atomically."""
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lstrip(".").lower() or "png"
    if ext in ("html", "htm"):
        data = html_page(boxes, arena_size, step_names, title, bounds, table).encode("utf-8")
    else:
        data = plot_boxes(boxes, arena_size, step_names, title, bounds, ext, _check_steps_per_row(steps_per_row))
    _core.write_file_atomically(path, data)


def plot_boxes(boxes, arena_size: int, step_names: dict, title: str, bounds=(), fmt: str = "png",
               steps_per_row: int = STEPS_PER_ROW) -> bytes:
    """The timeline (timeline_figure's) as an image in format fmt."""
    image = io.BytesIO()
    timeline_figure(boxes, arena_size, step_names, title, bounds, steps_per_row).savefig(image, format=fmt)
    return image.getvalue()


def timeline_figure(boxes, arena_size: int, step_names: dict, title: str, bounds=(),
                    steps_per_row: int = STEPS_PER_ROW):
    """The timeline as a matplotlib Figure (Agg): one panel per steps_per_row steps, stacked; each step's node named
    under it; buffers named inside when they have room, model inputs and outputs always (beside a
    thin one); inputs and outputs outlined thick; aliases hatched //, in-place outputs xx over their
    color; a buffer thinner than MIN_HEIGHT of the arena drawn that thick."""
    # Rows of steps rather than aggregates: every buffer stays drawn and named (inside it, or in the
    # HTML page's hover text), and a step keeps ~0.3 inch for its node's name however long the model.
    # matplotlib is slow to import: only plots load it.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    first = min([b.first for b in boxes] + [0])
    last = max([b.last for b in boxes] + list(step_names) + [first])
    steps = last - first + 1
    rows = -(-steps // steps_per_row)
    top = max(arena_size, 1)
    min_height = top * MIN_HEIGHT
    width = 3 + 0.32 * min(steps, steps_per_row)
    fig = Figure(figsize=(max(width, 8), 4.6 * rows + 0.6), dpi=100)  # Agg, no pyplot state
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, 1, squeeze=False)[:, 0]
    order = sorted(boxes, key=lambda b: -b.size)  # small ones drawn last, over big ones
    for row, ax in enumerate(axes):
        lo = first + row * steps_per_row
        hi = min(lo + steps_per_row, last + 1)  # steps [lo, hi)
        for b in order:
            if b.size == 0 or b.last < lo or b.first >= hi:
                continue
            x0, x1 = max(b.first, lo), min(b.last + 1, hi)
            height = max(b.size, min_height)
            boundary = b.kind in ("input", "output")
            box = ax.add_patch(Rectangle(
                (x0, b.offset), x1 - x0, height,
                facecolor="none" if b.shares == "alias" else COLORS.get(b.kind, "#999999"),
                edgecolor=PATCH_EDGE if b.patch else "black",
                linewidth=1.6 if boundary else 1.0 if b.patch else 0.4, alpha=1.0 if b.shares else 0.8,
                hatch={"alias": "//", "in place": "xx"}.get(b.shares)))
            if height >= top * 0.05:  # named inside, cut at its edges
                ax.text(x0 + 0.1, b.offset + height / 2, b.name, fontsize=6, va="center", ha="left",
                        clip_on=True).set_clip_path(box)
            elif boundary:  # a thin input / output: named just above it
                at_end = x1 >= hi - 1
                ax.text(x1 - 0.1 if at_end else x0 + 0.1, b.offset + height, b.name, fontsize=6, va="bottom",
                        ha="right" if at_end else "left", color=COLORS[b.kind], clip_on=True,
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
        for label, value in [(f"arena {arena_size} B", arena_size), *bounds]:
            style = {"color": "black", "linewidth": 1} if value == arena_size and label.startswith("arena") else \
                {"color": "gray", "linestyle": "--" if "lower" in label else ":", "linewidth": 1}
            ax.axhline(value, label=label, **style)
        ax.set_xlim(lo, lo + steps_per_row if rows > 1 else hi)
        ax.set_ylim(0, top * 1.05)
        ticks = list(range(lo, hi))
        ax.set_xticks([t + 0.5 for t in ticks])
        ax.set_xticklabels([f"{t} {step_names.get(t, '')}"[:32] for t in ticks], rotation=90, fontsize=6)
        ax.set_ylabel("arena offset (bytes)")
    for kind, color in COLORS.items():
        if any(b.kind == kind for b in boxes):
            axes[0].add_patch(Rectangle((0, 0), 0, 0, facecolor=color, label=kind))
    for shares, hatch in (("alias", "//"), ("in place", "xx")):
        if any(b.shares == shares for b in boxes):
            axes[0].add_patch(Rectangle((0, 0), 0, 0, facecolor="none", hatch=hatch, label=shares))
    if any(b.patch for b in boxes):
        axes[0].add_patch(Rectangle((0, 0), 0, 0, facecolor="none", edgecolor=PATCH_EDGE, label="patch by patch"))
    axes[0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    axes[0].set_title(title, loc="left", fontsize="medium")
    axes[-1].set_xlabel("step (node in execution order)")
    fig.tight_layout()
    return fig


def html_page(boxes, arena_size: int, step_names: dict, title: str, bounds=(), table: str = "") -> str:
    """A self-contained page: an inline SVG timeline (a column of STEP_PX pixels per step, so a long
    model scrolls sideways instead of shrinking), each buffer a rectangle titled with what it is
    (shown when hovered) and named inside when it has room, inputs and outputs outlined thick; then
    the plan's table."""
    first = min([b.first for b in boxes] + [0])
    last = max([b.last for b in boxes] + list(step_names) + [first])
    steps = last - first + 1
    step_px, plot_h, left, label_h, top_pad = 28, 520, 80, 190, 10
    width = left + steps * step_px + 20
    height = top_pad + plot_h + label_h
    top = max(arena_size, 1) * 1.05
    y = lambda offset: top_pad + plot_h * (1 - offset / top)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="10">',
             '<defs><pattern id="alias" width="6" height="6" patternUnits="userSpaceOnUse">'
             '<path d="M0,6 L6,0" stroke="black" stroke-width="0.7"/></pattern>'
             '<pattern id="inplace" width="6" height="6" patternUnits="userSpaceOnUse">'
             '<path d="M0,6 L6,0 M0,0 L6,6" stroke="black" stroke-width="0.7"/></pattern></defs>']
    for t in range(first, last + 1):
        x = left + (t - first) * step_px
        if (t - first) % 2:
            parts.append(f'<rect x="{x}" y="{top_pad}" width="{step_px}" height="{plot_h}" fill="#f4f4f4"/>')
        label = escape(f"{t} {step_names.get(t, '')}"[:34])
        parts.append(f'<text transform="translate({x + step_px / 2 + 3},{top_pad + plot_h + 6}) rotate(90)">'
                     f'{label}</text>')
    for k in range(6):
        offset = round(arena_size * k / 5)
        parts.append(f'<text x="{left - 6}" y="{y(offset) + 3:.1f}" text-anchor="end">{offset}</text>')
    for label, value in [(f"arena {arena_size} B", arena_size), *bounds]:
        dash = "" if label.startswith("arena") else ' stroke-dasharray="5,3"'
        parts.append(f'<line x1="{left}" x2="{width - 20}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
                     f'stroke="{"black" if not dash else "gray"}"{dash}><title>{escape(label)}</title></line>')
    min_px = 3.0
    for b in sorted(boxes, key=lambda b: -b.size):
        if b.size == 0:
            continue
        x = left + (b.first - first) * step_px
        w = (b.last - b.first + 1) * step_px
        h = max(plot_h * b.size / top, min_px)
        y0 = y(b.offset) - h
        boundary = b.kind in ("input", "output")
        fill = "url(#alias)" if b.shares == "alias" else COLORS.get(b.kind, "#999999")
        parts.append(f'<g class="buffer {b.kind}"><rect x="{x}" y="{y0:.1f}" width="{w}" height="{h:.1f}" '
                     f'fill="{fill}" fill-opacity="{1.0 if b.shares else 0.8}" '
                     f'stroke="{PATCH_EDGE if b.patch else "black"}" '
                     f'stroke-width="{2 if boundary else 1 if b.patch else 0.5}"><title>{escape(b.detail)}</title></rect>')
        if b.shares == "in place":
            parts.append(f'<rect x="{x}" y="{y0:.1f}" width="{w}" height="{h:.1f}" fill="url(#inplace)" '
                         f'pointer-events="none"/>')
        if h >= 12 and w >= 2 * step_px:
            parts.append(f'<text x="{x + 3}" y="{y0 + h / 2 + 3:.1f}" pointer-events="none">'
                         f'{escape(b.name[: max(int(w / 6), 1)])}</text>')
        elif boundary:
            parts.append(f'<text x="{x + w + 3}" y="{y0 + h / 2 + 3:.1f}" pointer-events="none">{escape(b.name)}</text>')
        parts.append("</g>")
    parts.append("</svg>")
    legend = " ".join(f'<span class="key" style="background:{c}"></span>{k}' for k, c in COLORS.items()
                      if any(b.kind == k for b in boxes))
    legend += " &nbsp; thick outline: model input / output; hatched //: alias (a view); xx: written in place"
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + escape(title) + "</title><style>"
            "body{font-family:sans-serif;margin:1em}.scroll{overflow-x:auto;border:1px solid #ccc}"
            ".key{display:inline-block;width:1em;height:1em;margin:0 .3em 0 1em;vertical-align:middle}"
            ".buffer:hover rect{stroke:#d00;stroke-width:2}pre{font-size:12px}</style></head><body>\n"
            f"<h3>{escape(title)}</h3><p>{legend}</p><p>Hover a buffer for its name, op, shape, offset, size "
            f"and steps.</p>\n<div class=\"scroll\">" + "".join(parts) + "</div>\n"
            + (f"<pre>{escape(table)}</pre>\n" if table else "") + "</body></html>\n")


def plan_memory(graph, alignment: int = 16, policy: Optional[str] = None, in_place: bool = True,
                preserve_inputs: bool = False) -> MemoryPlan:
    """Plans the memory of a lowered graph in its execution order (see docs/memory_planning.md).

    ``policy`` None tries every placement policy and keeps the smallest arena; a name from
    :func:`placement_policies` forces one. ``in_place`` lets element-wise ops whose input dies at
    them write their output over it, and depthwise and pointwise convs from their kernel's lag below it where
    that shrinks the arena, when the planner proves it legal (programs run that way); False plans
    at tensor level. A graph input's buffer is written over once it is dead (a run consumes its
    inputs, as in TFLite Micro's arena: set them before every run; MemoryPlan.consumed_inputs names
    them); ``preserve_inputs`` keeps every graph input intact through the run. Graph outputs are
    never written over. Raises ValueError for a bad alignment, policy or order.
    """
    if not isinstance(in_place, bool):
        raise ValueError(f"plan_memory: in_place = {in_place!r} must be a bool")
    if not isinstance(preserve_inputs, bool):
        raise ValueError(f"plan_memory: preserve_inputs = {preserve_inputs!r} must be a bool")
    try:
        if isinstance(alignment, bool):
            raise TypeError
        alignment = operator.index(alignment)  # an int or numpy integer; a float is not truncated
    except TypeError:
        raise ValueError(f"plan_memory: alignment = {alignment!r} must be an int") from None
    if not -(2**63) <= alignment < 2**63:
        raise ValueError(f"plan_memory: alignment = {alignment} does not fit in int64")
    return MemoryPlan._from_core(_core.plan_memory(graph, alignment, policy, in_place, preserve_inputs))


def placement_policies() -> list:
    """Names of the placement policies, in the order plan_memory tries them."""
    return list(_core.placement_policies())
