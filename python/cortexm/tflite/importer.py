"""The import driver: the operator registry (@tflite_op, filled by the family modules) and the
Context each operator's handler builds its part of the graph with.

The graph is in quantized form, as cortexm.quantize leaves it: an int8 activation is a value
carrying its qparams; a compute operator reads dequantize_per_tensor of its inputs, runs the aten
op in float and quantize_per_tensor gives its int8 output; weights are int8 constants behind
dequantize_per_tensor / _per_channel, biases int32 constants at input scale x weight scale behind a
dequantize. A fused activation is the output quantize's range (quant_min / quant_max), which the
lowering takes as the kernel's activation_min / activation_max, computed here as TFLite Micro does.
Data movement (reshape, pad, concatenation, permutes) works on the int8 values themselves, and
LOGISTIC / TANH are cortex_m.quantized_activation tables of TFLite Micro's own results.

Layout: values keep the file's shapes (NHWC) except where a handler asks for a 4-D value in NCHW
(convolutions, pools), which the context makes with an int8 permute_copy and remembers.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import Graph, GraphError

QUANTIZE = "quantized_decomposed.quantize_per_tensor.default"
DEQUANTIZE = "quantized_decomposed.dequantize_per_tensor.default"
DEQUANTIZE_PER_CHANNEL = "quantized_decomposed.dequantize_per_channel.default"
PERMUTE = "aten.permute_copy.default"
TO_NCHW, TO_NHWC = [0, 3, 1, 2], [0, 2, 3, 1]

# builtin name -> handler(ctx, op)
HANDLERS: dict = {}

INT_RANGES = {"INT8": (-128, 127), "INT16": (-32768, 32767)}


def tflite_op(*names):
    """Registers handler(ctx, op) as the importer of the TFLite builtin operators named."""

    def register(fn):
        for name in names:
            if name in HANDLERS:
                raise ValueError(f"TFLite operator {name} has two handlers: {HANDLERS[name].__name__} and "
                                 f"{fn.__name__}")
            HANDLERS[name] = fn
        return fn

    return register


class Unsupported(Exception):
    """What the file asks for that the importer cannot import exactly (listed with the others)."""


class Malformed(Exception):
    """Operands no valid model has (shapes that do not fit the operator): a ValueError."""


class Unavailable(Exception):
    """An input made by an operator that was not imported: the reader is skipped, not listed."""


def tflite_round(x: float) -> int:
    """TfLiteRound: std::round, halves away from zero."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def activation_range(activation: str, scale: float, zero_point: int, qmin: int, qmax: int) -> tuple[int, int]:
    """CalculateActivationRangeQuantized: zero_point + round(f / scale) in float32, clamped."""
    def q(f):
        with np.errstate(over="ignore"):
            tmp = float(np.float32(f) / np.float32(scale))
        rounded = tflite_round(tmp) if math.isfinite(tmp) else tmp
        if not -2.0 ** 31 <= rounded <= 2.0 ** 31 - 1:  # TFLite Micro refuses the model (its Quantize check)
            raise Unsupported(f"fused activation {activation}: {f} / output scale {scale!r} overflows int32 "
                              "(TFLite Micro refuses it)")
        return zero_point + int(rounded)

    if activation == "NONE":
        return qmin, qmax
    if activation == "RELU":
        return max(qmin, q(0.0)), qmax
    if activation == "RELU6":
        return max(qmin, q(0.0)), min(qmax, q(6.0))
    if activation == "RELU_N1_TO_1":
        return max(qmin, q(-1.0)), min(qmax, q(1.0))
    raise Unsupported(f"fused activation {activation} (NONE, RELU, RELU6 and RELU_N1_TO_1 are imported)")


