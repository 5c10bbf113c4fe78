"""cortexm.compare: where a quantized model loses accuracy, layer by layer.

    result = cortexm.compare(float_graph, lowered, inputs)
    print(result)                 # worst layers first
    result.plot("compare.png")

Every quantized boundary tensor of the int8 model (the output of each lowered op, and each quantized
model input) is matched with the float model's tensor it stands for, by name: the quantizer names
each activation's quantize after its float value, and the lowering passes record that name on the
node whose output now holds those integers (node meta ``float_value``). For each tensor, over all
input samples:

- ``sqnr_db``: 10 log10(sum f^2 / sum (f - q)^2), f the float model's tensor and q the int8 model's,
  dequantized: the error accumulated up to that tensor (what ExecuTorch's Inspector shows);
- ``layer_sqnr_db``: the same, with f computed by the float op(s) from the int8 model's own
  (dequantized) inputs: the error this layer adds by itself. An error every later layer inherits
  (a bad scale, a perturbed weight) shows at its layer here, and only there;
- ``max_abs_error``: the largest |f - q|, and in units of the tensor's scale (``max_error_lsb``).

Rows are sorted worst ``layer_sqnr_db`` first (``sort_by="model"``: worst ``sqnr_db``; "order":
execution order).
"""

from __future__ import annotations

import io
import math
import os
from dataclasses import dataclass
from typing import Optional

import numpy as np

from . import _core
from .atomic_write import write_file_atomically
from .escape import printable
from .export import export
from .program import Program

__all__ = ["Comparison", "CompareRow", "compare"]

SORT_KEYS = ("layer", "model", "order")
_QUANTIZE = "cortex_m.quantize_per_tensor.default"


@dataclass(frozen=True)
class CompareRow:
    """One quantized boundary tensor: the int8 model's node producing it and the float value it
    stands for."""

    node: str  # the int8 model's node ("" for a program's output)
    op: str  # its op, without the namespace and overload ("quantized_conv2d"), or "input"
    value: str  # the float model's value
    source: str  # the PyTorch module path the node came from ("" when unknown)
    shape: tuple
    step: int  # position in the int8 model's execution order (-1: a model input)
    scale: Optional[float]  # the tensor's quantization scale (None: float)
    sqnr_db: float  # accumulated error; inf when exact
    layer_sqnr_db: Optional[float]  # the layer's own error; None when not measured
    max_abs_error: float

    @property
    def max_error_lsb(self) -> Optional[float]:
        """max_abs_error in units of the tensor's scale."""
        return self.max_abs_error / self.scale if self.scale else None


def _db(x: Optional[float]) -> str:
    if x is None:
        return "-"
    return "inf" if math.isinf(x) else f"{x:.2f}"


