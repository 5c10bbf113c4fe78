"""Patch-based execution (MCUNetV2): the stage of a lowered graph before a split tensor runs once per
spatial patch of that tensor, so only one patch's activations are alive at a time.

The rewrite uses ordinary ops. For each patch of the split tensor T (a grid of rows x cols, as even
as the extents allow), the receptive field is propagated back through the stage to the region of
every stage tensor the patch needs (clipped to the image); each stage op then runs on its region,
with the zero-point padding of a convolution kept only on the sides where its region touches the
image border (the kernels take the four pads separately). Whole tensors entering the stage and
tensors whose producer computed more than one consumer needs are cut with `aten.slice_copy` (H,
then W); the patches of T are joined with `aten.cat` (along W within a row of patches, then the
rows along H). Everything after T runs as before. See docs/memory_planning.md.

`patch_graph(lowered, split, grid)` makes the rewritten graph; `fit(lowered, arena_limit)` (what
to_program(arena_limit=...) calls) tries split tensors and grids in order of extra MACs and keeps
the first whose arena fits; `smallest(lowered, max_mac_overhead)` the smallest arena within an
overhead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import _core
from ._core import Graph
from .progress import bar

CHANNELS_LAST = [0, 2, 3, 1]

# The kernels the patch rewrite knows, registered by the family modules of cortexm.ops:
# convolutions whose output pixel reads a window of the input (attrs stride, padding, dilation);
CONV_OPS: set[str] = set()
# same-shape element-wise ops: each output element reads the element at its position of every
# non-constant input;
ELEMENTWISE_OPS: set[str] = set()
# MACs per output element, from the weight's shape.
MAC_OPS: dict[str, Callable] = {}


def register_conv(*ops: str) -> None:
    CONV_OPS.update(ops)


def register_elementwise(*ops: str) -> None:
    ELEMENTWISE_OPS.update(ops)


def register_macs(op: str, per_output: Callable) -> None:
    MAC_OPS[op] = per_output


def macs(graph: Graph) -> int:
    """Multiply-accumulates of the graph's convolution, depthwise and linear ops (output elements x
    weights each reads)."""
    total = 0
    for node in graph.nodes:
        per_output = MAC_OPS.get(node.op)
        if per_output is not None:
            total += int(np.prod(node.outputs[0].shape, dtype=np.int64)) * int(per_output(list(node.inputs[1].shape)))
    return total


@dataclass(frozen=True)
class Region:
    """Rows y0..y1 and columns x0..x1 (end exclusive) of an NCHW tensor's H and W."""
    y0: int
    y1: int
    x0: int
    x1: int

    def union(self, other: "Region | None") -> "Region":
        if other is None:
            return self
        return Region(min(self.y0, other.y0), max(self.y1, other.y1), min(self.x0, other.x0), max(self.x1, other.x1))

    @property
    def shape(self) -> tuple[int, int]:
        return self.y1 - self.y0, self.x1 - self.x0


def _window(lo: int, hi: int, stride: int, pad_before: int, kernel: int, dilation: int, extent: int):
    """Input rows [r0, r1) that output rows [lo, hi) of a window read, clipped to the image, and the
    pads before / after that reproduce the clipped-off part."""
    first = lo * stride - pad_before
    end = (hi - 1) * stride - pad_before + (kernel - 1) * dilation + 1
    r0, r1 = max(first, 0), min(end, extent)
    return r0, r1, r0 - first, end - r1


def _pads(node) -> list[int]:
    p = list(node.attrs["padding"])
    return p if len(p) == 4 else [p[0], p[1], p[0], p[1]]  # top, left, bottom, right


