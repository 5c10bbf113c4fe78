"""Integer reference for a quantized cortexm graph (the Q/DQ form cortexm.quantize returns).

It walks the graph and, at every int8 quantize_per_tensor, looks for a group it can compute in
integers, written from the graph's qparams alone, apart from the C++ passes and kernels:

- `dequantize -> op [-> relu / hardtanh / clamp / hardsigmoid] -> quantize`, where op is a
  convolution (1-D / 2-D, grouped, depthwise, transposed 1-D / 2-D), linear / addmm, add, mul, max / avg pool,
  adaptive avg pool, mean, softmax, log_softmax, layer norm, bmm / mm, maximum / minimum, or an elementwise
  unary op (sigmoid, tanh, silu, gelu, hardswish, sqrt, abs, pow and scalar arithmetic), each with
  its CMSIS-NN / TFLite arithmetic from this package: multipliers and shifts from the float scales
  by TFLite's quantize_multiplier rules, double-rounding requantize, int32 accumulators and
  biases. A unary op is a 256-entry table built here from the op's float definition in numpy.
  A dequantized input may also reach the op through permute / view / squeeze / unsqueeze, which
  move integers exactly. The activation tail is a clamp of the result (its quantized bounds).
- relu / hardtanh / clamp / hardsigmoid standing alone between dequantize and quantize (a table
  of the float op, what ConvertUnfusedClamps lowers it to: UNFUSED_ACTIVATION_OPS), unless
  ActivationFusion's rule folds it into its producer's activation range (no op of its own);
- `dequantize -> quantize` (a requantize: (x - zp) << 20, one multiplier s_in / (2^20 s_out));
- `dequantize... -> cat -> quantize`: an int8 cat of the inputs, requantized where their qparams
  differ from the output's.

The same at an int16 quantize (symmetric int16, zero point 0: TFLite's 16x8 mode), each group with
its CMSIS-NN / TFLite 16x8 arithmetic: conv 1-D / 2-D (arm_convolve_s16: int64 bias, the reduced
multiplier of arm_nn_requantize_s64; an int8 output through the int16 value spanning its range and
requantize_s16), linear / addmm (arm_fully_connected_s16), add / mul (arm_elementwise_*_s16, left
shift 15), sqrt(a * a + b * b) of the quantizer's fuse_magnitude (quantized_magnitude_s16), the
table ops (TFLite's 513-entry LUTPopulate<int16_t> of the float op and lut_lookup's
interpolation), a relu / hardtanh / clamp standing alone (requantize_s16 with its bounds as range,
or nothing when it folds into its producer), a mean over size-1 dims (nothing, or requantize_s16),
`dequantize -> quantize` with int16 on either side (requantize_s16: int16 shifted left by 15, int8
by 20) and an int16 cat of inputs at the output's qparams (no op).

Every group knows the cortex_m ops the lowering makes of it (`integer_ops`). Everything else (data
movement, the ops the lowering leaves float) is evaluated as the graph says: its dequantized float
inputs, the graph's own op run as a one-node cortexm graph, then quantize. quantize / dequantize
are numpy (reference/quantize.py).
"""

from __future__ import annotations

import math

import numpy as np

import cortexm

from . import batch_matmul, conv, elementwise, linear, mean, minmax, pool, softmax
from .layer_norm import layer_norm, layer_norm_params
from .activation_s16 import lut_lookup_s16, lut_populate_s16
from .common import quantize_multiplier, requantize as fixed_requantize
from .magnitude import FRACTION_BITS, magnitude_s16
from .quantize import dequantize_per_tensor, quantize_per_tensor
from .requantize import left_shift_s16, requantize, requantize_s16
from .transpose_conv import transpose_conv2d

Q = "quantized_decomposed.quantize_per_tensor.default"
DQ = "quantized_decomposed.dequantize_per_tensor.default"
DQ_CHANNEL = "quantized_decomposed.dequantize_per_channel.default"
CLAMPS = ("aten.relu.default", "aten.hardtanh.default", "aten.clamp.default")
HARDSIGMOID = "aten.hardsigmoid.default"
# Data movement a dequantize moves behind (PropagateQParams): the op reads integers moved.
MOVES = ("aten.permute_copy.default", "aten.view_copy.default", "aten.squeeze_copy.dims",
         "aten.unsqueeze_copy.default")
CM = "cortex_m.{}.default"
REQUANTIZE = CM.format("requantize")
REQUANTIZE_S16 = CM.format("requantize_s16")
# arm_nn_requantize_s64 (the 16x8 convs / linears) takes shifts up to 7.
MAX_SHIFT_S64 = 7
# An int64 bias beyond +-2^40 is not a real model's (CMSIS-NN keeps 16x8 sums within +-2^47).
MAX_BIAS_S64 = 2.0**40
LINEAR_LIKE = ("aten.convolution.default", "aten.linear.default", "aten.addmm.default")


class NotInteger(Exception):
    """The group has no integer lowering; it is evaluated in float."""


def _f32(v):
    return np.float32(v)


def _d(x):
    return np.asarray(x, np.float64)


def _gelu(x, approximate):
    x = _d(x)
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    return x * 0.5 * (1.0 + np.vectorize(math.erf)(x * math.sqrt(0.5)))


def _pow(x, exponent):
    e = _f32(exponent)
    return x * x if e == 2 else np.power(_d(x), float(e))


def _elu(x, attrs):
    """x * scale above 0, else expm1(x * input_scale) * (alpha * scale): the product of the
    constants in float32, the negative branch in double."""
    alpha, scale, input_scale = (_f32(attrs.get(k, 1.0)) for k in ("alpha", "scale", "input_scale"))
    negative = np.expm1(_d(x) * float(input_scale)) * float(alpha * scale)
    return np.where(x > 0, x * scale, negative)


def _softplus(x, beta, threshold):
    """x where x * beta (float32) is above threshold, else log1p(exp(x * beta)) / beta."""
    scaled = x * _f32(beta)
    return np.where(scaled > _f32(threshold), _d(x), np.log1p(np.exp(_d(scaled))) / float(_f32(beta)))


def _scalar(attrs):
    """other * alpha in float32, as torch's scalar add / sub."""
    return _f32(attrs.get("alpha", 1.0)) * _f32(attrs["other"])


# The float definition of each op lowered to a lookup table, on float32 inputs: transcendental
# functions in double, rounded once to float32 (what cortexm's float kernels compute, so that
# host and target agree); arithmetic in float32.
UNARY = {
    "aten.sigmoid.default": lambda x, a: 1.0 / (1.0 + np.exp(-_d(x))),
    "aten.tanh.default": lambda x, a: np.tanh(_d(x)),
    "aten.silu.default": lambda x, a: _d(x) / (1.0 + np.exp(-_d(x))),
    "aten.gelu.default": lambda x, a: _gelu(x, a.get("approximate", "none")),
    "aten.hardswish.default": lambda x, a: x * np.clip(x + _f32(3), _f32(0), _f32(6)) / _f32(6),
    "aten.sqrt.default": lambda x, a: np.sqrt(x),
    "aten.abs.default": lambda x, a: np.abs(x),
    "aten.pow.Tensor_Scalar": lambda x, a: _pow(x, a["exponent"]),
    "aten.add.Scalar": lambda x, a: x + _scalar(a),
    "aten.sub.Scalar": lambda x, a: x - _scalar(a),
    "aten.mul.Scalar": lambda x, a: x * _f32(a["other"]),
    "aten.div.Scalar": lambda x, a: x / _f32(a["other"]),
    "aten.leaky_relu.default": lambda x, a: np.where(x > 0, x, x * _f32(a.get("negative_slope", 0.01))),
    "aten.elu.default": lambda x, a: _elu(x, a),
    "aten.exp.default": lambda x, a: np.exp(_d(x)),
    "aten.log.default": lambda x, a: np.log(_d(x)),
    "aten.rsqrt.default": lambda x, a: 1.0 / np.sqrt(_d(x)),
    "aten.neg.default": lambda x, a: -x,
    "aten.reciprocal.default": lambda x, a: _f32(1) / x,
    "aten.softplus.default": lambda x, a: _softplus(x, a.get("beta", 1.0), a.get("threshold", 20.0)),
    "aten.mish.default": lambda x, a: _d(x) * np.tanh(np.log1p(np.exp(_d(x)))),
}

