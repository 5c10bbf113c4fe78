#include "planner/memory_plan.h"

#include <algorithm>
#include <map>

#include "graph/errors.h"
#include "graph/layout.h"
#include "graph/op_schema.h"
#include "planner/placement.h"

namespace cortexm {

namespace {

int64_t scratch_bytes(const Node& node) {
  for (const auto& [name, value] : node.attrs) {
    if (name != "scratch_bytes") continue;
    if (attr_is_none(value)) return 0;
    const int64_t* bytes = std::get_if<int64_t>(&value);
    if (bytes == nullptr || *bytes < 0)
      throw GraphError("plan_memory: node '" + node.name + "' (" + node.op + ") has scratch_bytes = " +
                       attr_to_string(value) + "; it must be an int >= 0");
    return *bytes;
  }
  return 0;
}

struct Span {
  int32_t first = 0;
  int32_t last = 0;
};

// Which values share one buffer: views with their input (is_aliasing_view) and, with in_place,
// outputs written over a dying input. `span` holds every value's own lifetime.
struct Groups {
  std::map<ValueId, ValueId> root;  // non-roots only
  std::map<ValueId, bool> in_place; // outputs written over their input's buffer
  ValueId root_of(ValueId v) const {
    auto it = root.find(v);
    return it == root.end() ? v : it->second;
  }
};

// Whether node (at `step`) may write its output over input in_place_input(node.op): that input's
// buffer holds nothing read after this step, no graph input or output, and no other input of the
// node; input and output have the same shape, dim order and bytes.
bool may_run_in_place(const Graph& graph, const Node& node, int32_t step, const Groups& groups,
                      const std::map<ValueId, Span>& group_span,
                      const std::map<ValueId, bool>& group_is_io) {
  const int k = in_place_input(node.op);
  if (k < 0 || static_cast<size_t>(k) >= node.inputs.size() || node.outputs.size() != 1) return false;
  const ValueId in = node.inputs[k];
  if (in == kNoValue || graph.value(in).kind == ValueKind::kConstant) return false;
  const ValueId r = groups.root_of(in);
  if (group_is_io.at(r) || group_span.at(r).last != step) return false;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId other = node.inputs[i];
    if (static_cast<int>(i) != k && other != kNoValue && graph.value(other).kind != ValueKind::kConstant &&
        groups.root_of(other) == r)
      return false;
  }
  const TensorInfo& a = graph.value(in).info;
  const TensorInfo& b = graph.value(node.outputs[0]).info;
  return a.shape == b.shape && a.effective_dim_order() == b.effective_dim_order() &&
         a.nbytes() == b.nbytes() && graph.value(r).info.nbytes() == b.nbytes();
}

// Groups values in execution order. A group's span covers its members' spans; it is "io" when a
// member is a graph input or output (its bytes belong to the caller then).
Groups group_values(const Graph& graph, const std::map<ValueId, Span>& span, bool in_place) {
  Groups groups;
  std::map<ValueId, Span> group_span;
  std::map<ValueId, bool> group_is_io;
  auto join = [&](ValueId v, ValueId r) {
    const Span& s = span.at(v);
    Span& g = group_span.try_emplace(r, s).first->second;
    g.first = std::min(g.first, s.first);
    g.last = std::max(g.last, s.last);
    const bool io = graph.value(v).kind == ValueKind::kInput || graph.is_graph_output(v);
    group_is_io[r] = group_is_io[r] || io;
    if (r != v) groups.root[v] = r;
  };
  for (ValueId v : graph.inputs()) join(v, v);
  const std::vector<NodeId>& order = graph.order();
  for (int32_t step = 0; step < static_cast<int32_t>(order.size()); ++step) {
    const Node& node = graph.node(order[step]);
    ValueId shared = kNoValue;
    if (is_aliasing_view(graph, node)) {
      shared = groups.root_of(node.inputs[0]);
    } else if (in_place && may_run_in_place(graph, node, step, groups, group_span, group_is_io)) {
      shared = groups.root_of(node.inputs[in_place_input(node.op)]);
      groups.in_place[node.outputs[0]] = true;
    }
    for (size_t o = 0; o < node.outputs.size(); ++o)
      join(node.outputs[o], o == 0 && shared != kNoValue ? shared : node.outputs[o]);
  }
  return groups;
}

MemoryPlan plan(const Graph& graph, const PlanOptions& options) {
  const int64_t alignment = options.alignment;
  if (alignment <= 0 || (alignment & (alignment - 1)) != 0)
    throw GraphError("plan_memory: alignment = " + std::to_string(alignment) +
                     " must be a power of two");
  const std::vector<NodeId>& order = graph.order();
  const int32_t num_steps = static_cast<int32_t>(order.size());
  const int32_t last_step = std::max(num_steps - 1, 0);

  // Lifetimes of every non-constant value: from its producer's step (0 for graph inputs) to its
  // last reader's (the last step for graph outputs).
  std::map<ValueId, Span> span;
  for (ValueId v : graph.inputs()) span[v] = Span{0, 0};
  for (int32_t step = 0; step < num_steps; ++step) {
    const Node& node = graph.node(order[step]);
    for (ValueId in : node.inputs) {
      if (in == kNoValue || graph.value(in).kind == ValueKind::kConstant) continue;
      auto it = span.find(in);
      if (it == span.end())
        throw GraphError("plan_memory: node '" + node.name + "' (step " + std::to_string(step) +
                         ") reads '" + graph.value(in).name +
                         "' before it is produced; call topological_sort() first");
      it->second.last = std::max(it->second.last, step);
    }
    for (ValueId out : node.outputs) span[out] = Span{step, step};
  }
  for (ValueId v : graph.outputs())
    if (graph.value(v).kind != ValueKind::kConstant) span.at(v).last = last_step;

  // One buffer per group root, covering its members' lifetimes; one per scratch.
  auto root_buffers = [&](const Groups& groups) {
    std::map<ValueId, Span> root_span;
    for (const auto& [v, s] : span) {
      Span& r = root_span.try_emplace(groups.root_of(v), s).first->second;
      r.first = std::min(r.first, s.first);
      r.last = std::max(r.last, s.last);
    }
    return root_span;
  };
  std::vector<Lifetime> scratch_buffers;
  std::vector<std::pair<int32_t, int64_t>> scratch;  // step, bytes
  for (int32_t step = 0; step < num_steps; ++step) {
    const int64_t bytes = scratch_bytes(graph.node(order[step]));
    if (bytes > 0) {
      scratch.emplace_back(step, bytes);
      scratch_buffers.push_back(Lifetime{bytes, step, step});
    }
  }
  auto lifetimes = [&](const std::map<ValueId, Span>& root_span) {
    std::vector<Lifetime> buffers;
    for (const auto& [v, s] : root_span)
      buffers.push_back(Lifetime{static_cast<int64_t>(graph.value(v).info.nbytes()), s.first, s.last});
    buffers.insert(buffers.end(), scratch_buffers.begin(), scratch_buffers.end());
    return buffers;
  };

  const Groups groups = group_values(graph, span, options.in_place);
  const std::map<ValueId, Span> root_span = root_buffers(groups);
  const std::vector<Lifetime> buffers = lifetimes(root_span);
  std::map<ValueId, size_t> buffer_of;
  for (const auto& [v, s] : root_span) buffer_of.emplace(v, buffer_of.size());

  const Placement placement = options.policy ? place_buffers_with(buffers, alignment, *options.policy)
                                                 : place_buffers(buffers, alignment);

  MemoryPlan result;
  result.arena_size = placement.arena_size;
  result.lower_bound = placement.lower_bound;
  result.tensor_level_bound =
      options.in_place ? peak_live_bytes(lifetimes(root_buffers(group_values(graph, span, false))), alignment)
                       : placement.lower_bound;
  result.in_place = options.in_place;
  result.alignment = alignment;
  result.num_steps = num_steps;
  result.policy = placement.policy;
  for (const auto& [v, s] : span) {
    const ValueId r = groups.root_of(v);
    const Span& own = r == v ? root_span.at(v) : s;
    ValueSlot slot{v, placement.offsets[buffer_of.at(r)], static_cast<int64_t>(graph.value(v).info.nbytes()),
                   r == v ? -1 : r, own.first, own.last};
    slot.in_place = groups.in_place.count(v) > 0;
    result.values.push_back(slot);
  }
  for (size_t i = 0; i < scratch.size(); ++i)
    result.scratch.push_back(ScratchSlot{scratch[i].first, placement.offsets[root_span.size() + i],
                                         scratch[i].second});
  return result;
}

}  // namespace