def _conv_input_region(node, out: Region):
    """The input region a conv / depthwise node needs for output region `out`, and its padding
    [top, left, bottom, right] there."""
    _, _, h, w = node.inputs[0].shape
    kh, kw = node.inputs[1].shape[1], node.inputs[1].shape[2]
    sh, sw = node.attrs["stride"]
    dh, dw = node.attrs["dilation"]
    top, left, _, _ = _pads(node)
    y0, y1, pt, pb = _window(out.y0, out.y1, sh, top, kh, dh, h)
    x0, x1, pl, pr = _window(out.x0, out.x1, sw, left, kw, dw, w)
    if y1 <= y0 or x1 <= x0:
        raise ValueError(f"patches: node '{node.name}' would read only padding for output region {out}")
    return Region(y0, y1, x0, x1), [pt, pl, pb, pr]


def _is_spatial_4d(value) -> bool:
    shape = list(value.shape)
    return len(shape) == 4 and shape[0] == 1 and list(value.dim_order) == CHANNELS_LAST and value.dtype == "int8"


def _patchable(node) -> bool:
    if node.op not in CONV_OPS and node.op not in ELEMENTWISE_OPS:
        return False
    if len(node.outputs) != 1 or not _is_spatial_4d(node.outputs[0]):
        return False
    for i, v in enumerate(node.inputs):
        if v is None or v.kind == "constant":
            continue
        if i > 0 and node.op in CONV_OPS:
            return False
        if not _is_spatial_4d(v):
            return False
        if node.op in ELEMENTWISE_OPS and list(v.shape) != list(node.outputs[0].shape):
            return False  # a broadcast operand
    return True


@dataclass
class Stage:
    nodes: list                 # the stage's nodes in execution order
    inputs: list                # values entering it whole (read by stage nodes, made outside)
    split: object               # the value its patches make


def stage_of(graph: Graph, split) -> Stage:
    """The stage that makes `split`: its producer and, back from it, every producer of a
    non-constant input that is a spatially local op (conv, depthwise, same-shape element-wise) over
    batch-1 channels-last int8 tensors. ValueError when `split` cannot be patched: its producer is
    not such an op, it is a graph output, or a stage tensor other than it is read after the stage
    or is a graph output."""
    if isinstance(split, str):
        split = graph.value(split)
    producer = split.producer
    if producer is None or not _patchable(producer):
        raise ValueError(f"patches: split tensor '{split.name}' is not made by a conv, depthwise or "
                         f"same-shape element-wise op over batch-1 channels-last int8 tensors")
    outputs = {v.name for v in graph.outputs}
    if split.name in outputs:
        raise ValueError(f"patches: split tensor '{split.name}' is a graph output")
    members, pending, inputs = {producer.name: producer}, [producer], {}
    while pending:
        node = pending.pop()
        for v in node.inputs:
            if v is None or v.kind == "constant":
                continue
            p = v.producer
            if p is not None and _patchable(p):
                if p.name not in members:
                    members[p.name] = p
                    pending.append(p)
            else:
                inputs[v.name] = v
    order = [n for n in graph.nodes if n.name in members]
    for node in order:
        out = node.outputs[0]
        if out.name == split.name:
            continue
        if out.name in outputs:
            raise ValueError(f"patches: '{out.name}' (made inside the stage before '{split.name}') is a graph output")
        for user in out.users:
            if user.name not in members:
                raise ValueError(f"patches: '{out.name}' (made inside the stage before '{split.name}') is also "
                                 f"read by '{user.name}' after the stage")
    return Stage(order, [inputs[k] for k in sorted(inputs)], split)


