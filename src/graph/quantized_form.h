// The folded quantized form of float compute ops. After FoldAndAnnotateQParams an aten compute op
// may read quantized values (int8/int16/int32 with qparams) in place of their dequantized floats,
// and its outputs may be quantized values. Such a node infers and runs as the float op on the
// dequantized inputs, with quantized outputs quantized by their qparams: exactly DQ -> op -> Q,
// so the graph stays typed and runnable at every step of the lowering.
#pragma once

#include <vector>

#include "cortexm/kernels/quantize_per_tensor.h"
#include "graph/graph.h"
#include "graph/op_schema.h"

namespace cortexm {

bool is_quantized(const TensorInfo& info);  // integer dtype carrying qparams

// aten compute ops (not data movement) accept the folded form.
bool takes_folded_form(const OpSchema& schema);

// A node of such an op reading or producing quantized values.
bool is_in_folded_form(const Graph& graph, const Node& node);

// Inference for a node; current_outputs (may be empty) are the infos its outputs already have:
// a quantized one stays quantized (dtype and qparams kept) in the folded form.
std::vector<TensorInfo> infer_node(const OpSchema& schema, const InferContext& ctx,
                                   const std::vector<const TensorInfo*>& current_outputs);

// Runs a node's kernel; ctx.outputs hold the node's declared output infos.
void run_node(const OpSchema& schema, const KernelContext& ctx);

// The quantize kernel's params for per-tensor qparams q and an int8 / int16 dtype.
QuantizeParams quantize_params_of(const QuantParams& q, DType dtype);

// Real v as the quantize kernel stores it with per-tensor qparams q (int8 or int16; float32 math,
// infinities saturate).
int32_t quantize_scalar(float v, const QuantParams& q, DType dtype);

// Float32 arithmetic of the quantize / dequantize ops, shared with them.
Tensor dequantize_tensor(const Tensor& quantized);
void quantize_into(const Tensor& real, Tensor& quantized);

}  // namespace cortexm
