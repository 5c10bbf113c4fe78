// Memory plans of small hand-built graphs: lifetimes, aliasing and scratch, with exact offsets.
#include "planner/memory_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "graph/errors.h"
#include "planner/placement.h"

namespace cortexm {
namespace {

TensorInfo f32(std::vector<int64_t> shape) {
  TensorInfo info;
  info.shape = std::move(shape);
  return info;
}

ValueId relu(Graph& g, ValueId x) { return g.call("aten.relu.default", {x}, {})[0]; }

TensorInfo s8(std::vector<int64_t> shape) {
  TensorInfo info;
  info.dtype = DType::kInt8;
  info.shape = std::move(shape);
  return info;
}

// cortex_m.quantized_activation (may run in place over input 0) with a constant identity table.
ValueId activation(Graph& g, ValueId x) {
  Tensor table(s8({256}));
  for (int i = 0; i < 256; ++i) table.data<int8_t>()[i] = static_cast<int8_t>(i - 128);
  return g.call("cortex_m.quantized_activation.default",
                {x, g.add_constant("table" + std::to_string(g.num_values()), std::move(table))}, {})[0];
}

// cortex_m.quantized_add (may run in place over input 0, `self`).
ValueId qadd(Graph& g, ValueId a, ValueId b) {
  Attrs attrs;
  for (const char* name : {"self_zero_point", "other_zero_point", "output_zero_point"}) attrs.emplace_back(name, int64_t{0});
  for (const char* name : {"self_multiplier", "other_multiplier", "output_multiplier"})
    attrs.emplace_back(name, int64_t{1} << 30);
  for (const char* name : {"self_shift", "other_shift", "output_shift"}) attrs.emplace_back(name, int64_t{-1});
  return g.call("cortex_m.quantized_add.default", {a, b}, attrs)[0];
}

// cortex_m.quantize_per_tensor float32 -> int8 / int16 (may narrow in place over input 0).
ValueId quantize(Graph& g, ValueId x, DType dtype = DType::kInt8) {
  const int64_t lo = dtype == DType::kInt8 ? -128 : -32768;
  return g.call("cortex_m.quantize_per_tensor.default", {x},
                {{"scale", 0.5}, {"zero_point", int64_t{0}}, {"quant_min", lo}, {"quant_max", -lo - 1}, {"dtype", dtype}})[0];
}

ValueId view(Graph& g, ValueId x, std::vector<int64_t> size) {
  return g.call("aten.view_copy.default", {x}, {{"size", std::move(size)}})[0];
}

const ValueSlot& slot(const MemoryPlan& plan, ValueId id) {
  for (const ValueSlot& s : plan.values)
    if (s.value_id == id) return s;
  throw std::runtime_error("no slot for value " + std::to_string(id));
}

bool has_slot(const MemoryPlan& plan, ValueId id) {
  for (const ValueSlot& s : plan.values)
    if (s.value_id == id) return true;
  return false;
}

void set_scratch(Graph& g, ValueId output, int64_t bytes) {
  g.mutable_node(g.producer(output)).attrs.emplace_back("scratch_bytes", bytes);
}

TEST(MemoryPlan, ChainReusesMemoryOfDeadValues) {
  // x -> a -> b -> c, 32 bytes each: two buffers ping-pong.
  Graph g;
  const ValueId x = g.add_input("x", f32({8}));
  const ValueId a = relu(g, x);
  const ValueId b = relu(g, a);
  const ValueId c = relu(g, b);
  g.set_outputs({c});
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_EQ(plan.num_steps, 3);
  EXPECT_EQ(plan.arena_size, 64);
  EXPECT_EQ(plan.lower_bound, 64);
  EXPECT_EQ(plan.policy, "size_first_fit");
  ASSERT_EQ(plan.values.size(), 4u);
  EXPECT_EQ(slot(plan, x).offset, 0);
  EXPECT_EQ(slot(plan, a).offset, 32);
  EXPECT_EQ(slot(plan, b).offset, 0);
  EXPECT_EQ(slot(plan, c).offset, 32);
  EXPECT_EQ(slot(plan, a).size, 32);
  EXPECT_EQ(slot(plan, a).alias_of, -1);
}

TEST(MemoryPlan, GraphInputsLiveFromStepZeroAndOutputsToTheLastStep) {
  // y = relu(x) is an output read by nobody; x is read at step 1 only.
  Graph g;
  const ValueId x = g.add_input("x", f32({4}));
  const ValueId w = g.add_input("w", f32({4}));
  const ValueId y = relu(g, w);
  const ValueId z = relu(g, x);
  const ValueId u = relu(g, z);
  g.set_outputs({y, u});
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_EQ(slot(plan, x).first, 0);
  EXPECT_EQ(slot(plan, x).last, 1);
  EXPECT_EQ(slot(plan, w).first, 0);
  EXPECT_EQ(slot(plan, w).last, 0);
  EXPECT_EQ(slot(plan, y).first, 0);
  EXPECT_EQ(slot(plan, y).last, 2);
  EXPECT_EQ(slot(plan, z).first, 1);
  EXPECT_EQ(slot(plan, z).last, 2);
  EXPECT_EQ(slot(plan, u).first, 2);
  EXPECT_EQ(slot(plan, u).last, 2);
}

TEST(MemoryPlan, ConstantsTakeNoArena) {
  Graph g;
  const ValueId x = g.add_input("x", f32({4}));
  Tensor t(f32({4}));
  const ValueId k = g.add_constant("k", t);
  const ValueId y = g.call("aten.add.Tensor", {x, k}, {})[0];
  g.set_outputs({y});
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_FALSE(has_slot(plan, k));
  EXPECT_EQ(plan.values.size(), 2u);
  EXPECT_EQ(plan.arena_size, 32);
}

TEST(MemoryPlan, ScratchLivesOnlyDuringItsOp) {
  // x -> a (scratch 100) -> b (scratch 40) -> c, 32-byte values.
  // Largest first: scratch 112@0 (step 0), scratch 48@0 (step 1: the first is dead), x@112,
  // a@144, b@48 (gap between scratch 1 and a), c@0.
  Graph g;
  const ValueId x = g.add_input("x", f32({8}));
  const ValueId a = relu(g, x);
  const ValueId b = relu(g, a);
  const ValueId c = relu(g, b);
  g.set_outputs({c});
  set_scratch(g, a, 100);
  set_scratch(g, b, 40);
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  ASSERT_EQ(plan.scratch.size(), 2u);
  EXPECT_EQ(plan.scratch[0].node_index, 0);
  EXPECT_EQ(plan.scratch[0].offset, 0);
  EXPECT_EQ(plan.scratch[0].size, 100);
  EXPECT_EQ(plan.scratch[1].node_index, 1);
  EXPECT_EQ(plan.scratch[1].offset, 0);
  EXPECT_EQ(plan.scratch[1].size, 40);
  EXPECT_EQ(slot(plan, x).offset, 112);
  EXPECT_EQ(slot(plan, a).offset, 144);
  EXPECT_EQ(slot(plan, b).offset, 48);
  EXPECT_EQ(slot(plan, c).offset, 0);
  EXPECT_EQ(plan.lower_bound, 176);  // step 0: 112 + x + a
  EXPECT_EQ(plan.arena_size, 176);
}

TEST(MemoryPlan, ZeroScratchIsNoScratch) {
  Graph g;
  const ValueId x = g.add_input("x", f32({8}));
  const ValueId a = relu(g, x);
  g.set_outputs({a});
  set_scratch(g, a, 0);
  const MemoryPlan plan = plan_memory(g);
  EXPECT_TRUE(plan.scratch.empty());
  set_scratch(g, a, -4);  // the first scratch_bytes attr wins; replace it
  g.mutable_node(g.producer(a)).attrs.erase(g.mutable_node(g.producer(a)).attrs.end() - 2);
  EXPECT_THROW(plan_memory(g), GraphError);
}

TEST(MemoryPlan, ViewAliasesItsInput) {
  // x -> r -> view v -> o: v shares r's bytes; r lives until v's reader (step 2).
  Graph g;
  const ValueId x = g.add_input("x", f32({2, 8}));
  const ValueId r = relu(g, x);
  const ValueId v = view(g, r, {16});
  const ValueId o = relu(g, v);
  g.set_outputs({o});
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_EQ(slot(plan, v).alias_of, r);
  EXPECT_EQ(slot(plan, v).offset, slot(plan, r).offset);
  EXPECT_EQ(slot(plan, v).size, 64);
  EXPECT_EQ(slot(plan, v).first, 1);
  EXPECT_EQ(slot(plan, v).last, 2);
  EXPECT_EQ(slot(plan, r).first, 0);
  EXPECT_EQ(slot(plan, r).last, 2);
  // Buffers x (step 0), r (0-2), o (2): x@0, r@64, o@0.
  EXPECT_EQ(slot(plan, x).offset, 0);
  EXPECT_EQ(slot(plan, r).offset, 64);
  EXPECT_EQ(slot(plan, o).offset, 0);
  EXPECT_EQ(plan.arena_size, 128);
  EXPECT_EQ(plan.lower_bound, 128);
}

TEST(MemoryPlan, SqueezeAndUnsqueezeChainsAliasTheRoot) {
  Graph g;
  const ValueId x = g.add_input("x", f32({3, 4}));
  const ValueId r = relu(g, x);
  const ValueId u = g.call("aten.unsqueeze_copy.default", {r}, {{"dim", int64_t{0}}})[0];
  const ValueId s = g.call("aten.squeeze_copy.dims", {u}, {{"dim", std::vector<int64_t>{0}}})[0];
  const ValueId v = view(g, s, {12});
  const ValueId o = relu(g, v);
  g.set_outputs({o});
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  for (ValueId alias : {u, s, v}) {
    EXPECT_EQ(slot(plan, alias).alias_of, r);
    EXPECT_EQ(slot(plan, alias).offset, slot(plan, r).offset);
  }
  EXPECT_EQ(slot(plan, r).last, 4);  // o reads v at step 4
  EXPECT_EQ(plan.arena_size, 96);    // x + r at step 0, r + o at step 4
  EXPECT_EQ(plan.lower_bound, 96);
}

TEST(MemoryPlan, GraphInputAndOutputAliasesStillWork) {
  // y = view(x): the output is the input's buffer, live over the whole graph.
  Graph g;
  const ValueId x = g.add_input("x", f32({2, 3}));
  const ValueId y = view(g, x, {6});
  g.set_outputs({y});
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_EQ(slot(plan, y).alias_of, x);
  EXPECT_EQ(slot(plan, y).offset, 0);
  EXPECT_EQ(slot(plan, x).first, 0);
  EXPECT_EQ(slot(plan, x).last, 0);
  EXPECT_EQ(plan.arena_size, 32);

  // An alias that is an output keeps its root to the last step.
  Graph h;
  const ValueId p = h.add_input("p", f32({4}));
  const ValueId q = relu(h, p);
  const ValueId qv = view(h, q, {2, 2});
  const ValueId t = relu(h, p);
  h.set_outputs({qv, t});
  const MemoryPlan plan2 = plan_memory(h);
  verify_plan(plan2);
  EXPECT_EQ(slot(plan2, qv).alias_of, q);
  EXPECT_EQ(slot(plan2, q).last, 2);
  EXPECT_EQ(slot(plan2, qv).last, 2);
  EXPECT_NE(slot(plan2, t).offset, slot(plan2, q).offset);
}

TEST(MemoryPlan, ViewOfChannelsLastDataIsACopy) {
  Graph g;
  const ValueId x = g.add_input("x", f32({1, 2, 3, 3}));
  const ValueId r = relu(g, x);
  g.mutable_value(r).info.dim_order = {0, 2, 3, 1};
  const ValueId v = view(g, r, {1, 18});
  const ValueId o = relu(g, v);
  g.set_outputs({o});
  EXPECT_FALSE(is_aliasing_view(g, g.node(g.producer(v))));
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_EQ(slot(plan, v).alias_of, -1);
  EXPECT_EQ(slot(plan, r).last, 1);
}

TEST(MemoryPlan, SizeOneViewsOfChannelsLastDataAlias) {
  // [2, 4, 1, 3] channels-last -> squeeze H -> [2, 4, 3] in order [0, 2, 1]: the same bytes.
  Graph g;
  const ValueId x = g.add_input("x", f32({2, 4, 1, 3}));
  const ValueId r = relu(g, x);
  g.mutable_value(r).info.dim_order = {0, 2, 3, 1};
  const ValueId v = view(g, r, {2, 4, 3});
  ASSERT_EQ(g.value(v).info.dim_order, (std::vector<int64_t>{0, 2, 1}));
  const ValueId o = relu(g, v);
  g.set_outputs({o});
  EXPECT_TRUE(is_aliasing_view(g, g.node(g.producer(v))));
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_EQ(slot(plan, v).alias_of, r);
  EXPECT_EQ(slot(plan, v).offset, slot(plan, r).offset);
  EXPECT_EQ(slot(plan, r).last, 2);  // the root lives as long as the alias's reader
}

TEST(MemoryPlan, PermuteDescriptorSaysWhenItKeepsTheBytes) {
  // The planner asks the op's descriptor (OpSchema::keeps_bytes), not the op's name: [1, 4, 1, 3]
  // permuted (0, 2, 1, 3) moves only size-1 dims, (0, 3, 2, 1) moves the data.
  ASSERT_NE(OpRegistry::global().get("aten.permute_copy.default").keeps_bytes, nullptr);
  Graph g;
  const ValueId x = g.add_input("x", f32({1, 4, 1, 3}));
  const ValueId r = relu(g, x);
  const ValueId same = g.call("aten.permute_copy.default", {r}, {{"dims", std::vector<int64_t>{0, 2, 1, 3}}})[0];
  const ValueId moved = g.call("aten.permute_copy.default", {r}, {{"dims", std::vector<int64_t>{0, 3, 2, 1}}})[0];
  g.set_outputs({relu(g, same), relu(g, moved)});
  EXPECT_TRUE(is_aliasing_view(g, g.node(g.producer(same))));
  EXPECT_FALSE(is_aliasing_view(g, g.node(g.producer(moved))));
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_EQ(slot(plan, same).alias_of, r);
  EXPECT_EQ(slot(plan, moved).alias_of, -1);
}

TEST(MemoryPlan, ViewOfAConstantIsACopy) {
  Graph g;
  const ValueId x = g.add_input("x", f32({4}));
  const ValueId k = g.add_constant("k", Tensor(f32({2, 2})));
  const ValueId v = view(g, k, {4});
  const ValueId y = g.call("aten.add.Tensor", {x, v}, {})[0];
  g.set_outputs({y});
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_EQ(slot(plan, v).alias_of, -1);
  EXPECT_EQ(slot(plan, v).size, 16);
}

TEST(MemoryPlan, NonTopologicalOrderThrows) {
  Graph g;
  const ValueId x = g.add_input("x", f32({4}));
  const ValueId a = relu(g, x);
  g.set_outputs({a});
  const ValueId b = g.call("aten.relu.default", {a}, {}, g.producer(a))[0];  // before a's producer
  g.set_outputs({b});
  EXPECT_THROW(plan_memory(g), GraphError);
  g.topological_sort();
  EXPECT_NO_THROW(verify_plan(plan_memory(g)));
}

TEST(MemoryPlan, BadAlignmentOrPolicyThrows) {
  Graph g;
  const ValueId x = g.add_input("x", f32({4}));
  g.set_outputs({relu(g, x)});
  EXPECT_THROW(plan_memory(g, 12), GraphError);
  EXPECT_THROW(plan_memory(g, 16, "no_such_policy"), GraphError);
  EXPECT_EQ(plan_memory(g, 64).arena_size, 128);
}

TEST(MemoryPlan, EveryPolicyGivesAValidPlan) {
  Graph g;
  const ValueId x = g.add_input("x", f32({1, 4, 6, 6}));
  const ValueId a = relu(g, x);
  const ValueId b = relu(g, a);
  const ValueId c = g.call("aten.add.Tensor", {a, b}, {})[0];
  const ValueId v = view(g, c, {1, 144});
  const ValueId d = relu(g, v);
  g.set_outputs({d});
  set_scratch(g, b, 300);
  for (const std::string& policy : {"size_first_fit", "size_best_fit", "area_first_fit",
                                    "duration_first_fit", "breadth_best_fit"}) {
    const MemoryPlan plan = plan_memory(g, 16, policy);
    EXPECT_EQ(check_plan(plan), "") << policy;
    EXPECT_EQ(plan.policy, policy);
    EXPECT_GE(plan.arena_size, plan.lower_bound);
  }
}

TEST(MemoryPlan, CheckPlanFindsBadPlans) {
  Graph g;
  const ValueId x = g.add_input("x", f32({8}));
  const ValueId a = relu(g, x);
  const ValueId v = view(g, a, {2, 4});
  g.set_outputs({v});
  set_scratch(g, a, 16);
  const MemoryPlan plan = plan_memory(g);
  ASSERT_EQ(check_plan(plan), "");
  MemoryPlan overlap = plan;
  for (ValueSlot& s : overlap.values)
    if (s.value_id == a) s.offset = slot(plan, x).offset;
  EXPECT_NE(check_plan(overlap), "");
  MemoryPlan misplaced_alias = plan;
  for (ValueSlot& s : misplaced_alias.values)
    if (s.value_id == v) s.offset += 16;
  EXPECT_NE(check_plan(misplaced_alias), "");
  MemoryPlan scratch_overlap = plan;
  scratch_overlap.scratch[0].offset = slot(plan, a).offset;
  EXPECT_NE(check_plan(scratch_overlap), "");
  MemoryPlan small = plan;
  small.arena_size -= 16;
  EXPECT_NE(check_plan(small), "");
  MemoryPlan misaligned = plan;
  misaligned.values[0].offset += 4;
  EXPECT_NE(check_plan(misaligned), "");
  EXPECT_THROW(verify_plan(small), GraphError);
}

// --- In place -------------------------------------------------------------------------------------

TEST(MemoryPlan, ElementwiseOpRunsInPlaceOverItsDyingInput) {
  // x -> a = act(x) -> b = act(a) -> c = act(b): a dies at b, b at c; x is the caller's.
  Graph g;
  const ValueId x = g.add_input("x", s8({64}));
  const ValueId a = activation(g, x);
  const ValueId b = activation(g, a);
  const ValueId c = activation(g, b);
  g.set_outputs({c});
  PlanOptions keep_inputs;
  keep_inputs.preserve_inputs = true;
  const MemoryPlan plan = plan_memory(g, keep_inputs);
  verify_plan(plan);
  EXPECT_TRUE(plan.in_place);
  EXPECT_FALSE(slot(plan, a).in_place);  // over a graph input kept for the caller: never
  EXPECT_EQ(slot(plan, a).alias_of, -1);
  EXPECT_TRUE(slot(plan, b).in_place);
  EXPECT_EQ(slot(plan, b).alias_of, a);
  EXPECT_EQ(slot(plan, b).offset, slot(plan, a).offset);
  EXPECT_TRUE(slot(plan, c).in_place);
  EXPECT_EQ(slot(plan, c).alias_of, a);  // chains resolve to the root
  EXPECT_EQ(slot(plan, a).first, 0);
  EXPECT_EQ(slot(plan, a).last, 2);      // the root's buffer spans its in-place successors
  EXPECT_EQ(plan.arena_size, 128);
  EXPECT_EQ(plan.lower_bound, 128);
  EXPECT_EQ(plan.tensor_level_bound, 192);  // x (kept to the end), a and b at step 1

  PlanOptions tensor_level;
  tensor_level.in_place = false;
  const MemoryPlan whole = plan_memory(g, tensor_level);
  verify_plan(whole);
  EXPECT_FALSE(whole.in_place);
  for (const ValueSlot& v : whole.values) EXPECT_FALSE(v.in_place);
  EXPECT_EQ(whole.tensor_level_bound, whole.lower_bound);
}

TEST(MemoryPlan, ARunConsumesItsInputsUnlessToldToPreserveThem) {
  // x -> a = act(x) -> b = act(a): by default a overwrites x once x is dead, so one 64-byte buffer.
  Graph g;
  const ValueId x = g.add_input("x", s8({64}));
  const ValueId a = activation(g, x);
  const ValueId b = activation(g, a);
  g.set_outputs({b});
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_TRUE(slot(plan, a).in_place);
  EXPECT_EQ(slot(plan, a).alias_of, x);
  EXPECT_EQ(slot(plan, b).alias_of, x);
  EXPECT_EQ(plan.arena_size, 64);
  EXPECT_EQ(plan.tensor_level_bound, 128);
  PlanOptions keep_inputs;
  keep_inputs.preserve_inputs = true;
  const MemoryPlan kept = plan_memory(g, keep_inputs);
  verify_plan(kept);
  EXPECT_EQ(slot(kept, a).alias_of, -1);
  EXPECT_EQ(kept.arena_size, 128);
  for (const ValueSlot& v : kept.values) EXPECT_NE(v.alias_of, x);
}

TEST(MemoryPlan, AnInputReadLaterOrAlsoAnOutputIsNotWrittenOver) {
  Graph g;
  const ValueId x = g.add_input("x", s8({32}));
  const ValueId y = g.add_input("y", s8({32}));
  const ValueId a = activation(g, x);
  const ValueId b = qadd(g, a, x);  // x read again: act(x) may not write over it
  const ValueId c = activation(g, y);  // y is also a graph output
  g.set_outputs({b, c, y});
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_FALSE(slot(plan, a).in_place);
  EXPECT_TRUE(slot(plan, b).in_place);  // over a, which dies there
  EXPECT_FALSE(slot(plan, c).in_place);
  EXPECT_NE(slot(plan, c).offset, slot(plan, y).offset);
}

TEST(MemoryPlan, QuantizeNarrowsInPlaceOverItsFloatInput) {
  // x (float, 4 B an element) -> q = quantize(x) (1 B) -> a = act(q): q at x's first byte; past
  // q's step only q's bytes of that buffer live on.
  Graph g;
  const ValueId x = g.add_input("x", f32({2, 3, 16}));
  const ValueId q = quantize(g, x);
  const ValueId a = activation(g, q);
  g.set_outputs({a});
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_TRUE(slot(plan, q).in_place);
  EXPECT_EQ(slot(plan, q).alias_of, x);
  EXPECT_EQ(slot(plan, q).offset, slot(plan, x).offset);
  EXPECT_TRUE(slot(plan, a).in_place);
  EXPECT_EQ(plan.tensor_level_bound, 96 * 4 + 96);
  EXPECT_EQ(plan.lower_bound, 96 * 4);
  EXPECT_EQ(plan.arena_size, 96 * 4);

  // int16 narrows too; preserve_inputs keeps x; a wider output or another shape never narrows.
  Graph h;
  const ValueId hx = h.add_input("x", f32({40}));
  const ValueId hq = quantize(h, hx, DType::kInt16);
  h.set_outputs({activation(h, quantize(h, h.call("cortex_m.dequantize_per_tensor.default", {hq},
                                                  {{"scale", 0.5}, {"zero_point", int64_t{0}},
                                                   {"quant_min", int64_t{-32768}}, {"quant_max", int64_t{32767}},
                                                   {"dtype", DType::kInt16}})[0]))});
  const MemoryPlan hp = plan_memory(h);
  verify_plan(hp);
  EXPECT_TRUE(slot(hp, hq).in_place);
  const ValueId dq = h.node(h.order()[1]).outputs[0];
  EXPECT_FALSE(slot(hp, dq).in_place);  // dequantize widens: it has no in-place input
  PlanOptions keep_inputs;
  keep_inputs.preserve_inputs = true;
  EXPECT_FALSE(slot(plan_memory(h, keep_inputs), hq).in_place);
}

TEST(MemoryPlan, QuantizeNarrowsOverAViewButNotOverAnInputReadLater) {
  // q over v (a view of x: the whole buffer) at x's first byte; q2's input x2 is read again by r.
  Graph g;
  const ValueId x = g.add_input("x", f32({4, 8}));
  const ValueId q = quantize(g, view(g, x, {32}));
  const ValueId x2 = g.add_input("x2", f32({32}));
  const ValueId q2 = quantize(g, x2);
  const ValueId r = relu(g, x2);
  g.set_outputs({q, q2, r});
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_TRUE(slot(plan, q).in_place);
  EXPECT_EQ(slot(plan, q).offset, slot(plan, x).offset);
  EXPECT_FALSE(slot(plan, q2).in_place);
}

TEST(MemoryPlan, InPlaceLowersThePeakBelowTheTensorLevelBound) {
  // A residual: a is read by the chain and by the add. Tensor level, a, b and c (16 B each) are
  // live at c's step; in place, c overwrites b and the add overwrites c.
  Graph g;
  const ValueId x = g.add_input("x", s8({16}));
  const ValueId a = activation(g, x);
  const ValueId b = activation(g, a);  // a is read later: not in place
  const ValueId c = activation(g, b);
  const ValueId d = qadd(g, c, a);
  g.set_outputs({d});
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_FALSE(slot(plan, b).in_place);
  EXPECT_TRUE(slot(plan, c).in_place);
  EXPECT_TRUE(slot(plan, d).in_place);
  EXPECT_EQ(slot(plan, d).alias_of, b);
  EXPECT_EQ(plan.tensor_level_bound, 48);
  EXPECT_EQ(plan.lower_bound, 32);
  EXPECT_EQ(plan.arena_size, 32);
}

TEST(MemoryPlan, NotInPlaceWhenTheInputIsReadLater) {
  Graph g;
  const ValueId x = g.add_input("x", s8({32}));
  const ValueId a = activation(g, x);
  const ValueId b = activation(g, a);  // a is read again below
  const ValueId c = qadd(g, b, a);     // b dies here: in place; a is input 1
  g.set_outputs({c});
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_FALSE(slot(plan, b).in_place);
  EXPECT_TRUE(slot(plan, c).in_place);
  EXPECT_EQ(slot(plan, c).alias_of, b);
  EXPECT_NE(slot(plan, a).offset, slot(plan, b).offset);
}

TEST(MemoryPlan, NotInPlaceOverAViewThatIsStillRead) {
  // v aliases a and is read after act(a): a's bytes must survive act(a).
  Graph g;
  const ValueId x = g.add_input("x", s8({32}));
  const ValueId a = activation(g, x);
  const ValueId v = view(g, a, {4, 8});
  const ValueId b = activation(g, a);
  const ValueId c = activation(g, v);
  g.set_outputs({b, c});
  PlanOptions keep_inputs;  // a apart from x
  keep_inputs.preserve_inputs = true;
  const MemoryPlan plan = plan_memory(g, keep_inputs);
  verify_plan(plan);
  EXPECT_FALSE(slot(plan, b).in_place);
  EXPECT_TRUE(slot(plan, c).in_place);  // over v (root a), the last reader of a's bytes
  EXPECT_EQ(slot(plan, c).alias_of, a);
}

TEST(MemoryPlan, NotInPlaceOverGraphOutputsOrWhenAnotherInputSharesTheBytes) {
  Graph g;
  const ValueId x = g.add_input("x", s8({32}));
  const ValueId a = activation(g, x);
  const ValueId b = activation(g, a);      // a is a graph output: its bytes stay
  const ValueId c = activation(g, b);
  const ValueId d = qadd(g, c, view(g, c, {32}));  // input 1 shares c's bytes
  g.set_outputs({a, d});
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_FALSE(slot(plan, b).in_place);
  EXPECT_TRUE(slot(plan, c).in_place);
  EXPECT_FALSE(slot(plan, d).in_place);
}

TEST(MemoryPlan, NotInPlaceOverABroadcastOperand) {
  Graph g;
  const ValueId x = g.add_input("x", s8({4, 8}));
  const ValueId y = g.add_input("y", s8({1, 8}));
  const ValueId small = activation(g, y);
  const ValueId big = activation(g, x);
  const ValueId s = qadd(g, small, big);  // self broadcasts: the output is bigger
  const ValueId t = qadd(g, s, activation(g, y));  // self has the output's shape; other broadcasts
  g.set_outputs({t});
  const MemoryPlan plan = plan_memory(g);
  verify_plan(plan);
  EXPECT_FALSE(slot(plan, s).in_place);
  EXPECT_TRUE(slot(plan, t).in_place);
  EXPECT_EQ(slot(plan, t).alias_of, s);
}

TEST(MemoryPlan, CheckPlanRejectsInPlaceOverAStillReadAlias) {
  Graph g;
  const ValueId x = g.add_input("x", s8({32}));
  const ValueId a = activation(g, x);
  const ValueId v = view(g, a, {4, 8});
  const ValueId b = activation(g, v);
  g.set_outputs({b});
  PlanOptions keep_inputs;  // a apart from x
  keep_inputs.preserve_inputs = true;
  const MemoryPlan plan = plan_memory(g, keep_inputs);
  ASSERT_EQ(check_plan(plan), "");
  ASSERT_TRUE(slot(plan, b).in_place);
  MemoryPlan early = plan;
  for (ValueSlot& s : early.values)
    if (s.value_id == v) s.last = slot(plan, b).first + 1;  // v read after b overwrote it
  for (ValueSlot& s : early.values)
    if (s.value_id == a) s.last = std::max(s.last, slot(plan, b).first + 1);
  early.num_steps = std::max(early.num_steps, slot(plan, b).first + 2);
  EXPECT_NE(check_plan(early).find("still read"), std::string::npos) << check_plan(early);
  MemoryPlan orphan = plan;
  for (ValueSlot& s : orphan.values)
    if (s.value_id == a) s.in_place = true;
  EXPECT_NE(check_plan(orphan).find("aliases nothing"), std::string::npos);
}

// --- Randomized graphs, checked by simulating execution on a tagged arena -----------------------

// Random DAGs of relu / add (some with a constant) / view_copy / unsqueeze_copy over float32 values,
// random scratch and random extra outputs. int8: the table activation and quantized_add instead of
// relu and add, which may run in place, and some inputs float32 quantized first (narrowing in place).
Graph random_graph(std::mt19937& rng, bool int8 = false) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Graph g;
  std::vector<ValueId> values;
  const int inputs = pick(1, 3);
  for (int i = 0; i < inputs; ++i) {
    const std::vector<int64_t> shape = {2 * pick(1, 40)};
    if (int8 && pick(0, 1) == 0)
      values.push_back(quantize(g, g.add_input("in" + std::to_string(i), f32(shape))));
    else
      values.push_back(g.add_input("in" + std::to_string(i), (int8 ? s8 : f32)(shape)));
  }
  const int nodes = pick(1, 25);
  for (int n = 0; n < nodes; ++n) {
    const ValueId x = values[pick(0, static_cast<int>(values.size()) - 1)];
    const TensorInfo info = g.value(x).info;
    ValueId y = kNoValue;
    switch (pick(0, 4)) {
      case 0:
      case 1:
        y = int8 ? activation(g, x) : relu(g, x);
        break;
      case 2: {
        std::vector<ValueId> same;
        for (ValueId v : values)
          if (g.value(v).info.shape == info.shape) same.push_back(v);
        const ValueId other = pick(0, 3) == 0 ? g.add_constant("k" + std::to_string(n), Tensor(info))
                                              : same[pick(0, static_cast<int>(same.size()) - 1)];
        y = int8 ? qadd(g, x, other) : g.call("aten.add.Tensor", {x, other}, {})[0];
        break;
      }
      case 3:
        y = view(g, x, info.shape.size() == 1 ? std::vector<int64_t>{2, -1}
                                              : std::vector<int64_t>{info.numel()});
        break;
      default:
        y = g.call("aten.unsqueeze_copy.default", {x}, {{"dim", int64_t{0}}})[0];
        break;
    }
    if (pick(0, 3) == 0) set_scratch(g, y, pick(1, 300));
    values.push_back(y);
  }
  std::vector<ValueId> outputs = {values.back()};
  for (ValueId v : values)
    if (pick(0, 5) == 0) outputs.push_back(v);
  g.set_outputs(outputs);
  return g;
}

// Runs the plan: every write of a value stamps its bytes with a fresh tag (a view takes its input's
// tag; scratch a step tag); every read checks the value's tag is still there. An op in place reads
// its in-place input element by element before writing over it, so only that input may be
// overwritten by the op's own output. Returns "" or the first clobbered read (or, with
// inputs_kept, a graph input not intact at the end).
std::string simulate(const Graph& g, const MemoryPlan& plan, bool inputs_kept = false) {
  std::map<ValueId, const ValueSlot*> slots;
  for (const ValueSlot& s : plan.values) slots[s.value_id] = &s;
  std::vector<int64_t> arena(static_cast<size_t>(plan.arena_size), -1);
  std::map<ValueId, int64_t> tag;
  int64_t next_tag = 0;
  auto write = [&](int64_t offset, int64_t size, int64_t stamp) {
    for (int64_t i = 0; i < size; ++i) arena.at(static_cast<size_t>(offset + i)) = stamp;
  };
  auto produce = [&](ValueId v) {
    tag[v] = next_tag++;
    write(slots.at(v)->offset, slots.at(v)->size, tag[v]);
  };
  auto intact = [&](ValueId v) {
    const ValueSlot& s = *slots.at(v);
    for (int64_t i = 0; i < s.size; ++i)
      if (arena.at(static_cast<size_t>(s.offset + i)) != tag.at(v)) return false;
    return true;
  };
  for (ValueId v : g.inputs()) produce(v);
  for (size_t step = 0; step < g.order().size(); ++step) {
    const Node& node = g.node(g.order()[step]);
    const bool in_place = node.outputs.size() == 1 && slots.at(node.outputs[0])->in_place;
    std::vector<ValueId> reads;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId in = node.inputs[i];
      if (in == kNoValue || g.value(in).kind == ValueKind::kConstant) continue;
      if (in_place && static_cast<int>(i) == in_place_input(node.op)) {
        if (!intact(in)) return "step " + std::to_string(step) + ": in-place input " + g.value(in).name + " clobbered";
        continue;  // consumed element by element as the output is written
      }
      reads.push_back(in);
    }
    auto check = [&](const char* when) -> std::string {
      for (ValueId in : reads)
        if (!intact(in))
          return "step " + std::to_string(step) + ": input " + g.value(in).name + " clobbered " + when;
      return "";
    };
    std::string problem = check("before the node");
    if (!problem.empty()) return problem;
    for (const ScratchSlot& s : plan.scratch)
      if (s.node_index == static_cast<int32_t>(step))
        write(s.offset, s.size, -2 - static_cast<int64_t>(step));
    if (!(problem = check("by scratch")).empty()) return problem;
    if (is_aliasing_view(g, node)) {
      tag[node.outputs[0]] = tag.at(node.inputs[0]);
    } else {
      for (ValueId out : node.outputs) produce(out);
    }
    if (!(problem = check("by the outputs")).empty()) return problem;
    for (const ScratchSlot& s : plan.scratch)
      if (s.node_index == static_cast<int32_t>(step))
        for (int64_t i = 0; i < s.size; ++i)
          if (arena.at(static_cast<size_t>(s.offset + i)) != -2 - static_cast<int64_t>(step))
            return "step " + std::to_string(step) + ": scratch overwritten by an output";
  }
  for (ValueId out : g.outputs())
    if (g.value(out).kind != ValueKind::kConstant && !intact(out))
      return "output " + g.value(out).name + " clobbered before the end";
  if (inputs_kept)
    for (ValueId in : g.inputs())
      if (!intact(in)) return "input " + g.value(in).name + " overwritten though kept";
  return "";
}

