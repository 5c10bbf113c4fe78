// Lowered graph + arena layout -> program bytes. Each runnable op maps to one kernel id and its
// params table; the bytes are loaded back through the runtime's verifier before they are returned.
#include "program/writer.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "graph/errors.h"
#include "graph/layout.h"
#include "program/params_builder.h"
#include "program/program_generated.h"
#include "planner/memory_plan.h"
#include "program/status_message.h"
#include "runtime/program.h"
#include "target/target_config.h"

namespace cortexm::program {

namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// A program can hold the op: its descriptor encodes a kernel id and params table.
bool runnable(const std::string& op) {
  const OpSchema* schema = OpRegistry::global().find(op);
  return schema && schema->encode;
}

int64_t align16(int64_t v) { return (v + 15) / 16 * 16; }

fb::Isa fb_isa(Isa isa) { return static_cast<fb::Isa>(static_cast<uint8_t>(isa)); }

// FNV-1a over a constant's bytes: buckets for the exact comparison below.
uint64_t bytes_hash(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw());
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < t.nbytes(); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && (a.nbytes() == 0 || std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
}

// One tensor of the program can stand for both: same dtype, shape, qparams and bytes.
bool same_constant(const Value& a, const Value& b) { return a.info == b.info && same_bytes(a.data, b.data); }

}  // namespace

std::vector<ProgramProblem> program_problems(const Graph& graph) {
  std::vector<ProgramProblem> problems;
  flatbuffers::FlatBufferBuilder scratch_builder;
  ParamsBuilder params(scratch_builder);
  for (NodeId id : graph.order()) {
    const Node& node = graph.node(id);
    auto problem = [&](const std::string& reason) { problems.push_back({node.name, node.op, node.source, reason}); };
    if (!runnable(node.op)) {
      const auto lowering = node.meta.find("lowering");
      problem("the runtime has no kernel for it" +
              (lowering != node.meta.end() ? " (lowering: " + lowering->second + ")" : std::string()) +
              ": lower it (cortexm.lower) at a precision docs/ops.md gives its op a kernel in, or rewrite "
              "it with ops whose float fallback is yes there");
      continue;
    }
    bool folded = false;
    for (ValueId in : node.inputs) {
      if (in == kNoValue) continue;
      const TensorInfo& info = graph.value(in).info;
      folded = folded || (info.qparams && is_integer(info.dtype) && node.op.rfind("aten._", 0) == 0);
    }
    if (folded) {
      problem("it reads a quantized value in the folded form; run cortexm.lower first");
      continue;
    }
    try {  // the node's own attributes may have no program form (a transposed float convolution)
      OpRegistry::global().get(node.op).encode(params, node_context(graph, id));
    } catch (const std::exception& e) {
      const std::string prefix = "node '" + node.name + "' (" + node.op + "): ";  // OpArgs::fail's
      const std::string what = e.what();
      problem(what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what);
    }
  }
  return problems;
}

std::string problem_line(const ProgramProblem& p) {
  return "node '" + p.node + "' (" + p.op + ")" + (p.source.empty() ? "" : " in module '" + p.source + "'") +
         " cannot run in a cortexm program: " + p.reason;
}

void check_runnable(const Graph& graph) {
  const std::vector<ProgramProblem> problems = program_problems(graph);
  if (problems.empty()) return;
  if (problems.size() == 1) throw UnsupportedError(problem_line(problems[0]));
  std::string message = std::to_string(problems.size()) + " nodes cannot run in a cortexm program:";
  for (const ProgramProblem& p : problems) message += "\n  " + problem_line(p);
  throw UnsupportedError(message);
}

int64_t required_scratch(const Graph& graph, NodeId id, Isa isa) {
  const OpSchema& schema = OpRegistry::global().get(graph.node(id).op);
  return static_cast<int64_t>(schema.planned_scratch(node_context(graph, id), isa));
}

