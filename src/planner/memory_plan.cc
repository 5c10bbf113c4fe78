#include "planner/memory_plan.h"

#include <algorithm>
#include <map>
#include <set>

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

// A value in its group's buffer: `offset` bytes in, its own lifetime.
struct Member {
  int64_t offset;
  int64_t size;
  int32_t first;
  int32_t last;
};

// A group's parts: at each step from first to last the union of its members' aligned bytes live
// there, runs of steps with the same union merged. None when that is the whole aligned extent over
// the whole span (no member written a lag below its input).
std::vector<Part> group_parts(const std::vector<Member>& members, int64_t extent, int32_t first, int32_t last,
                              int64_t alignment) {
  std::vector<Part> parts;
  std::vector<std::pair<int64_t, int64_t>> previous, live;  // [begin, end) runs
  std::vector<size_t> open;                                  // parts of `previous`
  for (int32_t step = first; step <= last; ++step) {
    live.clear();
    for (const Member& m : members)
      if (m.size > 0 && m.first <= step && step <= m.last) live.emplace_back(m.offset, m.offset + align_up(m.size, alignment));
    std::sort(live.begin(), live.end());
    std::vector<std::pair<int64_t, int64_t>> merged;
    for (const auto& run : live) {
      if (!merged.empty() && run.first <= merged.back().second)
        merged.back().second = std::max(merged.back().second, run.second);
      else
        merged.push_back(run);
    }
    if (step > first && merged == previous) {
      for (size_t i : open) parts[i].last = step;
      continue;
    }
    open.clear();
    for (const auto& [begin, end] : merged) {
      open.push_back(parts.size());
      parts.push_back(Part{begin, end - begin, step, step});
    }
    previous = std::move(merged);
  }
  if (parts.size() == 1 && parts[0].offset == 0 && parts[0].size == align_up(extent, alignment) &&
      parts[0].first == first && parts[0].last == last)
    return {};
  return parts;
}

// Which values share one buffer: views with their input (is_aliasing_view) and, with in_place,
// outputs written over a dying input. A value lies `delta` bytes into its root's buffer, whose
// size is `extent` (an output written a lag below its input moves the group's values up).
struct Groups {
  std::map<ValueId, ValueId> root;  // non-roots only
  std::map<ValueId, bool> in_place; // outputs written over their input's buffer
  std::map<ValueId, int64_t> delta;   // every grouped value
  std::map<ValueId, int64_t> extent;  // roots only
  ValueId root_of(ValueId v) const {
    auto it = root.find(v);
    return it == root.end() ? v : it->second;
  }
};

// The bytes node (at `step`) must write its output below its input in_place_input(node.op) to
// run in place, or -1 when it may not: that input's buffer holds nothing read after this step, no
// value the caller keeps (group_is_kept: a graph output, or a graph input under preserve_inputs),
// and no other input of the node; with an in_place_lag, input and output are channels-last 4-D
// tensors of one dtype (the lag rounded up to the alignment, so every value stays aligned); with
// in_place_narrowing, they have the same shape and dim order, the output's element is no larger
// and the input is its whole buffer (the output at its first byte); else they have the same shape,
// dim order and bytes (the output on the input's bytes, wherever they lie in the buffer).
int64_t in_place_lag(const Graph& graph, NodeId id, int32_t step, const Groups& groups,
                     const std::map<ValueId, Span>& group_span, const std::map<ValueId, bool>& group_is_kept,
                     int64_t alignment) {
  const Node& node = graph.node(id);
  const OpSchema* schema = OpRegistry::global().find(node.op);
  const int k = schema ? schema->in_place_input : -1;
  if (k < 0 || static_cast<size_t>(k) >= node.inputs.size() || node.outputs.size() != 1) return -1;
  const ValueId in = node.inputs[k];
  if (in == kNoValue || graph.value(in).kind == ValueKind::kConstant) return -1;
  const ValueId r = groups.root_of(in);
  if (group_is_kept.at(r) || group_span.at(r).last != step) return -1;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId other = node.inputs[i];
    if (static_cast<int>(i) != k && other != kNoValue && graph.value(other).kind != ValueKind::kConstant &&
        groups.root_of(other) == r)
      return -1;
  }
  const TensorInfo& a = graph.value(in).info;
  const TensorInfo& b = graph.value(node.outputs[0]).info;
  if (schema->in_place_lag) {
    const std::vector<int64_t> nhwc = channels_last_dim_order(4);
    if (a.shape.size() != 4 || b.shape.size() != 4 || a.dtype != b.dtype || a.effective_dim_order() != nhwc ||
        b.effective_dim_order() != nhwc)
      return -1;
    const int64_t lag = schema->in_place_lag(node_context(graph, id));
    // -1: the kernel cannot run these params in place. A lag of 0 (a strided window) still takes
    // one alignment: the loader takes a lagged output only strictly below its input.
    return lag < 0 ? -1 : std::max(align_up(lag, alignment), alignment);
  }
  if (schema->in_place_narrowing) {
    const bool narrows = a.shape == b.shape && a.effective_dim_order() == b.effective_dim_order() &&
                         dtype_size(b.dtype) <= dtype_size(a.dtype) && groups.delta.at(in) == 0 &&
                         groups.extent.at(r) == static_cast<int64_t>(a.nbytes());
    return narrows ? 0 : -1;
  }
  const bool same = a.shape == b.shape && a.effective_dim_order() == b.effective_dim_order() &&
                    a.nbytes() == b.nbytes();
  return same ? 0 : -1;
}