# relu / hardtanh / clamp / hardsigmoid (float32, as torch defines them) when they stand alone on a
# dequantized value: an integer group too (a table of them is exact), lowered to
# UNFUSED_ACTIVATION_OPS.
ACTIVATIONS = {
    "aten.relu.default": lambda x, a: np.maximum(x, _f32(0)),
    "aten.hardtanh.default": lambda x, a: np.clip(x, _f32(a.get("min_val", -1.0)),
                                                  _f32(a.get("max_val", 1.0))),
    "aten.clamp.default": lambda x, a: np.clip(x, _f32(-np.inf if a.get("min") is None
                                                       else a["min"]),
                                               _f32(np.inf if a.get("max") is None else a["max"])),
    "aten.hardsigmoid.default": lambda x, a: np.clip(x + _f32(3), _f32(0), _f32(6)) / _f32(6),
}
# What the lowering makes of a relu / hardtanh / clamp / hardsigmoid it cannot fold into a
# producer's activation range (ConvertUnfusedClamps): a table.
UNFUSED_ACTIVATION_OPS = (CM.format("quantized_activation"),)
# In int16 a relu / hardtanh / clamp is a requantize with its bounds as range (exact, where a
# 513-entry table is not); hardsigmoid, or a clamp with nothing of the range left, a table.
UNFUSED_ACTIVATION_OPS_S16 = (REQUANTIZE_S16,)
# The cortex_m ops with an activation range (ActivationFusion folds a clamp tail into them).
FUSES_ACTIVATION = tuple(CM.format(k) for k in (
    "quantized_conv2d", "quantized_depthwise_conv2d", "quantized_transpose_conv2d",
    "quantized_linear", "quantized_add", "quantized_mul", "quantized_max_pool2d",
    "quantized_max_pool2d_s16", "quantized_avg_pool2d", "quantized_conv2d_s16",
    "quantized_linear_s16", "quantized_add_s16", "quantized_mul_s16"))
# ActivationFusion walks back through these (single readers) to the producer it folds into.
FUSION_MOVES = ("aten.view_copy.default", "aten.squeeze_copy.dims", "aten.unsqueeze_copy.default",
                "dim_order_ops._clone_dim_order.default")


def activation_table(op, attrs, in_q, out_q):
    """The 256 outputs of DQ(in_q) -> op -> Q(out_q) for the int8 inputs -128..127."""
    x = dequantize_per_tensor(np.arange(-128, 128).astype(np.int8), in_q.scale, in_q.zp)
    with np.errstate(all="ignore"):
        y = np.asarray({**UNARY, **ACTIVATIONS}[op](x, attrs), np.float32)
    return quantize_per_tensor(y, out_q.scale, out_q.zp, out_q.qmin, out_q.qmax, np.int8)


class QParams:
    """Per-tensor qparams of a quantize / dequantize node: int8, or symmetric int16 (zero point 0,
    the 16x8 mode)."""

    def __init__(self, node):
        a = node.attrs
        dtype = str(a.get("dtype", "int8"))
        if dtype not in ("int8", "int16"):
            raise NotInteger("not int8 or int16")
        self.dtype = np.dtype(dtype)
        self.scale, self.zp = float(a["scale"]), int(a["zero_point"])
        self.qmin, self.qmax = int(a["quant_min"]), int(a["quant_max"])
        info = np.iinfo(self.dtype)
        if not (math.isfinite(self.scale) and self.scale > 0 and info.min <= self.zp <= info.max
                and info.min <= self.qmin <= self.qmax <= info.max):
            raise NotInteger(f"qparams outside {dtype}'s")
        if self.int16 and self.zp != 0:
            raise NotInteger("int16 with a zero point (the 16x8 kernels are symmetric)")

    @property
    def int16(self):
        return self.dtype == np.int16

    def key(self):
        return self.dtype.name, self.scale, self.zp, self.qmin, self.qmax


class Source:
    """The int8 (int16) integers an op reads: a value behind a dequantize, or a dequantized value
    moved by permute / view / squeeze / unsqueeze (its integers are recovered exactly by
    quantizing it back with the dequantize's qparams)."""

    def __init__(self, value, q, moved):
        self.value, self.q, self.moved = value, q, moved
        self.shape = list(value.shape)

    def get(self, env):
        x = env[self.value.id]
        if not self.moved:
            return x
        info = np.iinfo(self.q.dtype)
        return quantize_per_tensor(x, self.q.scale, self.q.zp, info.min, info.max, self.q.dtype)


class Out:
    """The int8 (int16) output of a group: qparams, activation range, the tail's affine part."""

    def __init__(self, q, tail):
        self.q = q
        self.scale, self.zp = q.scale, q.zp
        self.tail_scale, self.tail_offset = 1.0, 0.0
        self.act_min, self.act_max = q.qmin, q.qmax
        if tail is None:
            return
        a = tail.attrs
        lo, hi = -np.inf, np.inf
        if tail.op == "aten.relu.default":
            lo = 0.0
        elif tail.op == "aten.hardtanh.default":
            lo, hi = a.get("min_val", -1.0), a.get("max_val", 1.0)
        elif tail.op == "aten.clamp.default":
            lo = -np.inf if a.get("min") is None else a["min"]
            hi = np.inf if a.get("max") is None else a["max"]
        else:  # hardsigmoid = clamp(x / 6 + 1 / 2, 0, 1)
            self.tail_scale, self.tail_offset, lo, hi = 1.0 / 6.0, 0.5, 0.0, 1.0
        if math.isnan(lo) or math.isnan(hi):
            raise NotInteger("NaN bound")
        self.act_min = max(q.qmin, self._quantize(lo))
        self.act_max = min(q.qmax, self._quantize(hi))
        if self.act_min > self.act_max:
            raise NotInteger("empty activation range")

    def _quantize(self, v):
        return int(quantize_per_tensor(np.array([v], np.float32), self.scale, self.zp, self.q.qmin,
                                       self.q.qmax, np.int64)[0])

    def clamp(self, y):
        return np.clip(y, self.act_min, self.act_max).astype(self.q.dtype)


class Group:
    """fn(env) -> the int8 (int16) value; sources: what it reads; ops: the cortex_m ops it lowers
    to; takes_tail: its last op applies a clamp tail (an activation range), by default when that
    op is one of FUSES_ACTIVATION."""

    def __init__(self, fn, sources, ops, takes_tail=None):
        self.fn, self.sources, self.ops = fn, sources, ops
        self.takes_tail = takes_tail
        self.out = None  # an op group's Out (its activation range)

    def applies_tail(self):
        if self.takes_tail is not None:
            return self.takes_tail
        return bool(self.ops) and self.ops[-1] in FUSES_ACTIVATION


def _users(value):
    return list(value.users)


def _pair(v, fill=None):
    v = list(v) if v is not None else []
    if not v:
        return [fill, fill]
    return v * 2 if len(v) == 1 else v


def _multipliers(real_scales):
    if any(not (0 < r < 2.0**30) for r in real_scales):
        raise NotInteger("requantize scale out of range")
    pairs = [quantize_multiplier(float(r)) for r in real_scales]
    return [m for m, _ in pairs], [s for _, s in pairs]


def _nchw(fn, x):
    return np.transpose(fn(np.transpose(x, (0, 2, 3, 1))), (0, 3, 1, 2))