ArenaLayout sequential_layout(const Graph& graph, Isa isa) {
  ArenaLayout layout;
  int64_t cursor = 0;
  auto place = [&](ValueId v) {
    layout.value_offsets[v] = cursor;
    cursor = align16(cursor + static_cast<int64_t>(graph.value(v).info.nbytes()));
  };
  for (ValueId v : graph.inputs()) place(v);
  const auto& order = graph.order();
  for (size_t step = 0; step < order.size(); ++step) {
    const Node& n = graph.node(order[step]);
    const int64_t scratch = required_scratch(graph, n.id, isa);
    if (scratch > 0) {
      layout.scratch[static_cast<int32_t>(step)] = {cursor, scratch};
      cursor = align16(cursor + scratch);
    }
    if (is_aliasing_view(graph, n)) {
      layout.value_offsets[n.outputs[0]] = layout.value_offsets.at(n.inputs[0]);
      continue;
    }
    for (ValueId out : n.outputs) place(out);
  }
  layout.arena_size = cursor;
  return layout;
}

ArenaLayout planned_layout(const Graph& graph, Isa isa, int64_t* extra_scratch, const PlanOptions& options) {
  const MemoryPlan plan = plan_memory(graph, options);
  ArenaLayout layout;
  for (const ValueSlot& slot : plan.values) layout.value_offsets[slot.value_id] = slot.offset;
  for (const ScratchSlot& slot : plan.scratch) layout.scratch[slot.node_index] = {slot.offset, slot.size};
  layout.arena_size = plan.arena_size;
  // Scratch the plan does not know about: one region after the arena, reused by every such op.
  int64_t extra = 0;
  const auto& order = graph.order();
  for (size_t step = 0; step < order.size(); ++step) {
    const int64_t need = required_scratch(graph, order[step], isa);
    const auto it = layout.scratch.find(static_cast<int32_t>(step));
    if (need > 0 && (it == layout.scratch.end() || it->second.second < need)) {
      layout.scratch[static_cast<int32_t>(step)] = {align16(plan.arena_size), need};
      extra = std::max(extra, need);
    }
  }
  if (extra > 0) layout.arena_size = align16(plan.arena_size) + align16(extra);
  if (extra_scratch) *extra_scratch = extra;
  return layout;
}