def _bounds(extent: int, parts: int) -> list[int]:
    return [(extent * i) // parts for i in range(parts + 1)]


def grid_regions(split, grid: tuple[int, int]) -> list[list[Region]]:
    """The patches of `split`: rows x cols regions, row-major, extents as even as they can be."""
    rows, cols = grid
    _, _, h, w = split.shape
    if not (isinstance(rows, int) and isinstance(cols, int)) or not (1 <= rows <= h and 1 <= cols <= w):
        raise ValueError(f"patches: grid {grid} must be (rows, cols) with 1 <= rows <= {h} and 1 <= cols <= {w} "
                         f"(the extent of '{split.name}')")
    ys, xs = _bounds(h, rows), _bounds(w, cols)
    return [[Region(ys[i], ys[i + 1], xs[j], xs[j + 1]) for j in range(cols)] for i in range(rows)]


def _needs(stage: Stage, patch: Region):
    """Back-propagates `patch` of the split tensor: the region of every stage value the patch needs
    (the union over its readers), and per (node, input index) the region that reader reads (with
    the conv padding there)."""
    need = {stage.split.name: patch}
    reads = {}
    for node in reversed(stage.nodes):
        out = need[node.outputs[0].name]
        for i, v in enumerate(node.inputs):
            if v is None or v.kind == "constant":
                continue
            if node.op in CONV_OPS:
                region, pads = _conv_input_region(node, out)
            else:
                region, pads = out, None
            reads[(node.name, i)] = (region, pads)
            need[v.name] = region.union(need.get(v.name))
    return need, reads


def _crop(graph, value, have: Region, want: Region, before, label: str):
    """`value` (holding region `have`) cut to region `want` by slice_copy along H, then W (nodes
    labelled with their patch in meta "patch")."""
    for dim, (lo, hi, base, full) in ((2, (want.y0, want.y1, have.y0, have.y1)),
                                      (3, (want.x0, want.x1, have.x0, have.x1))):
        if (lo, hi) == (base, full):
            continue
        value = graph.call("aten.slice_copy.Tensor", [value], {"dim": dim, "start": lo - base, "end": hi - base,
                                                               "step": 1}, before=before)
        value.dim_order = CHANNELS_LAST
        value.producer.set_meta("patch", label)
    return value


def patch_graph(lowered: Graph, split, grid: tuple[int, int]) -> Graph:
    """A copy of `lowered` whose stage before `split` (a value or its name) runs once per patch of
    a rows x cols grid of it (see the module doc); the new nodes carry meta "patch": "row,col" of
    their patch, or "join" for the cats. ValueError when the split or grid cannot be
    patched."""
    graph = lowered.copy()
    stage = stage_of(graph, split.name if hasattr(split, "name") else split)
    first = stage.nodes[0]
    whole = {}
    for v in stage.inputs:
        _, _, h, w = v.shape
        whole[v.name] = (v, Region(0, h, 0, w))
    made = []  # the patches of the split tensor, row by row
    for r, row in enumerate(grid_regions(stage.split, grid)):
        made_row = []
        for c, patch in enumerate(row):
            need, reads = _needs(stage, patch)
            have = dict(whole)
            for node in stage.nodes:
                out = node.outputs[0]
                inputs = []
                attrs = dict(node.attrs)
                for i, v in enumerate(node.inputs):
                    if v is None or v.kind == "constant":
                        inputs.append(v)
                        continue
                    region, pads = reads[(node.name, i)]
                    src, src_region = have[v.name]
                    inputs.append(_crop(graph, src, src_region, region, first, f"{r},{c}"))
                    if pads is not None:
                        attrs["padding"] = pads
                result = graph.call(node.op, inputs, attrs, name=f"{node.name}_patch{r}_{c}", before=first)
                result.dim_order = list(out.dim_order)
                result.qparams = out.qparams
                for key, value in node.meta.items():
                    result.producer.set_meta(key, value)
                result.producer.set_meta("patch", f"{r},{c}")
                expected = need[out.name].shape
                if tuple(result.shape[2:]) != expected:
                    raise ValueError(f"patches: node '{node.name}' on region {need[out.name]} makes "
                                     f"{list(result.shape)}, expected extents {list(expected)}")
                have[out.name] = (result, need[out.name])
            made_row.append(have[stage.split.name][0])
        made.append(made_row)
    rows = []
    for made_row in made:
        joined = made_row[0]
        if len(made_row) > 1:
            joined = graph.call("aten.cat.default", made_row, {"dim": 3}, before=first)
            joined.dim_order = CHANNELS_LAST
            joined.producer.set_meta("patch", "join")
        rows.append(joined)
    result = rows[0]
    if len(rows) > 1:
        result = graph.call("aten.cat.default", rows, {"dim": 2}, before=first)
        result.dim_order = CHANNELS_LAST
        result.producer.set_meta("patch", "join")
    result.qparams = stage.split.qparams
    graph.replace_all_uses(stage.split, result)
    for node in reversed(stage.nodes):
        graph.erase_node(node)
    graph.verify()
    return graph


def _axis_extents(stage: Stage, parts: int, axis: int) -> dict:
    """Per stage node with MACs, its output rows (axis 0) or columns (axis 1) summed over the
    patches of a split into `parts` along that axis. The receptive field is separable (every op
    acts on rows and columns independently and regions are boxes), so a grid's patch (i, j) needs
    rows of row-part i times columns of column-part j."""
    _, _, h, w = stage.split.shape
    totals = {}
    for lo, hi in zip(_bounds(h if axis == 0 else w, parts), _bounds(h if axis == 0 else w, parts)[1:]):
        patch = Region(lo, hi, 0, w) if axis == 0 else Region(0, h, lo, hi)
        need, _ = _needs(stage, patch)
        for n in stage.nodes:
            if n.op in MAC_OPS:
                rows, cols = need[n.outputs[0].name].shape
                totals[n.name] = totals.get(n.name, 0) + (rows if axis == 0 else cols)
    return totals


def _macs_per_pixel(stage: Stage) -> dict:
    return {n.name: MAC_OPS[n.op](list(n.inputs[1].shape)) * n.outputs[0].shape[1]
            for n in stage.nodes if n.op in MAC_OPS}


def stage_macs(stage: Stage, grid: tuple[int, int]) -> tuple[int, int]:
    """MACs of the stage run whole and run patch by patch over `grid`."""
    per_pixel = _macs_per_pixel(stage)
    rows, cols = _axis_extents(stage, grid[0], 0), _axis_extents(stage, grid[1], 1)
    whole = patched = 0
    for n in stage.nodes:
        if n.name in per_pixel:
            whole += per_pixel[n.name] * n.outputs[0].shape[2] * n.outputs[0].shape[3]
            patched += per_pixel[n.name] * rows[n.name] * cols[n.name]
    return whole, patched


@dataclass
class PatchPlan:
    """What to_program(arena_limit=...) chose: the stage before `split` run as `grid` (rows, cols)
    patches, or no patches (split None) when the whole-tensor plan fits."""
    arena_size: int             # the program's arena (bytes)
    whole_arena_size: int       # the whole-tensor plan's arena
    macs: int                   # MACs of the program's conv / depthwise / linear ops
    whole_macs: int
    split: str | None = None
    split_shape: list | None = None
    grid: tuple | None = None
    stage: list = field(default_factory=list)  # names of the patched nodes (execution order)
    plans_tried: int = 0
    graph: Graph | None = field(default=None, repr=False)

    @property
    def mac_overhead(self) -> float:
        """Extra MACs over the whole model, as a fraction of the whole-tensor program's."""
        return self.macs / self.whole_macs - 1 if self.whole_macs else 0.0

    def __str__(self) -> str:
        if self.split is None:
            return f"whole-tensor plan: arena {self.arena_size} B, {self.whole_macs} MACs (no patches needed)"
        rows, cols = self.grid
        return (f"patch plan: the {len(self.stage)} ops from '{self.stage[0]}' to the split tensor '{self.split}' "
                f"{self.split_shape} run as {rows}x{cols} patches; arena {self.arena_size} B (whole-tensor plan "
                f"{self.whole_arena_size} B), MACs {self.macs} (+{100 * self.mac_overhead:.2f} % over "
                f"{self.whole_macs}); {self.plans_tried} plans tried")


MAX_GRID = 8       # rows and cols per patch grid the search tries
MAX_PLANS = 100    # planner runs before the search gives up


def _program_arena(graph: Graph, target: str, arena_limit: int, preserve_inputs: bool = False) -> int:
    """The arena of the graph's program: the plan, plus the scratch its kernels need that the graph
    does not declare (planned only when the plan alone fits)."""
    arena = _core.plan_memory(graph, 16, None, True, preserve_inputs)["arena_size"]
    return _core.planned_layout(graph, target, preserve_inputs)["arena_size"] if arena <= arena_limit else arena


# Ops whose output may share its input's bytes (a view, or a dim order clone, the planner aliases):
# left out of bounds.
_MAYBE_ALIASING = frozenset(_core.ops_with("is_view")) | {"dim_order_ops._clone_dim_order.default"}


def _aligned_bytes(value, alignment: int = 16) -> int:
    size = int(np.prod(value.shape, dtype=np.int64)) * np.dtype("bool" if value.dtype == "bool" else value.dtype).itemsize
    return -(-size // alignment) * alignment


def bound_after_stage(graph: Graph, stage: Stage) -> int:
    """Bytes every plan of the graph patched at `stage` needs, whatever the grid: the patches of the
    split tensor and the cat joining them, and at each step after the stage (the original graph's
    steps) the node's output and scratch and every value made before and read after it (none of
    which can share bytes: views are left out)."""
    nodes = graph.nodes
    index = {n.name: i for i, n in enumerate(nodes)}
    end = max(index[n.name] for n in stage.nodes)
    made = {v.name: -1 for v in graph.inputs}
    last = {v.name: 0 for v in graph.inputs}
    values = {v.name: v for v in graph.inputs}
    for i, n in enumerate(nodes):
        for v in n.inputs:
            if v is not None and v.kind != "constant":
                last[v.name] = i
        if n.op not in _MAYBE_ALIASING:
            for v in n.outputs:
                made[v.name], values[v.name] = i, v
                last.setdefault(v.name, i)
    for v in graph.outputs:
        last[v.name] = len(nodes)
    bound = 2 * _aligned_bytes(stage.split)
    for i in range(end + 1, len(nodes)):
        n = nodes[i]
        live = (n.attrs.get("scratch_bytes") or 0) + sum(_aligned_bytes(v) for v in n.outputs if v.name in made)
        live += sum(_aligned_bytes(values[name]) for name, step in made.items() if step < i < last.get(name, step))
        bound = max(bound, live)
    return bound


def candidates(lowered: Graph, arena_limit: int | None = None):
    """(extra MACs, rows x cols, step, split name, grid, stage) for every patchable split tensor
    (whose bound_after_stage is within arena_limit, when given) and grid up to MAX_GRID x MAX_GRID,
    fewest extra MACs first."""
    found = []
    for step, node in enumerate(lowered.nodes):
        if len(node.outputs) != 1:
            continue
        try:
            stage = stage_of(lowered, node.outputs[0])
        except ValueError:
            continue
        if arena_limit is not None and bound_after_stage(lowered, stage) > arena_limit:
            continue
        _, _, h, w = stage.split.shape
        per_pixel = _macs_per_pixel(stage)
        try:
            rows = {r: _axis_extents(stage, r, 0) for r in range(1, min(MAX_GRID, h) + 1)}
            cols = {c: _axis_extents(stage, c, 1) for c in range(1, min(MAX_GRID, w) + 1)}
        except ValueError:
            continue  # some patch would read only padding
        for r in rows:
            for c in cols:
                if r * c == 1:
                    continue
                extra = sum(k * (rows[r][name] * cols[c][name] - rows[1][name] * cols[1][name])
                            for name, k in per_pixel.items())
                found.append((extra, r * c, step, stage.split.name, (r, c), stage))
    found.sort(key=lambda c: c[:3])
    return found


def fit(lowered: Graph, arena_limit: int, target: str = "cortex-m55+int8", preserve_inputs: bool = False,
        progress: bool = True) -> PatchPlan:
    """The plan with the fewest extra MACs whose arena is at most arena_limit: the whole-tensor plan
    when it fits, else the first fitting (split, grid) among candidates() (the planner run on each
    rewritten graph, at most MAX_PLANS of them; a split is dropped once two of its grids planned no
    smaller than the whole-tensor plan). ValueError naming the limit and the smallest arena
    found when none fits. preserve_inputs: plans that keep the graph inputs (to_program's).
    progress: a bar over the plans tried, on a terminal."""
    if isinstance(arena_limit, bool) or not isinstance(arena_limit, (int, np.integer)) or arena_limit <= 0:
        raise ValueError(f"arena_limit = {arena_limit!r} must be a positive int (bytes)")
    arena_limit = int(arena_limit)
    whole_macs = macs(lowered)
    whole_arena = _program_arena(lowered, target, arena_limit, preserve_inputs)
    if whole_arena <= arena_limit:
        return PatchPlan(whole_arena, whole_arena, whole_macs, whole_macs, plans_tried=1, graph=lowered)
    best = (whole_arena, "the whole-tensor plan")
    tried = 1
    planned = {}  # split -> [(grid, arena)]
    shown = bar(desc=f"patch plans for an arena of {arena_limit} B", unit="plan", total=MAX_PLANS, enabled=progress)
    shown.update()  # the whole-tensor plan
    for extra, _, _, split, grid, stage in candidates(lowered, arena_limit):
        if tried >= MAX_PLANS:
            break
        # A split two of whose grids planned no smaller than the whole-tensor plan is left: the
        # peak is not in its stage.
        earlier = planned.setdefault(split, [])
        if sum(a >= whole_arena for _, a in earlier) >= 2:
            continue
        graph = patch_graph(lowered, split, grid)
        arena = _program_arena(graph, target, arena_limit, preserve_inputs)
        tried += 1
        shown.update()
        earlier.append((grid, arena))
        if arena < best[0]:
            best = (arena, f"{grid[0]}x{grid[1]} patches of '{split}', +{100 * extra / whole_macs:.2f} % MACs")
        if arena <= arena_limit:
            shown.close()
            return PatchPlan(arena, whole_arena, whole_macs + extra, whole_macs, split, list(stage.split.shape),
                             grid, [n.name for n in stage.nodes], tried, graph)
    shown.close()
    raise ValueError(f"arena_limit = {arena_limit} B: no plan fits; the smallest arena found is {best[0]} B "
                     f"({best[1]}) after {tried} plans (the whole-tensor plan and patch grids up to "
                     f"{MAX_GRID}x{MAX_GRID}, fewest extra MACs first)")


def smallest(lowered: Graph, max_mac_overhead: float = 0.15, target: str = "cortex-m55+int8",
             progress: bool = True) -> PatchPlan | None:
    """The smallest arena of the first MAX_PLANS plans fit would run (candidates() in order of
    extra MACs, within max_mac_overhead of the whole model's MACs, splits dropped as in fit), the
    fewer extra MACs on ties; None when none is smaller than the whole-tensor plan. Cheapest grids
    first, so not the minimum within the overhead: fit with a limit below it goes on to finer
    grids."""
    whole_macs = macs(lowered)
    whole_arena = _core.planned_layout(lowered, target)["arena_size"]
    best, tried, planned = None, 1, {}
    shown = bar(desc="patch plans", unit="plan", total=MAX_PLANS, enabled=progress)
    shown.update()
    for extra, _, _, split, grid, stage in candidates(lowered, whole_arena - 1):
        if extra > max_mac_overhead * whole_macs or tried >= MAX_PLANS:
            break
        earlier = planned.setdefault(split, [])
        if sum(a >= whole_arena for a in earlier) >= 2:
            continue
        graph = patch_graph(lowered, split, grid)
        arena = _core.planned_layout(graph, target)["arena_size"]
        tried += 1
        shown.update()
        earlier.append(arena)
        if arena < (best.arena_size if best else whole_arena):
            best = PatchPlan(arena, whole_arena, whole_macs + extra, whole_macs, split, list(stage.split.shape),
                             grid, [n.name for n in stage.nodes], tried, graph)
    shown.close()
    if best is not None:
        best.plans_tried = tried
    return best