class QuantizedGraphReference:
    """Evaluates a quantized graph; run(*inputs) returns the graph outputs (float or int)."""

    def __init__(self, qgraph):
        self.graph = qgraph
        self.nodes = qgraph.nodes
        self.graph_outputs = {v.id for v in qgraph.outputs}
        self.groups = {}  # quantize node id -> Group (the quantizes of one value share it)
        for node in self.nodes:
            if node.op == Q and node.id not in self.groups:
                self._match(node)
        unique = {id(g): g for g in self.groups.values()}.values()
        self.integer_ops = sorted(op for g in unique for op in g.ops)
        self.needed = self._needed()

    # --- matching -------------------------------------------------------------------------------

    def _quantizes(self, value):
        """The quantize nodes reading value when they are all its readers, share their attributes,
        and neither value nor their outputs are graph outputs; else NotInteger."""
        readers = _users(value)
        if not readers or value.id in self.graph_outputs:
            raise NotInteger("not read by quantizes alone")
        for r in readers:
            if r.op != Q or r.attrs != readers[0].attrs or r.outputs[0].id in self.graph_outputs:
                raise NotInteger("not read by quantizes alone")
        return readers

    def _match(self, qnode):
        v = qnode.inputs[0]
        p = v.producer
        if p is None:
            return
        try:
            if p.op == DQ:
                quantizes, group = self._requantize_group(qnode)
            elif p.op == "aten.cat.default":
                quantizes = self._quantizes(v)
                group = self._cat(p, QParams(qnode))
            else:
                quantizes, group = self._compute_group(qnode)
        except NotInteger:
            return
        for q in quantizes:
            self.groups[q.id] = group

    def _compute_group(self, qnode):
        v = qnode.inputs[0]
        producer = v.producer
        quantizes = self._quantizes(v)
        q = QParams(qnode)
        if producer.op in CLAMPS + (HARDSIGMOID,) and producer.inputs:
            inner = producer.inputs[0]
            core = inner.producer
            if core is not None and len(core.outputs) == 1 and _users(inner) == [producer] and \
                    inner.id not in self.graph_outputs and \
                    (producer.op != HARDSIGMOID or core.op in LINEAR_LIKE):
                try:
                    return quantizes, self._core_group(core, Out(q, producer), producer)
                except NotInteger:
                    pass  # maybe an activation standing alone on a dequantized value
        return quantizes, self._core_group(producer, Out(q, None), None)

    def _core_group(self, node, out, tail):
        op = node.op
        # The 16x8 groups: an int16 output, or an int16 input (a conv may requantize to int8).
        int16 = out.q.int16 or self._reads_int16(node)
        squares = self._magnitude_operands(node) if op == "aten.sqrt.default" else None
        if squares is not None:
            group = self._magnitude(squares, out, tail)
        elif int16 and op in ACTIVATIONS and op != HARDSIGMOID:  # a clamp standing alone
            group = self._clamp16(node, out, tail)
        elif op in UNARY or op in ACTIVATIONS:  # the latter standing alone
            group = self._unary16(node, out) if int16 else self._unary(node, out)
            if op in ACTIVATIONS and not int16:
                fuses = tail is None and self._fuses_into_producer(node, out)
                group.ops = [] if fuses else list(UNFUSED_ACTIVATION_OPS)
        else:
            prefix = "_plan16_" if int16 else "_plan_"
            plan = getattr(self, prefix + op.split(".")[1], None)
            if plan is None or not op.startswith("aten."):
                raise NotInteger(op)
            group = plan(node, out)
        # A clamp tail the producer has no activation range for stays a node of its own.
        if tail is not None and tail.op in CLAMPS and not group.applies_tail():
            unfused = UNFUSED_ACTIVATION_OPS_S16 if out.q.int16 else UNFUSED_ACTIVATION_OPS
            group.ops = group.ops + list(unfused)
        group.out = out
        return group

    def _fuses_into_producer(self, clamp, out):
        """ActivationFusion's rule on the quantized graph, for a clamp standing alone: a pure clamp
        whose input and output qparams agree, reading through view_copy / clones (and their Q/DQ
        pairs at the same qparams), each value read once, the int8 output of an integer group whose
        cortex_m op has an activation range that meets the clamp's."""
        if clamp.op == HARDSIGMOID:
            return False
        v, last_q = clamp.inputs[0], None
        while True:
            if len(_users(v)) != 1 or v.id in self.graph_outputs or v.producer is None:
                return False
            p = v.producer
            if p.op == DQ:
                q = p.inputs[0].producer
                if q is None or q.op != Q or len(_users(p.inputs[0])) != 1 or \
                        p.inputs[0].id in self.graph_outputs or QParams(q).key() != out.q.key() or \
                        QParams(p).key() != out.q.key():
                    return False
                last_q, v = q, q.inputs[0]
            elif p.op in FUSION_MOVES:
                last_q, v = None, p.inputs[0]
            else:
                break
        group = self.groups.get(last_q.id) if last_q is not None else None
        if group is None or group.out is None or not group.ops or group.ops[-1] not in FUSES_ACTIVATION:
            return False
        try:
            bounds = Out(out.q, clamp)  # the clamp's bounds, quantized
        except NotInteger:  # a NaN bound, or none of the int8 range left
            return False
        return max(group.out.act_min, bounds.act_min) <= min(group.out.act_max, bounds.act_max)

    def _dequantize_behind(self, value):
        """The dequantize node a value comes from, maybe behind moves none of whose outputs is a
        graph output (or None), and whether it was moved."""
        v, moved = value, False
        while v is not None and v.producer is not None and v.producer.op in MOVES:
            if v.id in self.graph_outputs:
                return None, moved
            v, moved = v.producer.inputs[0], True
        p = v.producer if v is not None else None
        return (p if p is not None and p.op == DQ else None), moved

    def _reads_int16(self, node):
        """Whether the node's first input is a dequantized int16 value."""
        if not node.inputs or node.inputs[0] is None:
            return False
        dq, _ = self._dequantize_behind(node.inputs[0])
        return dq is not None and dq.inputs[0].dtype == "int16"

    def _source(self, value, dtype="int8"):
        """The Source of an input value: a per-tensor int8 (or symmetric int16) dequantize, maybe
        behind moves."""
        p, moved = self._dequantize_behind(value)
        if p is None or p.inputs[0].dtype != dtype:
            raise NotInteger(f"input is not a dequantized {dtype} value")
        q = QParams(p)
        if q.dtype != np.dtype(dtype):
            raise NotInteger(f"input is not dequantized as {dtype}")
        return Source(value, q, True) if moved else Source(p.inputs[0], q, False)

    @staticmethod
    def _constant_channels(value, axis, channels):
        """(int data, scales[c], zero_points[c]) of a dequantized integer constant."""
        p = value.producer if value is not None else None
        if p is None or p.op not in (DQ, DQ_CHANNEL) or p.inputs[0].kind != "constant":
            raise NotInteger("not a dequantized constant")
        a = p.attrs
        data = np.asarray(p.inputs[0].data)
        if p.op == DQ:
            return data, [float(a["scale"])] * channels, [int(a["zero_point"])] * channels
        if int(a["axis"]) % data.ndim != axis or len(a["scales"]) != channels:
            raise NotInteger("per-channel axis does not match")
        return data, [float(s) for s in a["scales"]], [int(z) for z in a["zero_points"]]

    def _bias(self, value, bias_scales):
        """int32 bias at bias_scales[c]: a dequantized integer constant (requantized if its scale
        differs), a float constant (rounded), or zeros."""
        n = len(bias_scales)
        if value is None:
            return np.zeros(n, np.int64)
        if value.kind == "constant" and value.dtype == "float32":
            data = np.asarray(value.data, np.float64).reshape(-1)
            out = np.rint(data / np.asarray(bias_scales))
        else:
            data, scales, zps = self._constant_channels(value, 0, n)
            data = np.asarray(data, np.int64).reshape(-1)
            if data.size != n:
                raise NotInteger("bias size")
            centered = data - np.asarray(zps)
            same = np.asarray(scales) == np.asarray(bias_scales)
            out = np.where(same, centered,
                           np.rint(centered * np.asarray(scales) / np.asarray(bias_scales)))
        if np.any(np.abs(out) > 2**31 - 1):
            raise NotInteger("bias does not fit int32")
        return out.astype(np.int64)

    def _bias64(self, value, bias_scales):
        """The 16x8 kernels' int64 bias at bias_scales[c]: a dequantized integer constant at that
        scale is its integers exactly (at another scale, rounded from them), a float constant
        rounded; within +-2^40."""
        n = len(bias_scales)
        if value is None:
            return np.zeros(n, np.int64)
        if value.kind == "constant" and value.dtype == "float32":
            data = np.asarray(value.data, np.float64).reshape(-1)
            if data.size != n:
                raise NotInteger("bias size")
            rounded = [float(np.rint(d / b)) for d, b in zip(data, bias_scales)]
        else:
            data, scales, zps = self._constant_channels(value, 0, n)
            data = np.asarray(data, np.int64).reshape(-1)
            if data.size != n:
                raise NotInteger("bias size")
            rounded = [int(d) - z if s == b else float(np.rint(float(int(d) - z) * s / b))
                       for d, z, s, b in zip(data, zps, scales, bias_scales)]
        if any(not math.isfinite(v) or abs(v) > MAX_BIAS_S64 for v in rounded):
            raise NotInteger("bias beyond +-2^40")
        return np.array([int(v) for v in rounded], np.int64)

    @staticmethod
    def _tail_bias(out, bias, bias_scales):
        if out.tail_offset == 0.0:
            return bias
        return bias + np.rint(out.tail_offset / (out.tail_scale * np.asarray(bias_scales))).astype(
            np.int64)

    def _per_channel(self, x, s_w, bias_value, out):
        bias_scales = [x.q.scale * s for s in s_w]
        bias = self._tail_bias(out, self._bias(bias_value, bias_scales), bias_scales)
        mult, shift = _multipliers([b * out.tail_scale / out.scale for b in bias_scales])
        return bias, mult, shift

    # --- integer plans: each returns a Group, or raises NotInteger --------------------------------

    def _plan_convolution(self, node, out):
        a = node.attrs
        x = self._source(node.inputs[0])
        if a.get("transposed", False):
            return self._transposed_convolution(node, x, out)
        rank = len(x.shape)
        if rank not in (3, 4):
            raise NotInteger("rank")
        c_out = node.inputs[1].shape[0]
        w, s_w, zp_w = self._constant_channels(node.inputs[1], 0, c_out)
        if any(zp_w) or w.dtype != np.int8:
            raise NotInteger("asymmetric or non-int8 weights")
        bias, mult, shift = self._per_channel(x, s_w, node.inputs[2] if len(node.inputs) > 2
                                              else None, out)

        def spatial(v, fill):
            v = list(v)
            if rank == 3:
                if len(v) != 1:
                    raise NotInteger("1-D attribute")
                return [fill] + v
            return _pair(v)

        stride, padding = spatial(a["stride"], 1), spatial(a["padding"], 0)
        dilation = spatial(a["dilation"], 1)
        groups = int(a.get("groups", 1))
        c_in = x.shape[1]
        w4 = w if rank == 4 else w[:, :, None, :]  # OIHW
        depthwise = groups == c_in > 1 and c_out % c_in == 0  # one input channel: a regular conv

        def run(env):
            xi = x.get(env)
            x4 = xi if rank == 4 else xi[:, :, None, :]
            nhwc = np.transpose(x4, (0, 2, 3, 1))
            if depthwise:
                weight = np.transpose(w4, (1, 2, 3, 0))  # [1, KH, KW, C_out]
                y = conv.depthwise_conv2d(nhwc, weight, bias, stride, padding, dilation,
                                          c_out // c_in, -x.q.zp, out.zp, mult, shift,
                                          out.act_min, out.act_max)
            else:
                weight = np.transpose(w4, (0, 2, 3, 1))  # OHWI
                y = conv.conv2d(nhwc, weight, bias, stride, padding, dilation, -x.q.zp, out.zp,
                                mult, shift, out.act_min, out.act_max)
            y = np.transpose(y, (0, 3, 1, 2))
            return y if rank == 4 else y[:, :, 0, :]

        kind = "quantized_depthwise_conv2d" if depthwise else "quantized_conv2d"
        return Group(run, [x], [CM.format(kind)])

    def _transposed_convolution(self, node, x, out):
        a = node.attrs
        rank = len(x.shape)
        if rank not in (3, 4) or int(a.get("groups", 1)) != 1 or \
                any(d != 1 for d in _pair(a["dilation"])):
            raise NotInteger("transposed convolution: 1-D or 2-D, groups 1, dilation 1 only")
        c_out = node.inputs[1].shape[1]
        w, s_w, zp_w = self._constant_channels(node.inputs[1], 1, c_out)  # [C_in, C_out, (KH,) KW]
        if any(zp_w) or w.dtype != np.int8:
            raise NotInteger("asymmetric or non-int8 weights")
        bias, mult, shift = self._per_channel(x, s_w, node.inputs[2] if len(node.inputs) > 2
                                              else None, out)

        def spatial(v, fill):  # a 1-D conv is a 2-D one over (N, C, 1, W)
            return [fill] + list(v) if rank == 3 else _pair(v)

        stride, (ph, pw) = spatial(a["stride"], 1), spatial(a["padding"], 0)
        output_padding = spatial(a.get("output_padding", [0]), 0)
        ohwi = np.transpose(w if rank == 4 else w[:, :, None, :], (1, 2, 3, 0))

        def run(env):
            xi = x.get(env)
            y = _nchw(lambda t: transpose_conv2d(t, ohwi, bias, stride, (ph, pw, ph, pw),
                                                 output_padding, -x.q.zp, out.zp, mult, shift,
                                                 out.act_min, out.act_max),
                      xi if rank == 4 else xi[:, :, None, :])
            return y if rank == 4 else y[:, :, 0, :]

        return Group(run, [x], [CM.format("quantized_transpose_conv2d")])

    def _linear(self, x_value, w_nk, s_w, zp_w, bias_value, out):
        dq, _ = self._dequantize_behind(x_value)
        if out.q.int16 or (dq is not None and dq.inputs[0].dtype == "int16"):
            return self._linear16(x_value, w_nk, s_w, zp_w, bias_value, out)
        x = self._source(x_value)
        if len(set(zp_w)) != 1 or w_nk.dtype != np.int8:
            raise NotInteger("weight zero points differ")
        bias, mult, shift = self._per_channel(x, s_w, bias_value, out)
        return Group(lambda env: linear.linear(x.get(env), w_nk, bias, -x.q.zp, -zp_w[0], out.zp,
                                               mult, shift, out.act_min, out.act_max),
                     [x], [CM.format("quantized_linear")])

    def _plan_linear(self, node, out):
        n = node.inputs[1].shape[0]
        w, s_w, zp_w = self._constant_channels(node.inputs[1], 0, n)
        return self._linear(node.inputs[0], w, s_w, zp_w,
                            node.inputs[2] if len(node.inputs) > 2 else None, out)

    def _plan_addmm(self, node, out):
        a = node.attrs
        if a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) not in (0.0, 1.0):
            raise NotInteger("alpha / beta")
        mat2 = node.inputs[2]
        n = mat2.shape[1]
        p = mat2.producer
        if p is not None and p.op == "aten.permute_copy.default" and \
                [d % 2 for d in p.attrs["dims"]] == [1, 0]:
            w, s_w, zp_w = self._constant_channels(p.inputs[0], 0, n)
        else:
            w, s_w, zp_w = self._constant_channels(mat2, 1, n)
            w = np.ascontiguousarray(w.T)
        bias = node.inputs[0] if a.get("beta", 1.0) == 1.0 else None
        if bias is not None and tuple(bias.shape) not in ((n,), (1, n)):
            raise NotInteger("addmm self is not a bias")
        return self._linear(node.inputs[1], w, s_w, zp_w, bias, out)

    def _binary_sources(self, node):
        return self._source(node.inputs[0]), self._source(node.inputs[1])

    def _plan_add(self, node, out):
        if node.op not in ("aten.add.Tensor", "aten.sub.Tensor") or node.attrs.get("alpha", 1.0) != 1.0:
            raise NotInteger("alpha")
        a, b = self._binary_sources(node)
        (ma, sha), (mb, shb), (mo, sho) = elementwise.add_params(a.q.scale, b.q.scale, out.scale)
        _multipliers([2.0 * max(a.q.scale, b.q.scale) / ((1 << 20) * out.scale)])
        kernel, op = (elementwise.sub, "quantized_sub") if node.op == "aten.sub.Tensor" else \
            (elementwise.add, "quantized_add")
        return Group(lambda env: kernel(a.get(env), a.q.zp, ma, sha, b.get(env), b.q.zp, mb, shb,
                                        out.zp, mo, sho, out.act_min, out.act_max),
                     [a, b], [CM.format(op)])

    def _plan_sub(self, node, out):
        return self._plan_add(node, out)

    def _plan_mul(self, node, out):
        if node.op != "aten.mul.Tensor":
            raise NotInteger(node.op)
        a, b = self._binary_sources(node)
        mo, sho = _multipliers([a.q.scale * b.q.scale / out.scale])
        return Group(lambda env: elementwise.mul(a.get(env), a.q.zp, b.get(env), b.q.zp, out.zp,
                                                 mo[0], sho[0], out.act_min, out.act_max),
                     [a, b], [CM.format("quantized_mul")])

    def _minmax(self, node, out, pick, kind):
        a, b = self._binary_sources(node)
        twice_max = 2.0 * max(a.q.scale, b.q.scale)
        (ma, mb, mo), (sa, sb, so) = _multipliers([a.q.scale / twice_max, b.q.scale / twice_max,
                                                   twice_max / ((1 << 20) * out.scale)])
        return Group(lambda env: out.clamp(minmax.minmax(pick, a.get(env), a.q.zp, ma, sa,
                                                         b.get(env), b.q.zp, mb, sb, out.zp, mo,
                                                         so, out.q.qmin, out.q.qmax)),
                     [a, b], [CM.format(kind)])

    def _plan_maximum(self, node, out):
        return self._minmax(node, out, np.maximum, "quantized_maximum")

    def _plan_minimum(self, node, out):
        return self._minmax(node, out, np.minimum, "quantized_minimum")

    def _matmul(self, node, out, batched):
        a, b = self._binary_sources(node)
        mult, shift = _multipliers([a.q.scale * b.q.scale / out.scale])

        def run(env):
            lhs, rhs = a.get(env), b.get(env)
            if not batched:
                lhs, rhs = lhs[None], rhs[None]
            y = batch_matmul.batch_matmul(lhs, np.swapaxes(rhs, 1, 2), -a.q.zp, -b.q.zp, out.zp,
                                          mult[0], shift[0], out.q.qmin, out.q.qmax)
            return out.clamp(y if batched else y[0])

        return Group(run, [a, b], [CM.format("quantized_batch_matmul")])

    def _plan_bmm(self, node, out):
        return self._matmul(node, out, True)

    def _plan_mm(self, node, out):
        return self._matmul(node, out, False)

    def _pool_input(self, node, out, dtype="int8"):
        x = self._source(node.inputs[0], dtype)
        if x.q.key() != out.q.key() or len(x.shape) != 4:
            raise NotInteger("pools do not rescale")
        return x

    @staticmethod
    def _pool_geometry(node, in_hw, out_hw):
        """kernel, stride, (top, left, bottom, right): the bottom / right padding reproduces
        torch's output extent (ceil_mode's partial windows)."""
        a = node.attrs
        kernel = _pair(a["kernel_size"])
        stride = _pair(a["stride"]) if a.get("stride") else kernel
        padding = _pair(a.get("padding", [0]), 0)
        after = []
        for size, k, s, p, o in zip(in_hw, kernel, stride, padding, out_hw):
            extra = max(0, (o - 1) * s + k - size - p)
            if extra >= k or p >= k:
                raise NotInteger("windows outside the input")
            after.append(extra)
        return kernel, stride, (padding[0], padding[1], after[0], after[1])

    def _plan_max_pool2d(self, node, out, dtype="int8"):
        x = self._pool_input(node, out, dtype)
        if any(d != 1 for d in _pair(node.attrs.get("dilation", [1]), 1)):
            raise NotInteger("dilation")
        kernel, stride, pads = self._pool_geometry(node, x.shape[2:], node.outputs[0].shape[2:])
        kind = "quantized_max_pool2d_s16" if dtype == "int16" else "quantized_max_pool2d"
        return Group(lambda env: _nchw(lambda t: pool.max_pool2d(t, kernel, stride, pads,
                                                                 out.act_min, out.act_max,
                                                                 np.dtype(dtype)),
                                       x.get(env)),
                     [x], [CM.format(kind)])

    def _plan_avg_pool2d(self, node, out):
        x = self._pool_input(node, out)
        a = node.attrs
        if a.get("divisor_override") is not None:
            raise NotInteger("divisor_override")
        kernel, stride, pads = self._pool_geometry(node, x.shape[2:], node.outputs[0].shape[2:])
        if any(_pair(a.get("padding", [0]), 0)) and a.get("count_include_pad", True):
            raise NotInteger("count_include_pad with padding")
        return self._avg(x, kernel, stride, pads, out, node.outputs[0].shape)

    def _avg(self, x, kernel, stride, pads, out, out_shape):
        return Group(lambda env: _nchw(lambda t: pool.avg_pool2d(t, kernel, stride, pads,
                                                                 out.act_min, out.act_max),
                                       x.get(env)).reshape(out_shape),
                     [x], [CM.format("quantized_avg_pool2d")])

    def _plan_adaptive_avg_pool2d(self, node, out):
        x = self._pool_input(node, out)
        in_hw, out_hw = x.shape[2:], node.outputs[0].shape[2:]
        if any(i % o for i, o in zip(in_hw, out_hw)):
            raise NotInteger("extents do not divide")
        kernel = [i // o for i, o in zip(in_hw, out_hw)]
        return self._avg(x, kernel, kernel, (0, 0, 0, 0), out, node.outputs[0].shape)

    def _plan_mean(self, node, out, dtype="int8"):
        """quantized_mean(_s16); a sum is the same kernel with the multiplier of s_in / s_out (no 1/count)."""
        if node.op not in ("aten.mean.dim", "aten.sum.dim_IntList"):
            raise NotInteger(node.op)
        x = self._source(node.inputs[0], dtype)
        rank = len(x.shape)
        dims = sorted({d % rank for d in (node.attrs.get("dim") or range(rank))})
        order = list(x.value.dim_order or range(rank))
        at = sorted(order.index(d) for d in dims)
        if at[-1] - at[0] + 1 != len(dims):
            raise NotInteger("the reduced dims are not one block in memory")
        _multipliers([x.q.scale / out.scale])  # its range check
        if node.op == "aten.sum.dim_IntList":
            (mult,), (shift,) = _multipliers([x.q.scale / out.scale])
        else:
            mult, shift = mean.mean_params(x.q.scale, out.scale, int(np.prod([x.shape[d] for d in dims])))
        keepdim = bool(node.attrs.get("keepdim", False))
        kind = "quantized_mean_s16" if dtype == "int16" else "quantized_mean"
        return Group(lambda env: out.clamp(mean.mean(x.get(env), dims, keepdim, -x.q.zp, out.zp,
                                                     mult, shift, out.q.qmin, out.q.qmax,
                                                     np.dtype(dtype))),
                     [x], [CM.format(kind)])

    def _plan_layer_norm(self, node, out):
        """quantized_layer_norm: int16 weight and int32 bias from the float constants."""
        x = self._source(node.inputs[0])
        normalized = list(node.attrs["normalized_shape"])
        n = int(np.prod(normalized))
        if not 1 <= n <= 65536:
            raise NotInteger("row size")
        consts = []
        for v in node.inputs[1:3]:
            if v is not None and (v.kind != "constant" or v.dtype != "float32"):
                raise NotInteger("weight or bias is not a float constant")
            consts.append(None if v is None else np.asarray(v.data))
        try:
            wq, bq, eps_term, product_shift, mult, shift = layer_norm_params(
                n, float(node.attrs["eps"]), x.q.scale, out.scale, *consts)
        except ValueError as e:
            raise NotInteger(str(e)) from e
        return Group(lambda env: out.clamp(layer_norm(x.get(env), len(normalized), wq, bq, eps_term,
                                                      product_shift, out.zp, mult, shift,
                                                      out.q.qmin, out.q.qmax)),
                     [x], [CM.format("quantized_layer_norm")])

    def _softmax(self, node, out, log):
        if node.attrs.get("half_to_float", False):
            raise NotInteger("half_to_float")
        want = (16.0 / 256.0, 127) if log else (1.0 / 256.0, -128)
        if (out.q.scale, out.q.zp, out.q.qmin, out.q.qmax) != want + (-128, 127):
            raise NotInteger("output qparams are not the kernel's")
        x = self._source(node.inputs[0])
        rank = len(x.shape)
        if rank < 1 or not 1 <= x.shape[node.attrs["dim"] % rank] <= 4096:
            raise NotInteger("rank or row size")
        dim = node.attrs["dim"] % rank
        if not x.q.scale * 2.0**26 > 1.0:
            raise NotInteger("input scale <= 2^-26")
        params = softmax.softmax_scaling(x.q.scale, log)
        mult, shift, diff_min = params[:3]
        if not 0 <= shift <= 31 or max(diff_min, -255) * 2**shift < -2**31:
            raise NotInteger("input scale out of the kernel's range")
        if log:
            _, rshift = math.frexp(2.0 ** (31 - shift) / mult)
            if rshift > 0:
                raise NotInteger("reverse scaling >= 1")
            fn, kind = softmax.log_softmax, "quantized_log_softmax"
        else:
            fn, kind = softmax.softmax, "quantized_softmax"
        return Group(lambda env: out.clamp(fn(x.get(env), *params, dim=dim)), [x],
                     [CM.format(kind)])

    _plan_sum = _plan_mean

    def _plan__softmax(self, node, out):
        return self._softmax(node, out, False)

    def _plan__log_softmax(self, node, out):
        return self._softmax(node, out, True)

    def _unary(self, node, out):
        x = self._source(node.inputs[0])
        table = activation_table(node.op, node.attrs, x.q, out.q).astype(np.int64)
        return Group(lambda env: out.clamp(table[x.get(env).astype(np.int64) + 128]), [x],
                     [CM.format("quantized_activation")])

    # --- 16x8 plans (symmetric int16 activations, int8 weights, int64 biases) ---------------------

    @staticmethod
    def _shifts_s64(shift):
        if any(s > MAX_SHIFT_S64 for s in shift):
            raise NotInteger("requantize shift above 7 (arm_nn_requantize_s64)")

    def _plan16_convolution(self, node, out):
        """arm_convolve_s16 (1-D as H = 1). An int8 output (or a clamp tail's) is the kernel's int16
        output at the scale spanning the int8 range, then requantize_s16 with the tail's range."""
        a = node.attrs
        if a.get("transposed", False):
            raise NotInteger("transposed int16 convolution")
        x = self._source(node.inputs[0], "int16")
        rank = len(x.shape)
        if rank not in (3, 4):
            raise NotInteger("rank")
        c_out = node.inputs[1].shape[0]
        w, s_w, zp_w = self._constant_channels(node.inputs[1], 0, c_out)
        if any(zp_w) or w.dtype != np.int8:
            raise NotInteger("asymmetric or non-int8 weights")
        q = out.q
        if q.int16:
            if out.tail_scale != 1.0 or out.tail_offset != 0.0:
                raise NotInteger("an int16 conv's tail is not a clamp")
            conv_scale, act = q.scale, (out.act_min, out.act_max)
        else:
            span = float(max(abs(q.qmin - q.zp), abs(q.qmax - q.zp)))
            conv_scale, act = span * q.scale / 32767.0 / out.tail_scale, (-32768, 32767)
        bias_scales = [x.q.scale * s for s in s_w]
        mult, shift = _multipliers([b / conv_scale for b in bias_scales])
        self._shifts_s64(shift)
        bias = self._tail_bias(out, self._bias64(node.inputs[2] if len(node.inputs) > 2 else None,
                                                 bias_scales), bias_scales)
        ops = [CM.format("quantized_conv2d_s16")]
        if not q.int16:
            (m8,), (s8,) = _multipliers([conv_scale * out.tail_scale / (q.scale * (1 << 15))])
            ops.append(REQUANTIZE_S16)

        def spatial(v, fill):
            v = list(v)
            if rank == 3:
                if len(v) != 1:
                    raise NotInteger("1-D attribute")
                return [fill] + v
            return _pair(v)

        stride, padding = spatial(a["stride"], 1), spatial(a["padding"], 0)
        dilation = spatial(a["dilation"], 1)
        ohwi = np.transpose(w if rank == 4 else w[:, :, None, :], (0, 2, 3, 1))

        def run(env):
            xi = x.get(env)
            nhwc = np.transpose(xi if rank == 4 else xi[:, :, None, :], (0, 2, 3, 1))
            y = conv.conv2d_s16(nhwc, ohwi, bias, stride, padding, dilation, mult, shift, *act)
            if not q.int16:
                y = requantize_s16(y, 0, q.zp, m8, s8, np.int8, out.act_min, out.act_max)
            y = np.transpose(y, (0, 3, 1, 2))
            return y if rank == 4 else y[:, :, 0, :]

        # A hardsigmoid tail is in the requantize; a clamp tail, whose qparams the conv's output
        # takes when folded, stays a node of its own (requantize_s16 is not ActivationFusion's).
        return Group(run, [x], ops, takes_tail=q.int16 or out.tail_scale != 1.0)

    def _linear16(self, x_value, w_nk, s_w, zp_w, bias_value, out):
        """arm_fully_connected_s16: int16 in and out (a clamp tail's range and affine part folded
        in); one multiplier per channel (per-tensor weights give equal ones)."""
        x = self._source(x_value, "int16")
        if not out.q.int16:
            raise NotInteger("an int16 linear with int8 output")
        if any(zp_w) or w_nk.dtype != np.int8:
            raise NotInteger("asymmetric or non-int8 weights")
        bias_scales = [x.q.scale * s for s in s_w]
        mult, shift = _multipliers([b * out.tail_scale / out.scale for b in bias_scales])
        self._shifts_s64(shift)
        bias = self._tail_bias(out, self._bias64(bias_value, bias_scales), bias_scales)
        return Group(lambda env: linear.linear_s16(x.get(env), w_nk, bias, mult, shift,
                                                   out.act_min, out.act_max),
                     [x], [CM.format("quantized_linear_s16")])

    def _plan16_linear(self, node, out):
        return self._plan_linear(node, out)

    def _plan16_addmm(self, node, out):
        return self._plan_addmm(node, out)

    def _int16_binary(self, node, out):
        if not out.q.int16:
            raise NotInteger("int16 inputs, int8 output")
        return self._source(node.inputs[0], "int16"), self._source(node.inputs[1], "int16")

    @staticmethod
    def _magnitude_bound(q):
        return max(abs(q.qmin), abs(q.qmax))

    def _plan16_add(self, node, out):
        """arm_elementwise_add_s16: TFLite's add derivation with inputs shifted left by 15; the
        sum's requantize must not shift a possible sum out of int32."""
        if node.op != "aten.add.Tensor" or node.attrs.get("alpha", 1.0) != 1.0:
            raise NotInteger("alpha")
        a, b = self._int16_binary(node, out)
        twice_max = 2.0 * max(a.q.scale, b.q.scale)
        (ma, mb, mo), (sa, sb, so) = _multipliers(
            [a.q.scale / twice_max, b.q.scale / twice_max, twice_max / ((1 << 15) * out.scale)])
        bound = int(fixed_requantize(self._magnitude_bound(a.q) << 15, ma, sa)) + \
            int(fixed_requantize(self._magnitude_bound(b.q) << 15, mb, sb))
        if so > 0 and bound << so > 2**31 - 1:
            raise NotInteger("the sum's left shift overflows int32")
        return Group(lambda env: elementwise.add_s16(a.get(env), ma, sa, b.get(env), mb, sb, mo,
                                                     so, out.act_min, out.act_max),
                     [a, b], [CM.format("quantized_add_s16")])

    def _plan16_mul(self, node, out):
        """arm_elementwise_mul_s16: the exact product requantized by s_a s_b / s_out."""
        if node.op != "aten.mul.Tensor":
            raise NotInteger(node.op)
        a, b = self._int16_binary(node, out)
        (m,), (sh,) = _multipliers([a.q.scale * b.q.scale / out.scale])
        if sh > 0 and (self._magnitude_bound(a.q) * self._magnitude_bound(b.q)) << sh > 2**31 - 1:
            raise NotInteger("the product's left shift overflows int32")
        return Group(lambda env: elementwise.mul_s16(a.get(env), b.get(env), m, sh, out.act_min,
                                                     out.act_max),
                     [a, b], [CM.format("quantized_mul_s16")])

    def _plan16__softmax(self, node, out):
        """arm_softmax_s16 (TFLite's int16 softmax): output 1/32768, 0; its own tables."""
        if node.attrs.get("half_to_float", False):
            raise NotInteger("half_to_float")
        if (out.q.scale, out.q.zp, out.q.qmin, out.q.qmax) != (1.0 / 32768.0, 0, -32768, 32767):
            raise NotInteger("output qparams are not the kernel's")
        x = self._source(node.inputs[0], "int16")
        rank = len(x.shape)
        if rank < 1:
            raise NotInteger("rank")
        mult, shift = softmax.softmax_s16_scaling(x.q.scale)
        if shift > 15:
            raise NotInteger("input scale too large")
        dim = node.attrs["dim"] % rank
        return Group(lambda env: out.clamp(softmax.softmax_s16(x.get(env), mult, shift, dim)), [x],
                     [CM.format("quantized_softmax_s16")])

    def _matmul16(self, node, out, batched):
        """arm_batch_matmul_s16 (rhs transposed): int64 sums, the 64-bit requantize."""
        a, b = self._int16_binary(node, out)
        (mult,), (shift,) = _multipliers([a.q.scale * b.q.scale / out.scale])
        self._shifts_s64([shift])

        def run(env):
            lhs, rhs = a.get(env), b.get(env)
            if not batched:
                lhs, rhs = lhs[None], rhs[None]
            y = batch_matmul.batch_matmul_s16(lhs, np.swapaxes(rhs, 1, 2), mult, shift,
                                              out.q.qmin, out.q.qmax)
            return out.clamp(y if batched else y[0])

        return Group(run, [a, b], [CM.format("quantized_batch_matmul_s16")])

    def _plan16_bmm(self, node, out):
        return self._matmul16(node, out, True)

    def _plan16_mm(self, node, out):
        return self._matmul16(node, out, False)

    def _plan16_max_pool2d(self, node, out):
        """arm_max_pool_s16: the int8 max pool's arithmetic over int16 (qparams kept, range clamp)."""
        return self._plan_max_pool2d(node, out, "int16")

    def _plan16_mean(self, node, out):
        """An int16 mean over size-1 dims of a contiguous value moves its elements: nothing when
        the qparams agree, else requantize_s16; any other, quantized_mean_s16 (the int8 mean's
        arithmetic with zero points 0)."""
        if node.op not in ("aten.mean.dim", "aten.sum.dim_IntList") or not out.q.int16:
            raise NotInteger(node.op)
        x = self._source(node.inputs[0], "int16")
        rank = len(x.shape)
        dims = sorted({d % rank for d in (node.attrs.get("dim") or range(rank))})
        if any(x.shape[d] != 1 for d in dims):
            return self._plan_mean(node, out, "int16")
        if list(x.value.dim_order or range(rank)) != list(range(rank)):
            raise NotInteger("the int16 input is not contiguous")
        shape = list(node.outputs[0].shape)
        if x.q.scale == out.scale and x.q.qmin >= out.q.qmin and x.q.qmax <= out.q.qmax:
            return Group(lambda env: out.clamp(x.get(env).reshape(shape)), [x], [])
        (m,), (sh,) = _multipliers([x.q.scale / (out.scale * (1 << 15))])
        return Group(lambda env: requantize_s16(x.get(env), 0, 0, m, sh, np.int16, out.act_min,
                                                out.act_max).reshape(shape),
                     [x], [REQUANTIZE_S16])

    _plan16_sum = _plan16_mean

    def _unary16(self, node, out):
        """TFLite's int16 table: LUTPopulate<int16_t> over the op's float definition (float32
        points), lut_lookup's interpolation."""
        x = self._source(node.inputs[0], "int16")
        if not out.q.int16:
            raise NotInteger("int16 input, int8 output")
        fn = {**UNARY, **ACTIVATIONS}[node.op]

        def f(points):
            with np.errstate(all="ignore"):
                return np.asarray(fn(np.asarray(points, np.float32), node.attrs),
                                  np.float32).astype(np.float64)

        table = lut_populate_s16(f, x.q.scale, out.scale, out.q.qmin, out.q.qmax)
        return Group(lambda env: out.clamp(lut_lookup_s16(x.get(env), table)), [x],
                     [CM.format("quantized_activation_s16")])

    def _clamp16(self, clamp, out, tail):
        """An int16 relu / hardtanh / clamp standing alone: requantize_s16 to the output's scale,
        its bounds quantized as range (no op when it folds into its producer); a table when none
        of the range is left."""
        x = self._source(clamp.inputs[0], "int16")
        if not out.q.int16 or tail is not None:
            raise NotInteger("int16 clamp to int8")
        a = clamp.attrs
        bounds = {"aten.relu.default": (0.0, math.inf),
                  "aten.hardtanh.default": (a.get("min_val", -1.0), a.get("max_val", 1.0)),
                  "aten.clamp.default": (-math.inf if a.get("min") is None else a["min"],
                                         math.inf if a.get("max") is None else a["max"])}
        if any(math.isnan(v) for v in bounds[clamp.op]):
            raise NotInteger("NaN bound")
        try:
            ranged = Out(out.q, clamp)
        except NotInteger:  # an empty range: the table
            return self._unary16(clamp, out)
        (m,), (sh,) = _multipliers([x.q.scale / (out.scale * (1 << 15))])
        fuses = self._fuses_into_producer(clamp, out)
        return Group(lambda env: requantize_s16(x.get(env), 0, 0, m, sh, np.int16,
                                                ranged.act_min, ranged.act_max),
                     [x], [] if fuses else list(UNFUSED_ACTIVATION_OPS_S16))

    def _magnitude_operands(self, sqrt):
        """(a, b) of sqrt(a * a + b * b) with the squares and the sum float values read once (the
        quantizer's fuse_magnitude), else None."""
        def sole(value, op, reader):
            p = value.producer if value is not None else None
            if p is None or p.op != op or value.id in self.graph_outputs or \
                    [u.id for u in _users(value)] != [reader.id] or value.dtype != "float32":
                return None
            return p

        add = sole(sqrt.inputs[0], "aten.add.Tensor", sqrt)
        if add is None or len(add.inputs) != 2 or add.attrs.get("alpha", 1.0) != 1.0:
            return None
        muls = [sole(v, "aten.mul.Tensor", add) for v in add.inputs]
        if any(m is None or len(m.inputs) != 2 or m.inputs[0].id != m.inputs[1].id for m in muls) \
                or muls[0].id == muls[1].id:
            return None
        return muls[0].inputs[0], muls[1].inputs[0]

    def _magnitude(self, squares, out, tail):
        """quantized_magnitude_s16: round(sqrt(a^2 + b^2) 2^15), requantized by s_a / (2^15 s_out)
        to int16 or int8."""
        if tail is not None:
            raise NotInteger("a magnitude with a tail")
        a, b = (self._source(v, "int16") for v in squares)
        if a.q.scale != b.q.scale:
            raise NotInteger("the real and imaginary parts have different scales")
        if a.shape != b.shape or list(a.value.dim_order or []) != list(b.value.dim_order or []):
            raise NotInteger("the real and imaginary parts differ in shape or dim order")
        (m,), (sh,) = _multipliers([a.q.scale / (out.scale * (1 << FRACTION_BITS))])
        return Group(lambda env: magnitude_s16(a.get(env), b.get(env), m, sh, out.zp, out.act_min,
                                               out.act_max, out.q.dtype),
                     [a, b], [CM.format("quantized_magnitude_s16")])

    # --- int8 -> int8 rescaling outside the op groups -------------------------------------------

    def _requantize_group(self, qnode):
        """quantize(dequantize(x)): the lowering's requantize, (x - zp) << 20 rescaled once; with
        int16 on either side requantize_s16 (an int16 input shifted by 15)."""
        dq = qnode.inputs[0].producer
        q_in, q_out = QParams(dq), QParams(qnode)
        if dq.inputs[0].dtype != q_in.dtype.name:
            raise NotInteger("the dequantize's input is not of its dtype")
        source = Source(dq.inputs[0], q_in, False)
        if q_in.int16 or q_out.int16:
            return [qnode], self._requantized16(source, q_out)
        return [qnode], self._requantized(source, q_out)

    @staticmethod
    def _requantized16(source, q_out):
        left = left_shift_s16(source.q.dtype)
        mult, shift = _multipliers([source.q.scale / (q_out.scale * (1 << left))])
        return Group(lambda env: requantize_s16(source.get(env), source.q.zp, q_out.zp, mult[0],
                                                shift[0], q_out.dtype, q_out.qmin, q_out.qmax),
                     [source], [REQUANTIZE_S16])

    @staticmethod
    def _requantized(source, q_out):
        mult, shift = _multipliers([source.q.scale / (q_out.scale * (1 << 20))])
        return Group(lambda env: requantize(source.get(env), source.q.zp, q_out.zp, mult[0],
                                            shift[0], q_out.qmin, q_out.qmax),
                     [source], [REQUANTIZE])

    def _cat(self, node, q_out):
        """cat of dequantized int8 inputs, quantized: an int8 cat, inputs whose qparams differ
        from the output's (or that might lie outside its range) requantized to it. An int16 cat
        moves integers only when no input needs requantizing (else it stays float)."""
        sources = [self._source(v, q_out.dtype.name) for v in node.inputs]
        info = np.iinfo(q_out.dtype)
        full_range = q_out.qmin <= info.min and q_out.qmax >= info.max
        parts, ops = [], []
        for s in sources:
            if s.q.key() == q_out.key() and (full_range or s.moved or s.value.kind == "node_output"):
                parts.append(s)
            elif q_out.int16:
                raise NotInteger("an int16 cat input to requantize")
            else:
                group = self._requantized(s, q_out)
                parts.append(group)
                ops += group.ops
        dim = node.attrs.get("dim", 0) % len(node.outputs[0].shape)

        def run(env):
            return np.concatenate([p.fn(env) if isinstance(p, Group) else p.get(env)
                                   for p in parts], axis=dim).astype(q_out.dtype)

        return Group(run, sources, ops)

    # --- evaluation -----------------------------------------------------------------------------

    def _float_op(self, node, env):
        """The node's own op on its (float) inputs, run as a one-node cortexm graph."""
        g = cortexm.Graph()
        args, feeds = [], []
        for i, v in enumerate(node.inputs):
            if v is None:
                args.append(None)
            elif v.kind == "constant":
                args.append(g.add_constant(f"c{i}", np.asarray(v.data), qparams=v.qparams))
            else:
                args.append(g.add_input(f"x{i}", list(v.shape), v.dtype, qparams=v.qparams))
                feeds.append(env[v.id])
        outs = g.call(node.op, args, node.attrs)
        g.outputs = list(outs) if isinstance(outs, tuple) else [outs]
        result = g.run(*feeds)
        return list(result) if isinstance(result, tuple) else [result]

    def _needed(self):
        """Ids of the nodes the outputs depend on; a group reads its sources, not its float
        intermediates or its dequantized constants."""
        needed_values = set(self.graph_outputs)
        needed = set()
        for node in reversed(self.nodes):
            if not any(v.id in needed_values for v in node.outputs):
                continue
            needed.add(node.id)
            if node.id in self.groups:
                sources = [s.value for s in self.groups[node.id].sources]
            else:
                sources = [v for v in node.inputs if v is not None]
            needed_values.update(v.id for v in sources)
        return needed

    def run(self, *inputs):
        return self._evaluate(inputs, self.needed)

    def group_deviation(self, *inputs):
        """Per integer group (by its quantize node's name): (cortex_m ops, max, mean) of
        |integer result - the graph's float op quantized| in LSB, both from the same int8
        inputs; the float ops of the whole graph run, so this is as slow as the fake-quant graph."""
        deviation = {}

        def compare(node, integer, float_result):
            diff = np.abs(integer.astype(np.int64) - float_result.astype(np.int64))
            ops = self.groups[node.id].ops
            deviation[node.name] = (ops, int(diff.max(initial=0)), float(diff.mean()))

        self._evaluate(inputs, {n.id for n in self.nodes}, compare)
        return deviation

    def _evaluate(self, inputs, needed, compare=None):
        env, done = {}, {}
        for v, x in zip(self.graph.inputs, inputs):
            env[v.id] = np.asarray(x)
        for v in self.graph.constants:
            env[v.id] = np.asarray(v.data)
        for node in self.nodes:
            if node.id not in needed:
                continue
            if node.op == Q:
                a = node.attrs
                if node.id not in self.groups or compare is not None:
                    env[node.outputs[0].id] = quantize_per_tensor(
                        env[node.inputs[0].id], a["scale"], a["zero_point"], a["quant_min"],
                        a["quant_max"], np.dtype(a["dtype"]))
                if node.id in self.groups:
                    group = self.groups[node.id]
                    if id(group) not in done:
                        done[id(group)] = np.asarray(group.fn(env)).astype(np.dtype(a["dtype"]))
                    if compare is not None:
                        compare(node, done[id(group)], env[node.outputs[0].id])
                    env[node.outputs[0].id] = done[id(group)]
            elif node.op == DQ:
                a = node.attrs
                env[node.outputs[0].id] = dequantize_per_tensor(env[node.inputs[0].id], a["scale"],
                                                                a["zero_point"])
            else:  # per-channel dequantize, data movement and float ops: the graph's own op
                for v, y in zip(node.outputs, self._float_op(node, env)):
                    env[v.id] = y
        return [env[v.id] for v in self.graph.outputs]