bool is_aliasing_view(const Graph& graph, const Node& node) {
  if (node.op != "aten.view_copy.default" && node.op != "aten.squeeze_copy.dims" &&
      node.op != "aten.unsqueeze_copy.default" && node.op != "dim_order_ops._clone_dim_order.default")
    return false;
  if (node.inputs.empty() || node.inputs[0] == kNoValue || node.outputs.size() != 1) return false;
  const Value& in = graph.value(node.inputs[0]);
  const Value& out = graph.value(node.outputs[0]);
  return in.kind != ValueKind::kConstant && same_bytes(in.info, out.info);
}

int in_place_input(const std::string& op) {
  const OpSchema* schema = OpRegistry::global().find(op);
  return schema ? schema->in_place_input : -1;
}

MemoryPlan plan_memory(const Graph& lowered, const PlanOptions& options) { return plan(lowered, options); }

MemoryPlan plan_memory(const Graph& lowered, int64_t alignment) {
  PlanOptions options;
  options.alignment = alignment;
  return plan(lowered, options);
}

MemoryPlan plan_memory(const Graph& lowered, int64_t alignment, const std::string& policy) {
  PlanOptions options;
  options.alignment = alignment;
  options.policy = policy;
  return plan(lowered, options);
}

std::string check_plan(const MemoryPlan& plan) {
  if (plan.alignment <= 0 || (plan.alignment & (plan.alignment - 1)) != 0)
    return "alignment " + std::to_string(plan.alignment) + " is not a power of two";
  std::vector<Lifetime> buffers;
  std::vector<std::string> labels;
  Placement placement;
  placement.arena_size = plan.arena_size;
  placement.lower_bound = plan.lower_bound;
  std::map<int32_t, const ValueSlot*> slot_of;
  for (const ValueSlot& v : plan.values) {
    if (!slot_of.emplace(v.value_id, &v).second)
      return "value " + std::to_string(v.value_id) + " has two slots";
    if (v.size < 0 || v.first < 0 || v.last < v.first || v.last >= std::max(plan.num_steps, 1))
      return "value " + std::to_string(v.value_id) + " has size " + std::to_string(v.size) +
             " and lifetime [" + std::to_string(v.first) + ", " + std::to_string(v.last) +
             "] in " + std::to_string(plan.num_steps) + " steps";
  }
  for (const ValueSlot& v : plan.values) {
    if (v.alias_of < 0) {
      buffers.push_back(Lifetime{v.size, v.first, v.last});
      labels.push_back("value " + std::to_string(v.value_id));
      placement.offsets.push_back(v.offset);
      continue;
    }
    auto it = slot_of.find(v.alias_of);
    if (it == slot_of.end() || it->second->alias_of >= 0)
      return "value " + std::to_string(v.value_id) + " aliases " + std::to_string(v.alias_of) +
             ", which is not a root buffer of the plan";
    const ValueSlot& r = *it->second;
    if (v.offset != r.offset || v.size > r.size || v.first < r.first || v.last > r.last)
      return "value " + std::to_string(v.value_id) + " (offset " + std::to_string(v.offset) +
             ", " + std::to_string(v.size) + " bytes, steps " + std::to_string(v.first) + ".." +
             std::to_string(v.last) + ") is not inside its root " + std::to_string(r.value_id) +
             " (offset " + std::to_string(r.offset) + ", " + std::to_string(r.size) +
             " bytes, steps " + std::to_string(r.first) + ".." + std::to_string(r.last) + ")";
  }
  // A value written in place takes over its root's bytes: the aliases made before it die at its
  // step (the root's own slot spans the whole group, so its last reader is not known here).
  for (const ValueSlot& v : plan.values) {
    if (!v.in_place) continue;
    if (v.alias_of < 0) return "value " + std::to_string(v.value_id) + " is in place but aliases nothing";
    for (const ValueSlot& u : plan.values)
      if (u.alias_of == v.alias_of && u.first < v.first && u.last > v.first)
        return "value " + std::to_string(v.value_id) + " is written in place at step " +
               std::to_string(v.first) + " over value " + std::to_string(u.value_id) +
               ", which is still read until step " + std::to_string(u.last);
  }
  for (const ScratchSlot& s : plan.scratch) {
    if (s.node_index < 0 || s.node_index >= plan.num_steps || s.size < 0)
      return "scratch of step " + std::to_string(s.node_index) + " is outside the " +
             std::to_string(plan.num_steps) + " steps or has a negative size";
    buffers.push_back(Lifetime{s.size, s.node_index, s.node_index});
    labels.push_back("scratch of step " + std::to_string(s.node_index));
    placement.offsets.push_back(s.offset);
  }
  if (plan.arena_size % plan.alignment != 0)
    return "arena size " + std::to_string(plan.arena_size) + " is not a multiple of the alignment " +
           std::to_string(plan.alignment);
  return check_placement(buffers, plan.alignment, placement, labels);
}

void verify_plan(const MemoryPlan& plan) {
  const std::string problem = check_plan(plan);
  if (!problem.empty()) throw GraphError("memory plan: " + problem);
}

}  // namespace cortexm