// Which ops with an in_place_lag may run in place: all that can, or those in `nodes`.
struct LaggedOps {
  bool all = false;
  std::set<NodeId> nodes;
  bool allows(NodeId id) const { return all || nodes.count(id) > 0; }
};

// Groups values in execution order. A group's span covers its members' spans; it is "kept" when a
// member is a graph output, or a graph input with preserve_inputs (its bytes belong to the caller
// then; a run otherwise consumes its inputs). `ran_lagged` gets the ops with an in_place_lag that
// ran in place.
Groups group_values(const Graph& graph, const std::map<ValueId, Span>& span, const PlanOptions& options,
                    bool in_place, const LaggedOps& lagged, std::vector<NodeId>* ran_lagged = nullptr) {
  const int64_t alignment = options.alignment;
  Groups groups;
  std::map<ValueId, Span> group_span;
  std::map<ValueId, bool> group_is_kept;
  // v joins r's buffer `delta` bytes in (new roots at 0); a negative delta moves the group up.
  auto join = [&](ValueId v, ValueId r, int64_t delta) {
    const Span& s = span.at(v);
    Span& g = group_span.try_emplace(r, s).first->second;
    g.first = std::min(g.first, s.first);
    g.last = std::max(g.last, s.last);
    const bool kept = graph.is_graph_output(v) || (options.preserve_inputs && graph.value(v).kind == ValueKind::kInput);
    group_is_kept[r] = group_is_kept[r] || kept;
    if (r != v) groups.root[v] = r;
    if (delta < 0) {
      for (auto& [u, d] : groups.delta)
        if (groups.root_of(u) == r) d -= delta;
      groups.extent[r] -= delta;
      delta = 0;
    }
    groups.delta[v] = delta;
    const int64_t end = delta + static_cast<int64_t>(graph.value(v).info.nbytes());
    groups.extent[r] = std::max(groups.extent[r], end);
  };
  for (ValueId v : graph.inputs()) join(v, v, 0);
  const std::vector<NodeId>& order = graph.order();
  for (int32_t step = 0; step < static_cast<int32_t>(order.size()); ++step) {
    const Node& node = graph.node(order[step]);
    ValueId shared = kNoValue;
    int64_t delta = 0;
    if (is_aliasing_view(graph, node)) {
      shared = groups.root_of(node.inputs[0]);
      delta = groups.delta.at(node.inputs[0]);
    } else if (in_place) {
      const int64_t lag = in_place_lag(graph, order[step], step, groups, group_span, group_is_kept, alignment);
      const bool lagged_op = OpRegistry::global().get(node.op).in_place_lag != nullptr;
      if (lag >= 0 && (!lagged_op || lagged.allows(order[step]))) {
        if (lagged_op && ran_lagged) ran_lagged->push_back(order[step]);
        const ValueId in = node.inputs[in_place_input(node.op)];
        shared = groups.root_of(in);
        delta = groups.delta.at(in) - lag;
        groups.in_place[node.outputs[0]] = true;
      }
    }
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const bool joins = o == 0 && shared != kNoValue;
      join(node.outputs[o], joins ? shared : node.outputs[o], joins ? delta : 0);
    }
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
  if (options.preserve_inputs)  // nothing else takes their bytes either
    for (ValueId v : graph.inputs()) span.at(v).last = last_step;

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
  auto lifetimes = [&](const Groups& groups, const std::map<ValueId, Span>& root_span) {
    std::map<ValueId, std::vector<Member>> members;
    for (const auto& [v, s] : span)
      members[groups.root_of(v)].push_back(
          Member{groups.delta.at(v), static_cast<int64_t>(graph.value(v).info.nbytes()), s.first, s.last});
    std::vector<Lifetime> buffers;
    for (const auto& [v, s] : root_span) {
      const int64_t extent = groups.extent.at(v);
      buffers.push_back(Lifetime{extent, s.first, s.last, group_parts(members.at(v), extent, s.first, s.last, alignment)});
    }
    buffers.insert(buffers.end(), scratch_buffers.begin(), scratch_buffers.end());
    return buffers;
  };

  // Element-wise ops run in place whenever they can (their buffer is no larger). An op with a lag
  // makes its input's buffer larger by the lag, so each runs in place only when that makes the
  // arena smaller, or keeps it and holds fewer byte-steps: per policy, tried one at a time in
  // execution order, kept when it does; then again with the widening ones last, that pass kept
  // when its arena is smaller. The policy with the smallest arena wins (the earliest on ties).
  std::vector<NodeId> candidates;
  if (options.in_place) {
    LaggedOps every;
    every.all = true;
    group_values(graph, span, options, true, every, &candidates);
  }
  // The candidates again, those whose output outgrows their input last (each part in execution
  // order): one early in place that keeps the arena (ds_cnn's first conv, 490 B in, 8,000 B out)
  // can leave no room for later ones that would lower it.
  std::vector<NodeId> widening_last = candidates;
  std::stable_partition(widening_last.begin(), widening_last.end(), [&](NodeId id) {
    const Node& node = graph.node(id);
    return graph.value(node.outputs[0]).info.nbytes() <= graph.value(node.inputs[in_place_input(node.op)]).info.nbytes();
  });
  LaggedOps lagged;
  std::optional<Groups> best_groups;
  Placement placement;
  const std::vector<std::string> policies =
      options.policy ? std::vector<std::string>{*options.policy} : placement_policies();
  for (const std::string& policy : policies) {
    // The placement and the byte-steps its buffers hold (which breaks ties of the arena: one op
    // in place seldom lowers it alone when several steps reach the peak).
    auto place = [&](const Groups& g) {
      const std::vector<Lifetime> buffers = lifetimes(g, root_buffers(g));
      int64_t byte_steps = 0;
      for (const Lifetime& b : buffers) {
        if (b.parts.empty()) byte_steps += align_up(b.size, alignment) * (int64_t{b.last} - b.first + 1);
        for (const Part& p : b.parts) byte_steps += align_up(p.size, alignment) * (int64_t{p.last} - p.first + 1);
      }
      return std::make_pair(place_buffers_with(buffers, alignment, policy), byte_steps);
    };
    // One greedy pass per candidate order; a later pass replaces an earlier one only when smaller.
    std::optional<Groups> policy_groups;
    Placement policy_placement;
    LaggedOps policy_lagged;
    for (const std::vector<NodeId>* order : {&candidates, &widening_last}) {
      if (order == &widening_last && widening_last == candidates) break;
      const std::vector<NodeId>& tried = *order;
      LaggedOps chosen;
      Groups groups = group_values(graph, span, options, options.in_place, chosen);
      auto [placed, byte_steps] = place(groups);
      for (NodeId id : tried) {
        chosen.nodes.insert(id);
        Groups trial = group_values(graph, span, options, true, chosen);
        auto [trial_placement, trial_byte_steps] = place(trial);
        if (trial_placement.arena_size < placed.arena_size ||
            (trial_placement.arena_size == placed.arena_size && trial_byte_steps < byte_steps)) {
          groups = std::move(trial);
          placed = std::move(trial_placement);
          byte_steps = trial_byte_steps;
        } else {
          chosen.nodes.erase(id);
        }
      }
      if (!policy_groups || placed.arena_size < policy_placement.arena_size) {
        policy_groups = std::move(groups);
        policy_placement = std::move(placed);
        policy_lagged = chosen;
      }
    }
    if (!best_groups || policy_placement.arena_size < placement.arena_size) {
      best_groups = std::move(policy_groups);
      placement = std::move(policy_placement);
      lagged = policy_lagged;
    }
  }
  const Groups& groups = *best_groups;
  const std::map<ValueId, Span> root_span = root_buffers(groups);
  std::map<ValueId, size_t> buffer_of;
  for (const auto& [v, s] : root_span) buffer_of.emplace(v, buffer_of.size());

  MemoryPlan result;
  result.arena_size = placement.arena_size;
  result.lower_bound = placement.lower_bound;
  if (options.in_place) {
    const Groups whole = group_values(graph, span, options, false, lagged);
    result.tensor_level_bound = peak_live_bytes(lifetimes(whole, root_buffers(whole)), alignment);
  } else {
    result.tensor_level_bound = placement.lower_bound;
  }
  result.in_place = options.in_place;
  result.alignment = alignment;
  result.num_steps = num_steps;
  result.policy = placement.policy;
  for (const auto& [v, s] : span) {
    const ValueId r = groups.root_of(v);
    const Span& own = r == v ? root_span.at(v) : s;
    ValueSlot slot{v, placement.offsets[buffer_of.at(r)] + groups.delta.at(v),
                   static_cast<int64_t>(graph.value(v).info.nbytes()),
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
  const OpSchema* schema = OpRegistry::global().find(node.op);
  if (!schema || (!schema->keeps_element_order && !schema->keeps_bytes)) return false;
  if (node.inputs.empty() || node.inputs[0] == kNoValue || node.outputs.size() != 1) return false;
  const Value& in = graph.value(node.inputs[0]);
  if (in.kind == ValueKind::kConstant) return false;
  if (schema->keeps_bytes) return schema->keeps_bytes(node_context(graph, node.id));
  return same_bytes(in.info, graph.value(node.outputs[0]).info);
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
    if (v.offset < 0 || v.offset % plan.alignment != 0)
      return "value " + std::to_string(v.value_id) + " at offset " + std::to_string(v.offset) +
             " is not aligned to " + std::to_string(plan.alignment);
  }
  // A root's buffer spans its group: the root, views at the offset of the root or of a value
  // written in place, and values written in place anywhere (a lag below their input).
  std::map<int32_t, std::pair<int64_t, int64_t>> extent;  // root -> [begin, end)
  for (const ValueSlot& v : plan.values) {
    const int32_t root = v.alias_of < 0 ? v.value_id : v.alias_of;
    auto [it, added] = extent.try_emplace(root, v.offset, v.offset + v.size);
    it->second.first = std::min(it->second.first, v.offset);
    it->second.second = std::max(it->second.second, v.offset + v.size);
    if (v.alias_of < 0) continue;
    auto r_it = slot_of.find(v.alias_of);
    if (r_it == slot_of.end() || r_it->second->alias_of >= 0)
      return "value " + std::to_string(v.value_id) + " aliases " + std::to_string(v.alias_of) +
             ", which is not a root buffer of the plan";
    const ValueSlot& r = *r_it->second;
    bool at_member = v.in_place || v.offset == r.offset;
    for (const ValueSlot& u : plan.values)
      at_member = at_member || (u.alias_of == v.alias_of && u.in_place && u.offset == v.offset);
    if (!at_member || v.first < r.first || v.last > r.last)
      return "value " + std::to_string(v.value_id) + " (offset " + std::to_string(v.offset) +
             ", " + std::to_string(v.size) + " bytes, steps " + std::to_string(v.first) + ".." +
             std::to_string(v.last) + ") is not inside its root " + std::to_string(r.value_id) +
             " (offset " + std::to_string(r.offset) + ", " + std::to_string(r.size) +
             " bytes, steps " + std::to_string(r.first) + ".." + std::to_string(r.last) + ")";
  }
  // Parts from the members' own lifetimes; the root's slot spans its group, but the root dies
  // where the group's first in-place value is written (checked below for the other members).
  std::map<int32_t, std::vector<Member>> members;
  for (const ValueSlot& v : plan.values) {
    const int32_t root = v.alias_of < 0 ? v.value_id : v.alias_of;
    int32_t last = v.last;
    if (v.alias_of < 0)
      for (const ValueSlot& u : plan.values)
        if (u.alias_of == v.value_id && u.in_place) last = std::min(last, std::max(u.first, v.first));
    members[root].push_back(Member{v.offset - extent.at(root).first, v.size, v.first, last});
  }
  for (const ValueSlot& v : plan.values) {
    if (v.alias_of >= 0) continue;
    const auto& [begin, end] = extent.at(v.value_id);
    buffers.push_back(Lifetime{end - begin, v.first, v.last,
                               group_parts(members.at(v.value_id), end - begin, v.first, v.last, plan.alignment)});
    labels.push_back("value " + std::to_string(v.value_id));
    placement.offsets.push_back(begin);
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