class Comparison:
    """compare's result: rows (worst first), a table (str / to_markdown) and a plot."""

    HEADER = ("node", "op", "float value", "source", "layer SQNR dB", "SQNR dB", "max abs err", "err/scale")

    def __init__(self, rows: list, samples: int, sort_by: str):
        self.rows = rows
        self.samples = samples
        self.sort_by = sort_by

    def __iter__(self):
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, key):
        """rows[i] for an int; the row of a float value or int8 node name for a str."""
        if isinstance(key, str):
            for row in self.rows:
                if key in (row.value, row.node):
                    return row
            raise KeyError(key)
        return self.rows[key]

    def worst(self, n: int = 5) -> list:
        """The first n rows (the worst by the sort order)."""
        return self.rows[:n]

    def _cells(self, row: CompareRow) -> tuple:
        lsb = row.max_error_lsb
        return (printable(row.node), printable(row.op), printable(row.value), printable(row.source), _db(row.layer_sqnr_db), _db(row.sqnr_db),
                f"{row.max_abs_error:.4g}", "-" if lsb is None else f"{lsb:.1f}")

    def _footer(self, limit: Optional[int]) -> str:
        order = {"layer": "worst layer SQNR first", "model": "worst SQNR first", "order": "in execution order"}
        shown = f"{limit} of " if limit is not None and limit < len(self.rows) else ""
        return (f"{shown}{len(self.rows)} quantized tensors over {self.samples} sample(s), {order[self.sort_by]}; "
                f"layer SQNR: the layer's own error (float op on the int8 model's inputs), "
                f"SQNR: accumulated from the model input")

    def table(self, limit: Optional[int] = None) -> str:
        """A text table (the first `limit` rows, all by default)."""
        rows = [self.HEADER] + [self._cells(r) for r in self.rows[:limit]]
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.HEADER))]
        right = {4, 5, 6, 7}
        lines = []
        for k, r in enumerate(rows):
            lines.append("  ".join(c.rjust(w) if i in right else c.ljust(w)
                                   for i, (c, w) in enumerate(zip(r, widths))).rstrip())
            if k == 0:
                lines.append("  ".join("-" * w for w in widths))
        lines.append(self._footer(limit))
        return "\n".join(lines)

    def to_markdown(self, limit: Optional[int] = None) -> str:
        lines = ["| " + " | ".join(self.HEADER) + " |", "|" + "|".join(
            "---:" if i >= 4 else "---" for i in range(len(self.HEADER))) + "|"]
        for r in self.rows[:limit]:
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in self._cells(r)) + " |")
        return "\n".join(lines) + "\n\n" + self._footer(limit) + "\n"

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        worst = self.rows[0] if self.rows else None
        return (f"<cortexm.Comparison {len(self.rows)} tensors" +
                (f", worst {printable(worst.value)} ({_db(worst.layer_sqnr_db)} / {_db(worst.sqnr_db)} dB)>" if worst else ">"))

    def plot(self, path, title: Optional[str] = None) -> None:
        """Writes SQNR per tensor in execution order (the layer's own and the accumulated one) as an
        image (PNG unless the path's extension says otherwise), atomically; the five worst layers
        are named."""
        # matplotlib is slow to import: only plots load it
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        ordered = sorted(self.rows, key=lambda r: r.step)
        finite = [v for r in ordered for v in (r.sqnr_db, r.layer_sqnr_db) if v is not None and math.isfinite(v)]
        # Exact tensors are drawn at the top, all-zero float tensors (-inf) at the bottom.
        ceiling, floor = (max(finite) if finite else 0.0) + 10.0, min(finite + [0.0]) - 10.0
        clip = lambda v: None if v is None else (ceiling if v == math.inf else floor if v == -math.inf else v)
        x = np.arange(len(ordered))
        fig = Figure(figsize=(min(6 + 0.12 * len(ordered), 40), 5), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        ax.plot(x, [clip(r.sqnr_db) for r in ordered], marker=".", label="SQNR (accumulated)")
        layer = [(i, clip(r.layer_sqnr_db)) for i, r in enumerate(ordered) if r.layer_sqnr_db is not None]
        if layer:
            ax.bar([i for i, _ in layer], [v for _, v in layer], color="#f0a35e", alpha=0.6,
                   label="layer SQNR (its own error)")
        position = {id(r): i for i, r in enumerate(ordered)}
        for r in self.rows[:5]:
            i = position[id(r)]
            y = clip(r.layer_sqnr_db if r.layer_sqnr_db is not None else r.sqnr_db)
            ax.annotate(r.value, (i, y), textcoords="offset points", xytext=(0, -14), ha="center",
                        fontsize="small", color="#b00020")
        ax.set_xticks(x)
        ax.set_xticklabels([r.value for r in ordered], rotation=90, fontsize=6)
        ax.set_ylabel("SQNR (dB)")
        ax.set_xlabel("quantized tensor, in execution order")
        ax.set_title(title or f"float vs int8: {len(ordered)} tensors, {self.samples} sample(s)")
        ax.legend(loc="upper right", fontsize="small")
        fig.tight_layout()
        path = os.fspath(path)
        image = io.BytesIO()
        fig.savefig(image, format=os.path.splitext(path)[1].lstrip(".").lower() or "png")
        write_file_atomically(path, image.getvalue())


def _as_array(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.ascontiguousarray(x)


def _samples(inputs, num_inputs: int) -> list:
    """inputs: one sample (an array, or a tuple of arrays, one per model input) or a list of samples."""
    if hasattr(inputs, "shape"):
        samples = [(inputs,)]
    elif isinstance(inputs, tuple):
        samples = [inputs]
    elif isinstance(inputs, list) or (hasattr(inputs, "__iter__") and not isinstance(inputs, (str, bytes, dict))):
        samples = [s if isinstance(s, (tuple, list)) else (s,) for s in inputs]  # a list or a generator
    else:
        raise ValueError(f"compare: inputs = {type(inputs).__name__}: give an array, a tuple of arrays "
                         f"(one per model input) or a list of them")
    if not samples:
        raise ValueError("compare: inputs = []: give at least one sample")
    for k, s in enumerate(samples):
        if len(s) != num_inputs:
            raise ValueError(f"compare: inputs sample {k} has {len(s)} array(s), the model takes {num_inputs}")
    return [tuple(_as_array(x) for x in s) for s in samples]


def _float_graph(model, sample):
    if isinstance(model, _core.Graph):
        return model
    if hasattr(model, "forward"):  # a torch.nn.Module
        import torch  # optional: only a torch model needs it

        return export(model, tuple(torch.from_numpy(np.array(x)) for x in sample))
    raise ValueError(f"compare: float_model = {type(model).__name__}: give the float cortexm.Graph "
                     f"(cortexm.export's) or the torch.nn.Module")


def _dequantize(array: np.ndarray, qparams) -> np.ndarray:
    if qparams is None or array.dtype.kind == "f":
        return array.astype(np.float64)
    if len(qparams["scales"]) != 1:
        raise ValueError("per-channel activations are not compared")
    return (array.astype(np.float64) - qparams["zero_points"][0]) * qparams["scales"][0]


def _short(op: str) -> str:
    return op.split(".")[1] if op.count(".") >= 2 else op


def _boundaries(lowered) -> list:
    """(float value name, int8 model value, its node, step) per quantized boundary tensor, in order."""
    found, seen = [], set()
    nodes = lowered.nodes
    for step, node in enumerate(nodes):
        name = node.meta.get("float_value")
        value = node.outputs[0] if len(node.outputs) == 1 else None
        if node.op == _QUANTIZE and node.inputs[0].kind == "input":
            name, step = node.inputs[0].name, -1  # a quantized model input
        if not name or value is None or name in seen:
            continue
        if value.dtype == "float32":  # a float fallback: its quantize holds the boundary integers
            quantizes = [u for u in value.users if u.op == _QUANTIZE]
            if quantizes:
                node, value = quantizes[0], quantizes[0].outputs[0]
        seen.add(name)
        found.append((name, value, node, step))
    return found


def _sqnr(signal: float, noise: float) -> float:
    if noise == 0.0:
        return math.inf
    if signal == 0.0:
        return -math.inf
    return 10.0 * math.log10(signal / noise)


def compare(float_model, int8_model, inputs, *, sort_by: str = "layer") -> Comparison:
    """Per-layer error of an int8 model against its float model at every quantized boundary tensor.

    float_model: the float cortexm.Graph the int8 model was quantized from (cortexm.export's), or the
    torch.nn.Module (exported here on the first sample). int8_model: the lowered graph
    (cortexm.lower's), or a cortexm.Program, which shows its outputs only (a program keeps no
    record of the float values its tensors stand for). inputs: one sample (an array, or a tuple of
    arrays, one per model input) or a list (or other iterable, e.g. a zoo model's calibration(n))
    of samples; errors are summed over them.
    sort_by: "layer" (worst layer SQNR first), "model" (worst accumulated SQNR first) or "order".
    Raises ValueError naming a bad argument, and when no tensor of the int8 model matches the float
    model's."""
    if sort_by not in SORT_KEYS:
        raise ValueError(f"compare: sort_by = {sort_by!r} must be one of {', '.join(map(repr, SORT_KEYS))}")
    if not isinstance(int8_model, (_core.Graph, Program)):
        raise ValueError(f"compare: int8_model = {type(int8_model).__name__}: give the lowered cortexm.Graph "
                         f"(cortexm.lower's) or a cortexm.Program")
    num_inputs = len(int8_model.inputs)
    samples = _samples(inputs, num_inputs)
    graph = _float_graph(float_model, samples[0])
    if len(graph.inputs) != num_inputs:
        raise ValueError(f"compare: float_model takes {len(graph.inputs)} input(s), int8_model {num_inputs}")
    if isinstance(int8_model, Program):
        rows = _compare_program(graph, int8_model, samples)
    else:
        rows = _compare_graph(graph, int8_model, samples)
    if not rows:
        raise ValueError("compare: no quantized tensor of int8_model matches a value of float_model "
                         "(give the float graph this model was quantized from)")
    worst_first = lambda v: (-math.inf if v is None else v)
    key = {"layer": lambda r: (worst_first(r.layer_sqnr_db if r.layer_sqnr_db is not None else r.sqnr_db),
                               r.sqnr_db, r.step),
           "model": lambda r: (r.sqnr_db, worst_first(r.layer_sqnr_db), r.step),
           "order": lambda r: r.step}[sort_by]
    return Comparison(sorted(rows, key=key), len(samples), sort_by)


class _Sums:
    def __init__(self):
        self.signal = self.noise = self.max_error = 0.0

    def add(self, reference: np.ndarray, got: np.ndarray) -> None:
        error = reference - got
        self.signal += float(np.sum(reference * reference))
        self.noise += float(np.sum(error * error))
        self.max_error = max(self.max_error, float(np.max(np.abs(error))) if error.size else 0.0)


def _run_recording(graph, sample, names: set) -> dict:
    recorded = {}

    def observe(node, outputs):
        for value, array in zip(node.outputs, outputs):
            if value.name in names:
                recorded[value.name] = np.asarray(array)

    graph.run(*sample, observe=observe)
    for value, array in zip(graph.inputs, sample):
        if value.name in names:
            recorded[value.name] = array
    return recorded


def _compare_graph(graph, lowered, samples) -> list:
    float_values = {v.name: v for v in graph.inputs}
    for node in graph.nodes:
        for v in node.outputs:
            float_values[v.name] = v
    # A lowered op may hold its float value's elements in another shape (a view after it folded
    # away): its logical array, reshaped, is that value.
    matched = [(name, value, node, step) for name, value, node, step in _boundaries(lowered)
               if name in float_values and math.prod(float_values[name].shape) == math.prod(value.shape)]
    # The float graph again, with every matched value's readers reading it from a new input: fed the
    # int8 model's tensors, each float op then computes from the int8 model's own inputs.
    isolated = graph.copy()
    extra = []
    for name, _, _, _ in matched:
        original = isolated.value(name)
        if original.kind == "input":
            continue
        fed = isolated.add_input(f"{name}:int8", list(original.shape))
        for user in original.users:
            for i, v in enumerate(user.inputs):
                if v is not None and v == original:
                    user.replace_input(i, fed)
        extra.append(name)
    model_sums = {name: _Sums() for name, *_ in matched}
    layer_sums = {name: _Sums() for name, *_ in matched}
    int8_names = {value.name: name for name, value, _, _ in matched}
    for sample in samples:
        reference = _run_recording(graph, sample, set(model_sums))
        got = {}

        def observe(node, outputs):
            for value, array in zip(node.outputs, outputs):
                if value.name in int8_names:
                    name = int8_names[value.name]
                    got[name] = _dequantize(np.asarray(array), value.qparams).reshape(float_values[name].shape)

        lowered.run(*sample, observe=observe)
        fed = [got[name].astype(np.float32) for name in extra]  # graph inputs are float32
        local = _run_recording(isolated, list(sample) + fed, set(model_sums))
        for name in model_sums:
            model_sums[name].add(reference[name].astype(np.float64), got[name])
            # The float op saw the float32 of got: compared with it, a layer that adds no error is exact.
            layer_sums[name].add(local[name].astype(np.float64), got[name].astype(np.float32).astype(np.float64))
    rows = []
    for name, value, node, step in matched:
        q = value.qparams
        model, layer = model_sums[name], layer_sums[name]
        is_input = step < 0
        rows.append(CompareRow(
            node=node.name, op="input" if is_input else _short(node.op), value=name, source=node.source,
            shape=tuple(float_values[name].shape), step=step, scale=q["scales"][0] if q and len(q["scales"]) == 1 else None,
            sqnr_db=_sqnr(model.signal, model.noise),
            layer_sqnr_db=_sqnr(layer.signal, layer.noise), max_abs_error=model.max_error))
    return rows


def _compare_program(graph, program, samples) -> list:
    sums = [_Sums() for _ in graph.outputs]
    for sample in samples:
        reference = graph.run(*sample)
        reference = reference if isinstance(reference, tuple) else (reference,)
        outs = program.run(*[_program_input(x, spec) for x, spec in zip(sample, program.inputs)])
        outs = outs if isinstance(outs, tuple) else (outs,)
        for k, (r, o, spec) in enumerate(zip(reference, outs, program.outputs)):
            q = None if spec["scale"] is None or o.dtype.kind == "f" else {
                "scales": [spec["scale"]], "zero_points": [spec["zero_point"]]}
            sums[k].add(np.asarray(r, dtype=np.float64), _dequantize(o, q))
    rows = []
    for k, (value, spec) in enumerate(zip(graph.outputs, program.outputs)):
        rows.append(CompareRow(
            node="", op="output", value=value.name, source="", shape=tuple(spec["shape"]), step=program.num_ops,
            scale=spec["scale"], sqnr_db=_sqnr(sums[k].signal, sums[k].noise), layer_sqnr_db=None,
            max_abs_error=sums[k].max_error))
    return rows


def _program_input(x: np.ndarray, spec: dict) -> np.ndarray:
    """A float sample for an int8-I/O program is quantized as the program's input says."""
    if spec["dtype"] == "float32" or x.dtype.kind != "f":
        return x
    info = np.iinfo(spec["dtype"])
    return _core.ops.quantize_per_tensor(x.astype(np.float32), spec["scale"], spec["zero_point"], int(info.min),
                                         int(info.max), spec["dtype"])
