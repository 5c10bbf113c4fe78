// Python view of the memory planner: plain dicts that python/cortexm/memory_plan.py wraps.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "graph/errors.h"
#include "graph/graph.h"
#include "planner/memory_plan.h"
#include "planner/placement.h"

namespace cortexm::bindings {

namespace py = pybind11;

namespace {

py::dict plan_to_python(const Graph& graph, const MemoryPlan& plan) {
  py::dict d;
  d["arena_size"] = plan.arena_size;
  d["lower_bound"] = plan.lower_bound;
  d["tensor_level_bound"] = plan.tensor_level_bound;
  d["in_place"] = plan.in_place;
  d["alignment"] = plan.alignment;
  d["num_steps"] = plan.num_steps;
  d["policy"] = plan.policy;
  std::map<NodeId, int32_t> step_of;
  for (size_t i = 0; i < graph.order().size(); ++i) step_of[graph.order()[i]] = static_cast<int32_t>(i);
  py::list values;
  for (const ValueSlot& s : plan.values) {
    const Value& v = graph.value(s.value_id);
    py::dict row;
    row["value_id"] = s.value_id;
    row["name"] = v.name;
    row["op"] = v.kind == ValueKind::kInput ? std::string("input") : graph.node(v.producer).op;
    row["node_index"] = v.kind == ValueKind::kInput ? -1 : step_of.at(v.producer);
    row["shape"] = py::tuple(py::cast(v.info.shape));
    row["dtype"] = std::string(dtype_name(v.info.dtype));
    row["kind"] = v.kind == ValueKind::kInput       ? "input"
                  : graph.is_graph_output(s.value_id) ? "output"
                                                      : "intermediate";
    row["offset"] = s.offset;
    row["size"] = s.size;
    row["first"] = s.first;
    row["last"] = s.last;
    row["alias_of"] = s.alias_of < 0 ? py::object(py::none()) : py::str(graph.value(s.alias_of).name);
    row["in_place"] = s.in_place;
    values.append(row);
  }
  d["values"] = values;
  py::list scratch;
  for (const ScratchSlot& s : plan.scratch) {
    const Node& node = graph.node(graph.order().at(static_cast<size_t>(s.node_index)));
    py::dict row;
    row["node_index"] = s.node_index;
    row["name"] = node.name + ".scratch";
    row["op"] = node.op;
    row["offset"] = s.offset;
    row["size"] = s.size;
    scratch.append(row);
  }
  d["scratch"] = scratch;
  return d;
}

}  // namespace

void bind_planner(py::module_& m) {
  m.def("placement_policies", &placement_policies, "Names of the buffer placement policies.");
  m.def(
      "place_buffers",
      [](const std::vector<std::tuple<int64_t, int32_t, int32_t>>& lifetimes, int64_t alignment,
         const std::optional<std::string>& policy) {
        std::vector<Lifetime> buffers;
        for (const auto& [size, first, last] : lifetimes) buffers.push_back(Lifetime{size, first, last});
        const Placement p = policy ? place_buffers_with(buffers, alignment, *policy)
                                   : place_buffers(buffers, alignment);
        py::dict d;
        d["offsets"] = p.offsets;
        d["arena_size"] = p.arena_size;
        d["lower_bound"] = p.lower_bound;
        d["policy"] = p.policy;
        return d;
      },
      py::arg("lifetimes"), py::arg("alignment") = 16, py::arg("policy") = py::none(),
      "Places (size, first_step, last_step) buffers in one arena; policy None keeps the best.");
  m.def(
      "plan_memory",
      [](const std::shared_ptr<Graph>& graph, int64_t alignment, const std::optional<std::string>& policy,
         bool in_place, bool preserve_inputs) {
        PlanOptions options;
        options.alignment = alignment;
        options.policy = policy;
        options.in_place = in_place;
        options.preserve_inputs = preserve_inputs;
        return plan_to_python(*graph, plan_memory(*graph, options));
      },
      py::arg("graph"), py::arg("alignment") = 16, py::arg("policy") = py::none(), py::arg("in_place") = true,
      py::arg("preserve_inputs") = false,
      "The memory plan of a lowered graph as a dict (see cortexm.plan_memory).");
  m.def(
      "check_memory_plan",
      [](int64_t arena_size, int64_t lower_bound, int64_t alignment, int32_t num_steps,
         const std::vector<std::tuple<int32_t, int64_t, int64_t, int32_t, int32_t, int32_t, bool>>& values,
         const std::vector<std::tuple<int32_t, int64_t, int64_t>>& scratch) {
        MemoryPlan plan;
        plan.arena_size = arena_size;
        plan.lower_bound = lower_bound;
        plan.alignment = alignment;
        plan.num_steps = num_steps;
        for (const auto& [id, offset, size, alias_of, first, last, in_place] : values)
          plan.values.push_back(ValueSlot{id, offset, size, alias_of, first, last, in_place});
        for (const auto& [node_index, offset, size] : scratch)
          plan.scratch.push_back(ScratchSlot{node_index, offset, size});
        return check_plan(plan);
      },
      py::arg("arena_size"), py::arg("lower_bound"), py::arg("alignment"), py::arg("num_steps"),
      py::arg("values"), py::arg("scratch"),
      "'' if the plan is consistent, else its first problem. values: (value_id, offset, size, "
      "alias_of or -1, first, last, in_place); scratch: (node_index, offset, size).");
}

}  // namespace cortexm::bindings