TEST(MemoryPlan, RandomGraphsRunWithoutClobberingAnyLiveBuffer) {
  std::mt19937 rng(7);
  int aliases = 0;
  int scratch = 0;
  int in_place = 0;
  int over_inputs = 0;  // graph inputs an op wrote over
  for (int trial = 0; trial < 600; ++trial) {
    const Graph g = random_graph(rng, trial % 2 == 1);
    const MemoryPlan best = plan_memory(g);
    ASSERT_EQ(check_plan(best), "") << "trial " << trial << "\n" << g.to_string();
    ASSERT_EQ(simulate(g, best), "") << "trial " << trial << "\n" << g.to_string();
    ASSERT_GE(best.arena_size, best.lower_bound);
    for (const std::string& policy : placement_policies()) {
      const MemoryPlan plan = plan_memory(g, 16, policy);
      ASSERT_EQ(check_plan(plan), "") << "trial " << trial << " " << policy;
      ASSERT_EQ(simulate(g, plan), "") << "trial " << trial << " " << policy << "\n" << g.to_string();
      ASSERT_GE(plan.arena_size, best.arena_size);
    }
    PlanOptions tensor_level;
    tensor_level.in_place = false;
    const MemoryPlan whole = plan_memory(g, tensor_level);
    ASSERT_EQ(check_plan(whole), "") << "trial " << trial;
    ASSERT_EQ(simulate(g, whole), "") << "trial " << trial << "\n" << g.to_string();
    ASSERT_EQ(best.tensor_level_bound, whole.lower_bound);
    ASSERT_LE(best.lower_bound, whole.lower_bound);
    PlanOptions keep_inputs;
    keep_inputs.preserve_inputs = true;
    const MemoryPlan kept = plan_memory(g, keep_inputs);
    ASSERT_EQ(check_plan(kept), "") << "trial " << trial;
    ASSERT_EQ(simulate(g, kept, true), "") << "trial " << trial << "\n" << g.to_string();
    for (ValueId in : g.inputs())
      over_inputs += std::count_if(best.values.begin(), best.values.end(),
                                   [&](const ValueSlot& s) { return s.alias_of == in && s.in_place; }) > 0;
    for (const ValueSlot& s : best.values) {
      aliases += s.alias_of >= 0 && !s.in_place;
      in_place += s.in_place;
    }
    scratch += static_cast<int>(best.scratch.size());
  }
  // The generator exercises aliases, in-place ops and scratch.
  EXPECT_GT(aliases, 100);
  EXPECT_GT(in_place, 100);
  EXPECT_GT(over_inputs, 100);
  EXPECT_GT(scratch, 100);
}

}  // namespace
}  // namespace cortexm
