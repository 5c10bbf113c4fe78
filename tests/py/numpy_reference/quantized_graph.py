"""Integer reference for a quantized cortexm graph (the Q/DQ form cortexm.quantize returns).

It walks the graph and, at every int8 quantize_per_tensor, looks for the group
`dequantize -> op [-> relu / hardtanh / clamp / hardsigmoid] -> quantize` behind it. When op is a
convolution (1-D / 2-D, grouped, depthwise), linear / addmm, add, mul, max / avg pool or a global
mean, and its inputs are int8 (weights symmetric, per channel), the group is computed with integer
semantics by the numpy references of this package: CMSIS-NN arithmetic, multipliers and shifts
from the float scales by TFLite's quantize_multiplier rules, double-rounding requantize, int32
accumulators and biases. This is written from the graph's qparams alone, apart from the C++ passes.

Everything else (softmax, log_softmax, hardswish, sigmoid / tanh of the LSTM, data movement, ...) is
evaluated as the graph says: its dequantized float inputs, the graph's own float op run as a
one-node cortexm graph, then quantize. So the float fallback arithmetic is shared with cortexm's
interpreter while the integer arithmetic is independent. quantize / dequantize are numpy
(reference/quantize.py).
"""

from __future__ import annotations

import numpy as np

import cortexm

from . import conv, elementwise, linear, pool
from .common import quantize_multiplier
from .quantize import dequantize_per_tensor, quantize_per_tensor

Q = "quantized_decomposed.quantize_per_tensor.default"
DQ = "quantized_decomposed.dequantize_per_tensor.default"
DQ_CHANNEL = "quantized_decomposed.dequantize_per_channel.default"
ACTIVATIONS = ("aten.relu.default", "aten.hardtanh.default", "aten.clamp.default",
               "aten.hardsigmoid.default")
INTEGER_OPS = ("aten.convolution.default", "aten.linear.default", "aten.addmm.default",
               "aten.add.Tensor", "aten.mul.Tensor", "aten.max_pool2d.default",
               "aten.avg_pool2d.default", "aten.mean.dim", "aten.adaptive_avg_pool2d.default")


class NotInteger(Exception):
    """The group has no integer lowering; it is evaluated in float."""


def _users(value):
    return list(value.users)


def _activation(node):
    """(scale, offset, lo, hi): out = clamp(scale * x + offset, lo, hi) in float32 bounds."""
    a = node.attrs
    if node.op == "aten.relu.default":
        return 1.0, 0.0, np.float32(0), np.float32(np.inf)
    if node.op == "aten.hardtanh.default":
        return 1.0, 0.0, np.float32(a.get("min_val", -1.0)), np.float32(a.get("max_val", 1.0))
    if node.op == "aten.clamp.default":
        lo, hi = a.get("min"), a.get("max")
        return (1.0, 0.0, np.float32(-np.inf if lo is None else lo),
                np.float32(np.inf if hi is None else hi))
    return 1.0 / 6.0, 0.5, np.float32(0), np.float32(1)  # hardsigmoid = relu6(x + 3) / 6


class _Out:
    """The int8 output of a group: qparams, activation range, the tail's affine part."""

    def __init__(self, qnode, tail):
        a = qnode.attrs
        self.scale, self.zp = float(a["scale"]), int(a["zero_point"])
        self.qmin, self.qmax = int(a["quant_min"]), int(a["quant_max"])
        self.tail_scale, self.tail_offset = 1.0, 0.0
        self.act_min, self.act_max = self.qmin, self.qmax
        if tail is not None:
            self.tail_scale, self.tail_offset, lo, hi = _activation(tail)
            self.act_min = max(self.qmin, int(self._q(lo)))
            self.act_max = min(self.qmax, int(self._q(hi)))
            if self.act_min > self.act_max:
                raise NotInteger("empty activation range")

    def _q(self, v):
        return quantize_per_tensor(np.array([v], np.float32), self.scale, self.zp, self.qmin,
                                   self.qmax, np.int64)[0]


