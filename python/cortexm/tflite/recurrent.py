"""SVDF (int8, TFLite Micro's integer SVDF: int16 activation state and time weights) ->
cortex_m.quantized_svdf_state then cortex_m.quantized_svdf_output, TFLite Micro's two stages and
their arithmetic (src/ops/svdf/).

TFLite Micro keeps the state in a variable tensor between Invoke calls, zeroed when the
interpreter is made. A cortexm program keeps no tensor between runs: the state is a program input
after the file's inputs and the new state a program output after the file's outputs; the caller
passes each run's new state to the next run (zeros first), as TFLite Micro's interpreter does
inside."""

from __future__ import annotations

import numpy as np

from .. import _core
from . import schema as S
from .importer import Malformed, Unsupported, tflite_op


def _f32(x) -> float:
    return float(np.float32(x))


def _multiplier(real: float, what: str) -> tuple[int, int]:
    """TFLite's QuantizeMultiplier of a real scale; a scale past cortexm's shift range is refused."""
    if not (np.isfinite(real) and real > 0):
        raise Unsupported(f"{what} scale {real!r} (must be finite and > 0)")
    multiplier, shift = _core.quantize_multiplier(real)
    if multiplier == 0 or (multiplier, shift) == (2 ** 31 - 1, 30) and real >= 2.0 ** 30:
        raise Unsupported(f"{what} scale {real!r} is outside the range of a 32-bit multiplier and shift")
    return multiplier, shift


def _per_tensor_constant(ctx, i: int, ttype: str, rank: int, what: str):
    t = ctx.tensor(i)
    if t.data is None:
        raise Unsupported(f"{what} tensor {i} '{t.name}' is not a constant")
    if t.type != ttype:
        raise Unsupported(f"{what} tensor {i} '{t.name}' is {t.type} ({ttype.lower()} is imported)")
    if t.data.ndim != rank:
        raise Malformed(f"{what} tensor {i} '{t.name}' has shape {list(t.data.shape)} (rank {rank} expected)")
    return t


@tflite_op("SVDF")
def svdf(ctx, op):
    """Inputs: input [B, I] int8, feature weights [F, I] int8, time weights [F, M] int16, bias
    [F / rank] int32, the state [B, F * M] int16 (a variable tensor); output [B, F / rank] int8.
    Multipliers from TFLite Micro's float32 scale products; its int8 SVDF clamps the output to int8
    and applies no fused activation, so neither does the import."""
    o = ctx.options(S.OPTIONS_SVDF)
    rank = o.scalar(S.SVDF_RANK, "int32", "rank")
    if len(op.inputs) != 5:
        raise Malformed(f"{len(op.inputs)} inputs (input, feature weights, time weights, bias, state expected)")
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    x_t, out_t = ctx.tensor(x_i), ctx.tensor(out_i)
    if (x_t.type, out_t.type) != ("INT8", "INT8"):
        raise Unsupported(f"input {x_t.type} and output {out_t.type}: the int8 SVDF is imported")
    wf = _per_tensor_constant(ctx, ctx.input_index(1), "INT8", 2, "feature weights")
    wt = _per_tensor_constant(ctx, ctx.input_index(2), "INT16", 2, "time weights")
    if op.inputs[3] < 0:
        raise Unsupported("no bias (TFLite Micro's int8 SVDF reads the bias's scale: give an int32 bias of zeros)")
    bias_t = _per_tensor_constant(ctx, op.inputs[3], "INT32", 1, "bias")
    state_i = ctx.input_index(4)
    state_t = ctx.tensor(state_i)
    if state_t.type != "INT16":
        raise Unsupported(f"state tensor {state_i} '{state_t.name}' is {state_t.type} (an int16 state is imported)")
    for t in (wf, wt, bias_t):
        if t.quant is None or not t.quant.per_tensor:
            raise Unsupported(f"tensor {t.index} '{t.name}' has no per-tensor scale")
        if int(t.quant.zero_points[0]) != 0:
            raise Unsupported(f"tensor {t.index} '{t.name}' has zero point {int(t.quant.zero_points[0])} "
                              "(TFLite Micro's SVDF reads none: 0 is imported)")
    if len(x_t.shape) != 2 or len(out_t.shape) != 2 or len(state_t.shape) != 2:
        raise Malformed(f"input {list(x_t.shape)}, output {list(out_t.shape)} and state {list(state_t.shape)} "
                        "must be rank 2")
    batches, input_size = x_t.shape
    filters, memory = wt.data.shape
    if rank < 1 or filters % rank:
        raise Malformed(f"rank {rank} does not divide the {filters} filters")
    if (list(wf.data.shape) != [filters, input_size] or list(state_t.shape) != [batches, filters * memory]
            or list(out_t.shape) != [batches, filters // rank] or bias_t.data.size != filters // rank):
        raise Malformed(f"feature weights {list(wf.data.shape)}, time weights {list(wt.data.shape)}, bias "
                        f"{list(bias_t.data.shape)}, state {list(state_t.shape)} and output {list(out_t.shape)} do "
                        f"not fit input {list(x_t.shape)} and rank {rank}")
    q_in, q_state, q_out = ctx.qparams(x_i), ctx.qparams(state_i), ctx.qparams(out_i)
    s_in, s_state, s_out = (np.float32(q["scales"][0]) for q in (q_in, q_state, q_out))
    s_wf, s_wt, s_bias = (np.float32(t.quant.scales[0]) for t in (wf, wt, bias_t))
    if not abs(float(s_bias) - float(np.float32(s_state * s_wt))) < 1e-5:
        raise Unsupported(f"bias scale {float(s_bias)!r} is not state scale x time weights scale (TFLite Micro "
                          "refuses the model)")
    m1, sh1 = _multiplier(_f32(s_in * s_wf / s_state), "input x feature weights / state")
    m2, sh2 = _multiplier(_f32(s_state * s_wt / s_out), "state x time weights / output")
    state = ctx.state_input(state_i)
    x = ctx.value(x_i, "file")
    c_wf = ctx.g.add_constant(f"op{op.index}_svdf_feature_weights", np.ascontiguousarray(wf.data))
    c_wt = ctx.g.add_constant(f"op{op.index}_svdf_time_weights", np.ascontiguousarray(wt.data))
    c_bias = ctx.g.add_constant(f"op{op.index}_svdf_bias", np.ascontiguousarray(bias_t.data.reshape(-1)))
    new_state = ctx.g.call("cortex_m.quantized_svdf_state.default", [x, state, c_wf],
                           {"memory": int(memory), "input_offset": -q_in["zero_points"][0],
                            "state_zero_point": q_state["zero_points"][0], "multiplier": m1, "shift": sh1},
                           source=ctx.source())
    new_state.qparams = {"scales": q_state["scales"], "zero_points": q_state["zero_points"],
                         "quant_min": -32768, "quant_max": 32767}
    y = ctx.g.call("cortex_m.quantized_svdf_output.default", [new_state, c_wt, c_bias],
                   {"rank": int(rank), "state_zero_point": q_state["zero_points"][0],
                    "output_zero_point": q_out["zero_points"][0], "multiplier": m2, "shift": sh2},
                   source=ctx.source())
    y.qparams = {"scales": q_out["scales"], "zero_points": q_out["zero_points"], "quant_min": -128, "quant_max": 127}
    ctx.set_value(out_i, y)
    ctx.state_output(new_state)