std::string write_program(const Graph& graph, const ArenaLayout& layout, const WriteOptions& options) {
  check_runnable(graph);
  const Isa isa = parse_target(options.target).isa;
  FlatBufferBuilder b(1 << 16);

  // Tensors: every value an op or the graph touches, in first-use order. Constants equal in
  // dtype, shape, qparams and bytes (an unrolled RNN's weights, once per step) share one tensor.
  std::map<ValueId, int32_t> tensor_index;
  std::vector<ValueId> tensor_values;
  std::unordered_map<uint64_t, std::vector<ValueId>> constants_by_hash;
  auto use = [&](ValueId v) {
    if (v == kNoValue) return -1;
    auto it = tensor_index.find(v);
    if (it != tensor_index.end()) return it->second;
    const Value& value = graph.value(v);
    std::vector<ValueId>* same_hash = nullptr;
    if (value.kind == ValueKind::kConstant) {
      same_hash = &constants_by_hash[bytes_hash(value.data)];
      for (ValueId other : *same_hash)
        if (same_constant(value, graph.value(other))) return tensor_index[v] = tensor_index.at(other);
    }
    const int32_t index = static_cast<int32_t>(tensor_values.size());
    tensor_index[v] = index;
    tensor_values.push_back(v);
    if (same_hash) same_hash->push_back(v);
    return index;
  };
  for (ValueId v : graph.inputs()) use(v);
  for (NodeId id : graph.order()) {
    for (ValueId v : graph.node(id).inputs) use(v);
    for (ValueId v : graph.node(id).outputs) use(v);
  }
  for (ValueId v : graph.outputs()) use(v);

  // Constants: each 16-byte aligned in one blob; tensors whose bytes are equal (other dtype or
  // qparams) share one segment.
  std::vector<uint8_t> blob;
  std::vector<fb::ConstantSegment> segments;
  std::map<ValueId, uint32_t> constant_index;
  std::unordered_map<uint64_t, std::vector<std::pair<ValueId, uint32_t>>> segments_by_hash;
  for (ValueId v : tensor_values) {
    const Value& value = graph.value(v);
    if (value.kind != ValueKind::kConstant) continue;
    auto& same_hash = segments_by_hash[bytes_hash(value.data)];
    const auto shared = std::find_if(same_hash.begin(), same_hash.end(), [&](const auto& seen) {
      return same_bytes(value.data, graph.value(seen.first).data);
    });
    if (shared != same_hash.end()) {
      constant_index[v] = shared->second;
      continue;
    }
    const size_t offset = static_cast<size_t>(align16(static_cast<int64_t>(blob.size())));
    const size_t size = value.data.nbytes();
    blob.resize(offset + size, 0);
    if (size) std::memcpy(blob.data() + offset, value.data.raw(), size);
    constant_index[v] = static_cast<uint32_t>(segments.size());
    same_hash.emplace_back(v, constant_index[v]);
    segments.emplace_back(offset, size);
  }
  blob.resize(static_cast<size_t>(align16(static_cast<int64_t>(blob.size()))), 0);

  std::vector<Offset<fb::Tensor>> tensors;
  for (ValueId v : tensor_values) {
    const Value& value = graph.value(v);
    const TensorInfo& info = value.info;
    Offset<fb::QParams> qparams = 0;
    // A constant's quantization is folded into the params of the integer kernels that read it (its
    // requantization multipliers): the runtime never reads it, so only arena tensors store theirs.
    const bool stores_qparams = info.qparams && value.kind != ValueKind::kConstant;
    if (stores_qparams) {
      const QuantParams& q = *info.qparams;
      // The program's range is int32: an int64 tensor's (the 16x8 conv bias) saturates.
      const auto int32_range = [](int64_t v) {
        return static_cast<int32_t>(std::max<int64_t>(INT32_MIN, std::min<int64_t>(INT32_MAX, v)));
      };
      qparams = fb::CreateQParams(b, b.CreateVector(q.scales), b.CreateVector(q.zero_points),
                                  static_cast<int32_t>(q.axis), int32_range(q.quant_min),
                                  int32_range(q.quant_max));
    }
    const bool constant = value.kind == ValueKind::kConstant;
    std::vector<uint8_t> dim_order;
    if (!constant && !info.contiguous())  // constants hold logical, contiguous bytes
      for (int64_t d : info.dim_order) dim_order.push_back(static_cast<uint8_t>(d));
    int64_t offset = 0;
    if (!constant) {
      const auto it = layout.value_offsets.find(v);
      if (it == layout.value_offsets.end())
        throw GraphError("memory plan has no offset for value '" + value.name + "'");
      offset = it->second;
    }
    const auto name = b.CreateString(value.name);
    const auto shape = b.CreateVector(info.shape);
    const auto order = b.CreateVector(dim_order);
    fb::TensorBuilder t(b);
    t.add_name(name);
    t.add_dtype(static_cast<fb::DType>(static_cast<uint8_t>(info.dtype)));
    t.add_shape(shape);
    t.add_dim_order(order);
    if (stores_qparams) t.add_qparams(qparams);
    t.add_location(constant ? fb::Location_Constant : fb::Location_Arena);
    t.add_offset(static_cast<uint64_t>(offset));
    if (constant) t.add_constant(constant_index.at(v));
    tensors.push_back(t.Finish());
  }

  std::vector<Offset<fb::Op>> ops;
  const auto& order = graph.order();
  for (size_t step = 0; step < order.size(); ++step) {
    const Node& node = graph.node(order[step]);
    ParamsBuilder params(b);
    const EncodedOp e = OpRegistry::global().get(node.op).encode(params, node_context(graph, node.id));
    std::vector<int32_t> ins, outs;
    for (ValueId v : node.inputs) ins.push_back(v == kNoValue ? -1 : tensor_index.at(v));
    for (ValueId v : node.outputs) outs.push_back(tensor_index.at(v));
    const int64_t need = required_scratch(graph, node.id, isa);
    // The lowering recorded the scratch of the isa it lowered for (AnnotateScratch).
    for (const auto& [name, value] : node.attrs) {
      const int64_t* lowered = std::get_if<int64_t>(&value);
      if (name != "scratch_bytes" || !lowered || *lowered == 0 || *lowered == need) continue;
      throw GraphError("node '" + node.name + "' (" + node.op + ") was lowered for another isa: it " +
                       "records " + std::to_string(*lowered) + " bytes of scratch, its kernel on " +
                       options.target + " (" + isa_name(isa) + ") needs " + std::to_string(need) +
                       "; lower and write the program for the same target");
    }
    int64_t scratch_offset = 0, scratch_size = 0;
    const auto it = layout.scratch.find(static_cast<int32_t>(step));
    if (it != layout.scratch.end()) std::tie(scratch_offset, scratch_size) = it->second;
    if (scratch_size < need)
      throw GraphError("memory plan gives node '" + node.name + "' (" + node.op + ") " +
                       std::to_string(scratch_size) + " bytes of scratch, its kernel needs " +
                       std::to_string(need));
    ops.push_back(fb::CreateOp(b, b.CreateString(node.name), static_cast<fb::KernelId>(e.kernel_id),
                               static_cast<fb::OpParams>(e.params_type), Offset<void>(e.params),
                               b.CreateVector(ins), b.CreateVector(outs),
                               static_cast<uint64_t>(scratch_offset), static_cast<uint64_t>(scratch_size)));
  }

  std::vector<int32_t> inputs, outputs;
  for (ValueId v : graph.inputs()) inputs.push_back(tensor_index.at(v));
  for (ValueId v : graph.outputs()) outputs.push_back(tensor_index.at(v));

  auto bundled_tensor = [&](const Tensor& t) {
    b.ForceVectorAlignment(t.nbytes(), 1, runtime::kAlignment);
    return fb::CreateBundledTensor(b, b.CreateVector(static_cast<const uint8_t*>(t.raw()), t.nbytes()));
  };
  std::vector<Offset<fb::BundledCase>> cases;
  for (const BundledCase& c : options.bundled) {
    std::vector<Offset<fb::BundledTensor>> ins, outs;
    for (const Tensor& t : c.inputs) ins.push_back(bundled_tensor(t));
    for (const Tensor& t : c.expected_outputs) outs.push_back(bundled_tensor(t));
    cases.push_back(fb::CreateBundledCase(b, b.CreateVector(ins), b.CreateVector(outs)));
  }

  b.ForceVectorAlignment(blob.size(), 1, runtime::kAlignment);
  const auto constant_data = b.CreateVector(blob);
  const auto program = fb::CreateProgram(
      b, runtime::kSchemaVersion, b.CreateString(options.target), fb_isa(isa), b.CreateVector(tensors),
      b.CreateVector(ops), b.CreateVector(inputs), b.CreateVector(outputs),
      static_cast<uint64_t>(layout.arena_size), b.CreateVectorOfStructs(segments), constant_data,
      b.CreateVector(cases));
  fb::FinishSizePrefixedProgramBuffer(b, program);
  std::string bytes(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());

  // The runtime's own verifier is the last check: what it rejects is never written.
  void* aligned = ::operator new(bytes.size(), std::align_val_t(runtime::kAlignment));
  std::memcpy(aligned, bytes.data(), bytes.size());
  runtime::Program loaded;
  const runtime::Status status = runtime::Program::load(aligned, bytes.size(), &loaded);
  std::string message;
  if (!status.ok()) message = status_message(status, aligned, bytes.size(), "program");
  ::operator delete(aligned, std::align_val_t(runtime::kAlignment));
  if (!status.ok()) throw GraphError("cannot write the program: " + message);
  return bytes;
}

}  // namespace cortexm::program
