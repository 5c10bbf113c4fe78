// Op schemas and the registry: per op, its tensor inputs, typed attributes, shape/dtype inference
// and the reference kernel the interpreter calls. Ops register from src/ops (one op per file).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cortexm/kernels/host_variant.h"
#include "cortexm/kernels/isa.h"
#include "graph/attr.h"
#include "graph/tensor.h"

namespace cortexm {

namespace program {
class ParamsBuilder;  // program/params_builder.h
}

struct InputSpec {
  std::string name;
  bool optional = false;  // may be absent (kNoValue), e.g. a convolution's bias
  bool variadic = false;  // last input only: one or more tensors (cat's tensors)
};

struct AttrSpec {
  std::string name;
  AttrKind kind;
  bool nullable = false;                    // None is allowed
  std::optional<AttrValue> default_value;  // absent means required
};

// Read access to a node's attributes, with errors that name the node and the op.
class OpArgs {
 public:
  OpArgs(const std::string& op, const std::string& node, const Attrs& attrs)
      : op_(op), node_(node), attrs_(attrs) {}

  const std::string& op() const { return op_; }
  const std::string& node_name() const { return node_; }
  const Attrs& attrs() const { return attrs_; }

  const AttrValue& attr(const std::string& name) const;
  bool is_none(const std::string& name) const { return attr_is_none(attr(name)); }
  int64_t i(const std::string& name) const;
  double f(const std::string& name) const;
  bool b(const std::string& name) const;
  const std::string& s(const std::string& name) const;
  const std::vector<int64_t>& ints(const std::string& name) const;
  const std::vector<double>& floats(const std::string& name) const;
  DType dtype(const std::string& name) const;

  // Throws GraphError: "node 'conv_3' (aten.convolution.default): <message>".
  [[noreturn]] void fail(const std::string& message) const;

 private:
  const std::string& op_;
  const std::string& node_;
  const Attrs& attrs_;
};

struct InferContext : OpArgs {
  InferContext(const std::string& op, const std::string& node, const Attrs& attrs,
               std::vector<const TensorInfo*> inputs)
      : OpArgs(op, node, attrs), inputs(std::move(inputs)) {}
  std::vector<const TensorInfo*> inputs;  // nullptr for an absent optional input

  const TensorInfo& input(size_t i) const;  // fails if absent
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
};

struct KernelContext : OpArgs {
  KernelContext(const std::string& op, const std::string& node, const Attrs& attrs,
                std::vector<const Tensor*> inputs, std::vector<Tensor>& outputs)
      : OpArgs(op, node, attrs), inputs(std::move(inputs)), outputs(outputs) {}
  std::vector<const Tensor*> inputs;  // nullptr for an absent optional input
  std::vector<Tensor>& outputs;       // allocated from the inferred infos
  // The x86 variant of the host kernels the node runs: run_graph reads it once for the whole graph.
  HostVariant host_variant = kHostVariantInUse;

  // Gives kernel params that choose an x86 variant (P::host_variant) this node's.
  template <class P>
  void take_host_variant(P* p) const {
    if constexpr (TakesHostVariant<P>::value) p->host_variant = host_variant;
  }

  const Tensor& input(size_t i) const { return *inputs[i]; }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  Tensor& output(size_t i = 0) const { return outputs[i]; }
};

// A node of a graph as the program writer sees it: its attributes and its inputs' and outputs'
// infos (all inferred).
struct NodeContext : InferContext {
  NodeContext(const std::string& op, const std::string& node, const Attrs& attrs,
              std::vector<const TensorInfo*> inputs, std::vector<const TensorInfo*> outputs)
      : InferContext(op, node, attrs, std::move(inputs)), outputs(std::move(outputs)) {}
  std::vector<const TensorInfo*> outputs;