class Context:
    def __init__(self, model):
        self.model = model
        self.g = Graph()
        self.values: dict[int, dict[str, object]] = {}  # tensor -> {"file" | "nchw": Value}
        self.unavailable: set[int] = set()
        self.op = None
        self.state_outputs: list = []  # the new states of stateful operators, after the file's outputs

    # --- tensors -------------------------------------------------------------------------------
    def tensor(self, i: int):
        return self.model.tensors[i]

    def input_index(self, k: int) -> int:
        ins = self.op.inputs
        if k >= len(ins) or ins[k] < 0:
            raise Unsupported(f"input {k} is absent")
        return ins[k]

    def qparams(self, i: int, lo: int | None = None, hi: int | None = None) -> dict:
        t = self.tensor(i)
        if t.type not in INT_RANGES:
            raise Unsupported(f"tensor {i} '{t.name}' is {t.type} (int8 activations are imported)")
        if t.quant is None or not t.quant.per_tensor:
            raise Unsupported(f"tensor {i} '{t.name}' has no per-tensor scale and zero point")
        scale = float(t.quant.scales[0])
        if not (math.isfinite(scale) and scale > 0):
            raise Unsupported(f"tensor {i} '{t.name}' has scale {scale} (must be finite and > 0)")
        qmin, qmax = INT_RANGES[t.type]
        zp = int(t.quant.zero_points[0])
        if not qmin <= zp <= qmax:
            raise Unsupported(f"tensor {i} '{t.name}' has zero point {zp} outside {t.type}")
        return {"scales": [scale], "zero_points": [zp], "quant_min": qmin if lo is None else lo,
                "quant_max": qmax if hi is None else hi}

    def value(self, i: int, layout: str = "file"):
        """The integer value of tensor i in layout "file" or "nchw" (4-D only)."""
        if i in self.unavailable:
            raise Unavailable
        got = self.values.get(i)
        if got is None:
            t = self.tensor(i)
            if t.data is not None:
                raise Unsupported(f"tensor {i} '{t.name}' is a constant where an activation is expected")
            raise Unsupported(f"tensor {i} '{t.name}' is read before any operator writes it")
        if layout in got:
            return got[layout]
        if layout == "nchw":
            v = self.g.call(PERMUTE, [got["file"]], {"dims": TO_NCHW}, source=self.source())
        else:
            v = self.g.call(PERMUTE, [got["nchw"]], {"dims": TO_NHWC}, source=self.source())
        got[layout] = v
        return v

    def dequantized(self, i: int, layout: str = "file"):
        v = self.value(i, layout)
        q = v.qparams
        return self.g.call(DEQUANTIZE, [v], {"scale": q["scales"][0], "zero_point": q["zero_points"][0],
                                             "quant_min": q["quant_min"], "quant_max": q["quant_max"],
                                             "dtype": v.dtype}, source=self.source())

    def set_value(self, i: int, value, layout: str = "file") -> None:
        self.values[i] = {layout: value}

    def quantize_output(self, i: int, y, layout: str = "file", activation: str = "NONE"):
        """quantize_per_tensor of float y to output tensor i's qparams, its range the fused
        activation's; the int value becomes tensor i."""
        q = self.qparams(i)
        lo, hi = activation_range(activation, q["scales"][0], q["zero_points"][0], q["quant_min"], q["quant_max"])
        if lo > hi:
            raise Unsupported(f"fused activation {activation} leaves an empty range on output tensor {i}")
        out = self.g.call(QUANTIZE, [y], {"scale": q["scales"][0], "zero_point": q["zero_points"][0],
                                          "quant_min": lo, "quant_max": hi,
                                          "dtype": self.tensor(i).type.lower()}, source=self.source())
        self.set_value(i, out, layout)
        return out

    def constant(self, i: int, data: np.ndarray, scales, zero_points, axis: int, dtype: str, qmin: int, qmax: int):
        """An integer constant behind its dequantize (per tensor when axis is None)."""
        t = self.tensor(i)
        scales = [float(s) for s in scales]
        zps = [int(z) for z in zero_points]
        qp = {"scales": scales, "zero_points": zps, "axis": -1 if axis is None else axis,
              "quant_min": qmin, "quant_max": qmax}
        c = self.g.add_constant(f"t{i}_{self.op.index}_{_safe(t.name)}", np.ascontiguousarray(data), qparams=qp)
        if axis is None:
            return self.g.call(DEQUANTIZE, [c], {"scale": scales[0], "zero_point": zps[0], "quant_min": qmin,
                                                 "quant_max": qmax, "dtype": dtype}, source=self.source())
        return self.g.call(DEQUANTIZE_PER_CHANNEL, [c], {"scales": scales, "zero_points": zps, "axis": axis,
                                                         "quant_min": qmin, "quant_max": qmax, "dtype": dtype},
                           source=self.source())

    def state_input(self, i: int):
        """Variable tensor i (a stateful operator's state, which TFLite Micro keeps between Invoke
        calls) as a program input after the file's inputs: a float input behind a quantize to its
        integers, as the file's inputs are."""
        t = self.tensor(i)
        if not t.is_variable:
            raise Unsupported(f"state tensor {i} '{t.name}' is not a variable tensor")
        if t.data is not None:
            raise Unsupported(f"state tensor {i} '{t.name}' has initial data (TFLite Micro zeroes it)")
        if i in self.values:
            raise Unsupported(f"state tensor {i} '{t.name}' is read by two operators")
        q = self.qparams(i)
        x = self.g.add_input(f"state{len(self.state_outputs)}_{_safe(t.name)}", list(t.shape), "float32")
        v = self.g.call(QUANTIZE, [x], {"scale": q["scales"][0], "zero_point": q["zero_points"][0],
                                        "quant_min": q["quant_min"], "quant_max": q["quant_max"],
                                        "dtype": t.type.lower()}, source=self.source())
        self.set_value(i, v)
        return v

    def state_output(self, value) -> None:
        """value (an integer value carrying its qparams) becomes the program output after the file's
        outputs that the next run takes back as the state input of the same index."""
        self.state_outputs.append(value)

    def source(self) -> str:
        return f"tflite operator {self.op.index} ({self.op.builtin})" if self.op else "tflite"

    # --- options -------------------------------------------------------------------------------
    def options(self, expected_type: int):
        op = self.op
        if op.options is None or op.options_type != expected_type:
            raise Unsupported(f"builtin_options type {op.options_type} is not this operator's ({expected_type})")
        return op.options