class QuantizedGraphReference:
    """Evaluates a quantized graph; run(*inputs) returns the graph outputs (float or int)."""

    def __init__(self, qgraph):
        self.graph = qgraph
        self.nodes = qgraph.nodes
        self.groups = {}   # quantize node id -> (core node, tail node or None)
        self.members = set()  # node ids computed inside an integer group
        for node in self.nodes:
            if node.op == Q and node.attrs["dtype"] == "int8":
                group = self._match(node)
                if group is not None:
                    self.groups[node.id] = group
                    self.members.update(n.id for n in group if n is not None)
        self.integer_ops = sorted(g[0].op for g in self.groups.values())
        self.needed = self._needed()
        self.plans = {}

    # --- matching -------------------------------------------------------------------------------

    def _match(self, qnode):
        v = qnode.inputs[0]
        producer = v.producer
        if producer is None:
            return None
        tail = None
        if producer.op in ACTIVATIONS and len(_users(v)) == 1:
            inner = producer.inputs[0]
            if inner.producer is not None and inner.producer.op in INTEGER_OPS and \
                    len(_users(inner)) == 1:
                tail, producer = producer, inner.producer
        if producer.op not in INTEGER_OPS or len(_users(producer.outputs[0])) != 1:
            return None
        if tail is not None and tail.op == "aten.hardsigmoid.default" and \
                producer.op not in ("aten.convolution.default", "aten.linear.default",
                                    "aten.addmm.default"):
            return None
        if tail is not None and producer.op in ("aten.avg_pool2d.default", "aten.mean.dim",
                                                "aten.adaptive_avg_pool2d.default", "aten.mul.Tensor"):
            return None
        try:
            self._plan(producer, tail, qnode)
        except NotInteger:
            return None
        return producer, tail

    @staticmethod
    def _int8_source(value):
        """(int8 value, scale, zero point) behind a per-tensor dequantize, else NotInteger."""
        p = value.producer if value is not None else None
        if p is None or p.op != DQ or p.inputs[0].dtype != "int8":
            raise NotInteger("input is not a dequantized int8 value")
        a = p.attrs
        return p.inputs[0], float(a["scale"]), int(a["zero_point"])

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

    @staticmethod
    def _multipliers(real_scales):
        pairs = [quantize_multiplier(float(r)) for r in real_scales]
        if any(not (0 < r < 2.0**30) for r in real_scales):
            raise NotInteger("requantize scale out of range")
        return [m for m, _ in pairs], [s for _, s in pairs]

    def _tail_bias(self, out, bias, bias_scales):
        if out.tail_offset == 0.0:
            return bias
        return bias + np.rint(out.tail_offset / (out.tail_scale * np.asarray(bias_scales))).astype(
            np.int64)

    # --- integer plans: each returns fn(env) -> int8 array, or raises NotInteger -----------------

    def _plan(self, node, tail, qnode):
        out = _Out(qnode, tail)
        if out.qmin < -128 or out.qmax > 127:
            raise NotInteger("output range is not int8")
        return getattr(self, "_plan_" + node.op.split(".")[1])(node, out)

    def _plan_convolution(self, node, out):
        a = node.attrs
        if a.get("transposed", False):
            raise NotInteger("transposed")
        x, s_in, zp_in = self._int8_source(node.inputs[0])
        rank = len(x.shape)
        if rank not in (3, 4):
            raise NotInteger("rank")
        w_value = node.inputs[1]
        c_out = w_value.shape[0]
        w, s_w, zp_w = self._constant_channels(w_value, 0, c_out)
        if any(zp_w) or w.dtype != np.int8:
            raise NotInteger("asymmetric or non-int8 weights")
        bias_scales = [s_in * s for s in s_w]
        bias = self._tail_bias(out, self._bias(node.inputs[2] if len(node.inputs) > 2 else None,
                                               bias_scales), bias_scales)
        mult, shift = self._multipliers([b * out.tail_scale / out.scale for b in bias_scales])

        def two(v, fill):
            v = list(v)
            return [fill] + v if rank == 3 else (v * 2 if len(v) == 1 else v)

        stride, padding = two(a["stride"], 1), two(a["padding"], 0)
        dilation = two(a["dilation"], 1)
        groups = int(a.get("groups", 1))
        c_in = x.shape[1]
        w4 = w if rank == 4 else w[:, :, None, :]  # OIHW
        depthwise = groups == c_in and c_out % c_in == 0

        def run(env):
            xi = env[x.id]
            x4 = xi if rank == 4 else xi[:, :, None, :]
            nhwc = np.transpose(x4, (0, 2, 3, 1))
            if depthwise:
                weight = np.transpose(w4, (1, 2, 3, 0))  # [1, KH, KW, C_out]
                y = conv.depthwise_conv2d(nhwc, weight, bias, stride, padding, dilation,
                                          c_out // c_in, -zp_in, out.zp, mult, shift,
                                          out.act_min, out.act_max)
            else:
                weight = np.transpose(w4, (0, 2, 3, 1))  # OHWI
                y = conv.conv2d(nhwc, weight, bias, stride, padding, dilation, -zp_in, out.zp,
                                mult, shift, out.act_min, out.act_max)
            y = np.transpose(y, (0, 3, 1, 2))
            return y if rank == 4 else y[:, :, 0, :]

        return run

    def _linear_plan(self, x_value, w_nk, s_w, zp_w, bias_value, out):
        x, s_in, zp_in = self._int8_source(x_value)
        if len(set(zp_w)) != 1 or w_nk.dtype != np.int8:
            raise NotInteger("weight zero points differ")
        bias_scales = [s_in * s for s in s_w]
        bias = self._tail_bias(out, self._bias(bias_value, bias_scales), bias_scales)
        mult, shift = self._multipliers([b * out.tail_scale / out.scale for b in bias_scales])
        return lambda env: linear.linear(env[x.id], w_nk, bias, -zp_in, -zp_w[0], out.zp, mult,
                                         shift, out.act_min, out.act_max)

    def _plan_linear(self, node, out):
        w_value = node.inputs[1]
        n = w_value.shape[0]
        w, s_w, zp_w = self._constant_channels(w_value, 0, n)
        return self._linear_plan(node.inputs[0], w, s_w, zp_w,
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
        return self._linear_plan(node.inputs[1], w, s_w, zp_w, bias, out)

    def _plan_add(self, node, out):
        if node.attrs.get("alpha", 1.0) != 1.0:
            raise NotInteger("alpha")
        (a, sa, za), (b, sb, zb) = (self._int8_source(v) for v in node.inputs[:2])
        (ma, sha), (mb, shb), (mo, sho) = elementwise.add_params(sa, sb, out.scale)
        if not 0 < 2.0 * max(sa, sb) / ((1 << 20) * out.scale) < 2.0**30:
            raise NotInteger("scale")
        return lambda env: elementwise.add(env[a.id], za, ma, sha, env[b.id], zb, mb, shb, out.zp,
                                           mo, sho, out.act_min, out.act_max)

    def _plan_mul(self, node, out):
        (a, sa, za), (b, sb, zb) = (self._int8_source(v) for v in node.inputs[:2])
        mo, sho = self._multipliers([sa * sb / out.scale])
        return lambda env: elementwise.mul(env[a.id], za, env[b.id], zb, out.zp, mo[0], sho[0],
                                           out.act_min, out.act_max)

    def _pool_input(self, node, out):
        x, s, zp = self._int8_source(node.inputs[0])
        if (s, zp) != (out.scale, out.zp) or len(x.shape) != 4:
            raise NotInteger("pools do not rescale")
        return x

    @staticmethod
    def _pool_geometry(node, in_hw, out_hw):
        """kernel, stride, (top, left, bottom, right): the bottom / right padding reproduces
        torch's output extent (ceil_mode's partial windows)."""
        a = node.attrs

        def pair(v):
            v = list(v)
            return v * 2 if len(v) == 1 else v

        kernel = pair(a["kernel_size"])
        stride = pair(a["stride"]) if a.get("stride") else kernel
        padding = pair(a.get("padding", [0]))
        after = []
        for size, k, s, p, o in zip(in_hw, kernel, stride, padding, out_hw):
            extra = max(0, (o - 1) * s + k - size - p)
            if extra >= k or p >= k:
                raise NotInteger("windows outside the input")
            after.append(extra)
        return kernel, stride, (padding[0], padding[1], after[0], after[1])

    def _plan_max_pool2d(self, node, out):
        x = self._pool_input(node, out)
        if any(d != 1 for d in node.attrs.get("dilation", [1])):
            raise NotInteger("dilation")
        kernel, stride, pads = self._pool_geometry(node, x.shape[2:], node.outputs[0].shape[2:])
        return lambda env: np.transpose(pool.max_pool2d(
            np.transpose(env[x.id], (0, 2, 3, 1)), kernel, stride, pads, out.act_min,
            out.act_max), (0, 3, 1, 2))

    def _plan_avg_pool2d(self, node, out):
        x = self._pool_input(node, out)
        a = node.attrs
        if a.get("divisor_override") is not None:
            raise NotInteger("divisor_override")
        kernel, stride, pads = self._pool_geometry(node, x.shape[2:], node.outputs[0].shape[2:])
        if any(pads) and a.get("count_include_pad", True):
            raise NotInteger("count_include_pad with padding")
        return self._avg(x, kernel, stride, pads, out, node.outputs[0].shape)

    def _avg(self, x, kernel, stride, pads, out, out_shape):
        def run(env):
            y = pool.avg_pool2d(np.transpose(env[x.id], (0, 2, 3, 1)), kernel, stride, pads,
                                out.act_min, out.act_max)
            return np.transpose(y, (0, 3, 1, 2)).reshape(out_shape)
        return run

    def _plan_mean(self, node, out):
        x = self._pool_input(node, out)
        dims = sorted(d % 4 for d in node.attrs["dim"])
        if dims != [2, 3]:
            raise NotInteger("mean over dims other than H and W")
        return self._avg(x, list(x.shape[2:]), [1, 1], (0, 0, 0, 0), out, node.outputs[0].shape)

    def _plan_adaptive_avg_pool2d(self, node, out):
        x = self._pool_input(node, out)
        in_hw, out_hw = x.shape[2:], node.outputs[0].shape[2:]
        if any(i % o for i, o in zip(in_hw, out_hw)):
            raise NotInteger("extents do not divide")
        kernel = [i // o for i, o in zip(in_hw, out_hw)]
        return self._avg(x, kernel, kernel, (0, 0, 0, 0), out, node.outputs[0].shape)

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
        """Ids of the nodes the outputs depend on; a group reads its int8 sources, not its float
        intermediates or its dequantized constants."""
        needed_values = {v.id for v in self.graph.outputs}
        needed = set()
        for node in reversed(self.nodes):
            if node.id in self.members or not any(v.id in needed_values for v in node.outputs):
                continue
            needed.add(node.id)
            if node.id in self.groups:
                core = self.groups[node.id][0]
                sources = [v.producer.inputs[0] for v in core.inputs
                           if v is not None and v.producer is not None and v.producer.op == DQ]
            else:
                sources = [v for v in node.inputs if v is not None]
            needed_values.update(v.id for v in sources)
        return needed

    def run(self, *inputs):
        env = {}
        for v, x in zip(self.graph.inputs, inputs):
            env[v.id] = np.asarray(x)
        for v in self.graph.constants:
            env[v.id] = np.asarray(v.data)
        for node in self.nodes:
            if node.id not in self.needed:
                continue
            if node.id in self.groups:
                if node.id not in self.plans:
                    core, tail = self.groups[node.id]
                    self.plans[node.id] = self._plan(core, tail, node)
                env[node.outputs[0].id] = self.plans[node.id](env).astype(np.int8)
            elif node.op == Q:
                a = node.attrs
                env[node.outputs[0].id] = quantize_per_tensor(
                    env[node.inputs[0].id], a["scale"], a["zero_point"], a["quant_min"],
                    a["quant_max"], np.dtype(a["dtype"]))
            elif node.op == DQ:
                a = node.attrs
                env[node.outputs[0].id] = dequantize_per_tensor(env[node.inputs[0].id], a["scale"],
                                                                a["zero_point"])
            else:  # per-channel dequantize, data movement and float ops: the graph's own op
                for v, y in zip(node.outputs, self._float_op(node, env)):
                    env[v.id] = y
        return [env[v.id] for v in self.graph.outputs]