  const TensorInfo& output(size_t i = 0) const { return *outputs.at(i); }
};

// An op's entry in a program file: its fb::KernelId, the fb::OpParams union type of its params
// table and that table's offset in the builder.
struct EncodedOp {
  uint8_t kernel_id = 0;
  uint8_t params_type = 0;
  uint32_t params = 0;
};

using InferFn = std::function<std::vector<TensorInfo>(const InferContext&)>;
using KernelFn = std::function<void(const KernelContext&)>;
using EncodeFn = std::function<EncodedOp(program::ParamsBuilder&, const NodeContext&)>;
using ScratchFn = std::function<size_t(const NodeContext&, Isa)>;
using InPlaceLagFn = std::function<int64_t(const NodeContext&)>;
using KeepsBytesFn = std::function<bool(const NodeContext&)>;
using QuantizeAttrsFn = std::function<void(Attrs&, const std::function<double(double)>& quantize)>;

struct OpSchema {
  std::string name;  // PyTorch's canonical form, e.g. "aten.convolution.default"
  std::vector<InputSpec> inputs;
  std::vector<AttrSpec> attrs;
  InferFn infer = nullptr;
  KernelFn kernel = nullptr;
  // Output aliases input 0's bytes when sizes match (views); the planner may skip the copy.
  bool is_view = false;
  // Output may alias this input when it dies here: the kernel reads element i of it before writing
  // element i and reads no other element of it (-1: never in place). See planner/memory_plan.h.
  int in_place_input = -1;
  // Set: the kernel writes its output over in_place_input from this many bytes below that input's
  // first byte (or more) instead of over the same bytes, its later reads being ahead of its
  // writes by that lag (a depthwise window still to read); input and output then need only be
  // channels-last contiguous of one dtype. Unset: element i over element i, same shape and layout.
  InPlaceLagFn in_place_lag = nullptr;
  // With in_place_input and no lag: the kernel streams forward, storing each block of its output
  // only after reading the input elements that block's bytes lie over (element i of at most the
  // input's element size lands within input elements 0..i), so its output may start at that
  // input's first byte with the same shape and dim order and an element no larger (a narrowing
  // quantize writes its int8 over the float input it reads).
  bool in_place_narrowing = false;
  // Pure data movement (no arithmetic): copies, views, permutes, pads, concatenations.
  bool is_data_movement = false;
  // With only constant inputs the op runs once at lowering and its output is stored as a constant
  // (FoldConstantNodes), as data movement does: a quantize of a constant.
  bool folds_constant_inputs = false;
  // Rewrites the attributes that hold real values (a pad value) into the stored integers
  // `quantize` gives for them, when FoldAndAnnotateQParams moves the op onto quantized data.
  QuantizeAttrsFn quantize_attrs = nullptr;
  // An int8 output at input 0's qparams: the quantizer passes quantization through the op
  // (data movement, max pooling, relu / clamp).
  bool keeps_qparams = false;
  // Output element i depends on input element i alone, whatever the shape (FuseViewCopy runs it
  // on the shape of a view after it).
  bool is_unary_elementwise = false;
  // Output holds input 0's elements in the same logical order (a reshape or a dim order change):
  // an elementwise op commutes with it, and its output aliases its input when the bytes match.
  bool keeps_element_order = false;
  // Set, for an op that moves elements but may leave every byte where it is (a permute that only
  // moves size-1 dims): whether the node's output has input 0's bytes, so that it aliases its
  // input as a keeps_element_order op does when the bytes match.
  KeepsBytesFn keeps_bytes = nullptr;
  // Its kernel clamps the output to activation_min / activation_max last: a following relu /
  // hardtanh / clamp at the same qparams folds into that range (ActivationFusion).
  bool fuses_activation = false;
  // The inputs laid out like the output, element for element (SinkDimOrderClones moves a clone of
  // such an input past the op when every one has the output's rank); empty: none.
  std::vector<int> layout_following_inputs;
  // How a program runs the op: its kernel id and params table from the node (unset: a program
  // cannot hold the op) and the scratch its kernel needs on an isa (unset: none).
  EncodeFn encode = nullptr;
  ScratchFn scratch = nullptr;

  // The scratch a program planned for `isa` reserves for the node: its kernel's need on `isa`. (A
  // runtime whose kernel needs more, like the host's scalar kernels, adds a region after the arena:
  // runtime::Program::required_arena_size.)
  size_t planned_scratch(const NodeContext& node, Isa isa) const;

  // Has activation_min / activation_max attributes (a following clamp can fold into them).
  bool has_activation_range() const;
  bool has_attr(const std::string& attr) const;
};

class OpRegistry {
 public:
  static const OpRegistry& global();

  void add(OpSchema schema);
  const OpSchema* find(const std::string& name) const;
  const OpSchema& get(const std::string& name) const;  // throws UnsupportedError if unknown
  std::vector<std::string> names() const;

 private:
  std::map<std::string, OpSchema> schemas_;
};

}  // namespace cortexm