def _safe(name: str) -> str:
    keep = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return keep[:48]


def describe_operator(model, op) -> str:
    def tensors(idx):
        return ", ".join("none" if i < 0 else model.tensors[i].describe() for i in idx)

    return f"operator {op.index} {op.builtin} (inputs: {tensors(op.inputs)}; outputs: {tensors(op.outputs)})"


def build(model):
    ctx = Context(model)
    g = ctx.g
    problems, malformed = [], []
    for i in model.inputs:
        t = model.tensors[i]
        name = f"input{len(g.inputs)}_{_safe(t.name)}"
        if t.type in INT_RANGES:
            try:
                q = ctx.qparams(i)
            except Unsupported as e:
                problems.append(f"model input {i}: {e}")
                ctx.unavailable.add(i)
                continue
            # cortexm's boundary: a float input behind a quantize (to_program(io="int8") takes the
            # integers, as the .tflite does).
            x = g.add_input(name, list(t.shape), "float32")
            ctx.set_value(i, g.call(QUANTIZE, [x], {"scale": q["scales"][0], "zero_point": q["zero_points"][0],
                                                    "quant_min": q["quant_min"], "quant_max": q["quant_max"],
                                                    "dtype": t.type.lower()}, source="tflite input"))
        elif t.type == "FLOAT32":
            ctx.set_value(i, g.add_input(name, list(t.shape), "float32"))
        else:
            problems.append(f"model input {i} '{t.name}' is {t.type}: int8, int16 or float32 inputs are imported")
            ctx.unavailable.add(i)
    for op in model.operators:
        ctx.op = op
        handler = HANDLERS.get(op.builtin)
        if handler is None:
            problems.append(f"{describe_operator(model, op)}: not supported by cortexm.from_tflite; convert the "
                            "model without it (or with the operators below), or file an issue")
            ctx.unavailable.update(op.outputs)
            continue
        if not op.outputs:
            malformed.append(f"{describe_operator(model, op)}: the operator has no outputs")
            continue
        try:
            handler(ctx, op)
            for o in op.outputs:
                if o not in ctx.values:
                    raise Unsupported(f"output tensor {o} was not produced")
        except Unavailable:
            ctx.unavailable.update(op.outputs)
        except Unsupported as e:
            problems.append(f"{describe_operator(model, op)}: {e}")
            ctx.unavailable.update(op.outputs)
        except (GraphError, Malformed) as e:  # shapes or attributes no valid operator has
            malformed.append(f"{describe_operator(model, op)}: {e}")
            ctx.unavailable.update(op.outputs)
        except (ArithmeticError, IndexError, KeyError, TypeError) as e:
            # operands a handler did not expect (a hostile file): named, never a crash
            malformed.append(f"{describe_operator(model, op)}: operands the importer cannot read "
                             f"({type(e).__name__}: {e})")
            ctx.unavailable.update(op.outputs)
    ctx.op = None
    if malformed:
        raise ValueError(f"{model.name}: {len(malformed)} operator(s) are inconsistent:\n  " + "\n  ".join(malformed))
    if problems:
        error = NotImplementedError(f"{model.name}: {len(problems)} problem(s) importing the model:\n  "
                                    + "\n  ".join(problems) + "\ncortexm.from_tflite imports the int8 forms of: "
                                    + ", ".join(sorted(HANDLERS)))
        error.problems = problems  # the aot CLI prints every one
        raise error
    if not model.outputs:
        raise ValueError(f"{model.name}: subgraphs[0].outputs: the model has no outputs")
    outs = []
    for i in model.outputs:
        if i not in ctx.values:
            raise ValueError(f"{model.name}: output tensor {i} '{model.tensors[i].name}' is written by no operator")
        v = ctx.value(i, "file")
        if v.dtype != "float32":  # behind a dequantize, the quantizer's boundary (io="int8" gives the integers)
            q = v.qparams
            v = g.call(DEQUANTIZE, [v], {"scale": q["scales"][0], "zero_point": q["zero_points"][0],
                                         "quant_min": q["quant_min"], "quant_max": q["quant_max"], "dtype": v.dtype},
                       source="tflite output")
        outs.append(v)
    for v in ctx.state_outputs:
        q = v.qparams
        outs.append(g.call(DEQUANTIZE, [v], {"scale": q["scales"][0], "zero_point": q["zero_points"][0],
                                             "quant_min": q["quant_min"], "quant_max": q["quant_max"],
                                             "dtype": v.dtype}, source="tflite state output"))
    g.outputs = outs
    g.verify()
    return g
