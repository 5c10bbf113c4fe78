// Program writer, loader and executor: bit-exact with the interpreter; the loader rejects bad
// buffers with a status naming the section and field; the executor checks the arena.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "graph/errors.h"
#include "graph/interpreter.h"
#include "program/program_generated.h"
#include "program/status_message.h"
#include "program/writer.h"
#include "random_data.h"
#include "runtime/op_context.h"
#include "runtime/op_resolver.h"
#include "runtime/program.h"

namespace cortexm {
namespace {

using runtime::StatusCode;

struct Aligned {
  explicit Aligned(const std::string& bytes) : size(bytes.size()) {
    data = static_cast<uint8_t*>(::operator new(size + 16, std::align_val_t(16)));
    std::memcpy(data, bytes.data(), size);
  }
  ~Aligned() { ::operator delete(data, std::align_val_t(16)); }
  uint8_t* data;
  size_t size;
};

TensorInfo info(DType dtype, std::vector<int64_t> shape, std::vector<int64_t> dim_order = {}) {
  TensorInfo t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.dim_order = std::move(dim_order);
  return t;
}

Tensor random_tensor(const TensorInfo& i, testing::RandomData& rng) {
  Tensor t(i);
  for (int64_t k = 0; k < t.numel(); ++k) {
    if (i.dtype == DType::kInt8) t.data<int8_t>()[k] = static_cast<int8_t>(rng.uniform(-128, 127));
    if (i.dtype == DType::kInt32) t.data<int32_t>()[k] = rng.uniform(-3000, 3000);
    if (i.dtype == DType::kFloat32) t.data<float>()[k] = static_cast<float>(rng.uniform(-500, 500)) / 97.0f;
  }
  return t;
}

// input [1, 3, 6, 5] int8 -> channels-last clone -> conv 3x3 (4 out) -> cat with a channels-last
// copy of itself -> contiguous clone -> view [1, -1] -> linear (5 out) -> dequantize -> softmax.
Graph conv_linear_graph(testing::RandomData& rng) {
  Graph g;
  const ValueId x = g.add_input("x", info(DType::kInt8, {1, 3, 6, 5}));
  const ValueId xcl = g.call("dim_order_ops._clone_dim_order.default", {x},
                             {{"dim_order", std::vector<int64_t>{0, 2, 3, 1}}})[0];
  const ValueId w = g.add_constant("w", random_tensor(info(DType::kInt8, {4, 3, 3, 3}), rng));
  const ValueId b = g.add_constant("b", random_tensor(info(DType::kInt32, {4}), rng));
  const ValueId conv = g.call("cortex_m.quantized_conv2d.default", {xcl, w, b},
                              {{"stride", std::vector<int64_t>{1, 2}},
                               {"padding", std::vector<int64_t>{1, 1}},
                               {"dilation", std::vector<int64_t>{1, 1}},
                               {"input_offset", int64_t{5}},
                               {"output_offset", int64_t{-3}},
                               {"requantize_multipliers", std::vector<int64_t>{1 << 30, 1 << 30, 3 << 28, 1 << 29}},
                               {"requantize_shifts", std::vector<int64_t>{-8, -7, -9, -8}}},
                              kNoNode, "conv")[0];
  const ValueId cat = g.call("aten.cat.default", {conv, conv}, {{"dim", int64_t{1}}})[0];
  const ValueId back = g.call("dim_order_ops._clone_dim_order.default", {cat}, {})[0];
  const int64_t features = g.value(back).info.numel();
  const ValueId flat = g.call("aten.view_copy.default", {back}, {{"size", std::vector<int64_t>{1, features}}})[0];
  const ValueId fw = g.add_constant("fw", random_tensor(info(DType::kInt8, {5, features}), rng));
  const ValueId fc = g.call("cortex_m.quantized_linear.default", {flat, fw, kNoValue},
                            {{"input_offset", int64_t{1}},
                             {"output_offset", int64_t{2}},
                             {"requantize_multipliers", std::vector<int64_t>{1 << 30}},
                             {"requantize_shifts", std::vector<int64_t>{-10}}},
                            kNoNode, "fc")[0];
  const ValueId dq = g.call("cortex_m.dequantize_per_tensor.default", {fc},
                            {{"scale", 0.125}, {"zero_point", int64_t{2}}, {"quant_min", int64_t{-128}},
                             {"quant_max", int64_t{127}}, {"dtype", DType::kInt8}})[0];
  const ValueId sm = g.call("aten._softmax.default", {dq}, {{"dim", int64_t{-1}}})[0];
  g.set_outputs({sm, conv});
  return g;
}

struct Loaded {
  explicit Loaded(const std::string& bytes) : buffer(bytes) {
    status = runtime::Program::load(buffer.data, buffer.size, &program);
  }
  Aligned buffer;
  runtime::Program program;
  runtime::Status status;
};

std::vector<Tensor> run_program(const runtime::Program& program, const std::vector<Tensor>& inputs,
                                runtime::RunStats* stats = nullptr, size_t arena_shift = 0) {
  std::unique_ptr<uint8_t[]> raw(new uint8_t[program.required_arena_size() + 16 + arena_shift]);
  uint8_t* arena = raw.get() + (16 - reinterpret_cast<uintptr_t>(raw.get()) % 16) % 16 + arena_shift;
  for (int32_t i = 0; i < program.num_inputs(); ++i) {
    Tensor in = inputs[static_cast<size_t>(i)];
    runtime::TensorView src = program.tensor(program.input_tensor(i), nullptr);
    src.data = static_cast<uint8_t*>(in.raw());
    runtime::strides_for(src.shape, src.rank, nullptr, src.strides);
    runtime::copy_logical(src, program.tensor(program.input_tensor(i), arena));
  }
  EXPECT_TRUE(runtime::execute(program, arena, program.required_arena_size(), nullptr, stats).ok());
  std::vector<Tensor> outs;
  for (int32_t i = 0; i < program.num_outputs(); ++i) {
    const runtime::TensorView src = program.tensor(program.output_tensor(i), arena);
    TensorInfo oi = info(static_cast<DType>(src.dtype), std::vector<int64_t>(src.shape, src.shape + src.rank));
    Tensor out(oi);
    runtime::TensorView dst = src;
    dst.data = static_cast<uint8_t*>(out.raw());
    runtime::strides_for(dst.shape, dst.rank, nullptr, dst.strides);
    runtime::copy_logical(src, dst);
    outs.push_back(out);
  }
  return outs;
}

TEST(Program, RunsBitExactWithTheInterpreter) {
  testing::RandomData rng(3);
  const Graph g = conv_linear_graph(rng);
  const std::string bytes = program::write_program(g, program::sequential_layout(g, Isa::kMve), {});
  Loaded loaded(bytes);
  ASSERT_TRUE(loaded.status.ok()) << program::status_message(loaded.status, loaded.buffer.data, loaded.buffer.size, "p");
  EXPECT_EQ(loaded.program.float_ops(), 1);
  for (int trial = 0; trial < 5; ++trial) {
    const std::vector<Tensor> inputs = {random_tensor(g.value(g.inputs()[0]).info, rng)};
    const std::vector<Tensor> want = run_graph(g, inputs);
    runtime::RunStats stats;
    const std::vector<Tensor> got = run_program(loaded.program, inputs, &stats);
    EXPECT_EQ(stats.ops, loaded.program.num_ops());
    EXPECT_EQ(stats.float_ops, 1);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].nbytes(), want[k].nbytes());
      EXPECT_EQ(std::memcmp(got[k].raw(), want[k].raw(), got[k].nbytes()), 0) << "output " << k;
    }
  }
}

// init_op_state decodes each op once into the caller's memory: exactly op_state_size() bytes (a slot
// per op and its kernel's fixed state), written and nothing beyond; runs from it give the
// interpreter's outputs, as runs without it do, on arenas at any address.
TEST(Program, OpStateIsExactAndRunsBitExact) {
  testing::RandomData rng(23);
  const Graph g = conv_linear_graph(rng);
  Loaded loaded(program::write_program(g, program::sequential_layout(g, Isa::kMve), {}));
  ASSERT_TRUE(loaded.status.ok());
  runtime::Program& program = loaded.program;
  // Permute (clone), QuantizedConv2d, Cat, View (clone), View, QuantizedLinear, DequantizePerTensor,
  // Softmax: 8 slots of 8 bytes, and 112 + 176 + 40 + 40 + 112 of state.
  ASSERT_EQ(program.num_ops(), 8);
  EXPECT_EQ(program.op_state_size(), size_t{8 * 8 + 112 + 176 + 40 + 40 + 112});
  size_t want = size_t{runtime::kOpSlotBytes} * static_cast<size_t>(program.num_ops());
  for (int32_t i = 0; i < program.num_ops(); ++i)
    if (program.op_impl(i).state) want += program.op_impl(i).state->bytes;
  EXPECT_EQ(program.op_state_size(), want);

  const std::vector<Tensor> inputs = {random_tensor(g.value(g.inputs()[0]).info, rng)};
  const std::vector<Tensor> unbound = run_program(program, inputs);

  const size_t size = program.op_state_size();
  std::vector<uint64_t> memory(size / 8 + 4, 0x5a5a5a5a5a5a5a5aull);
  auto* state = reinterpret_cast<uint8_t*>(memory.data());
  EXPECT_EQ(program.init_op_state(state, size - 1).code, StatusCode::kInvalidArgument);
  EXPECT_EQ(program.init_op_state(state + 4, size).code, StatusCode::kInvalidArgument);
  EXPECT_EQ(program.init_op_state(nullptr, size).code, StatusCode::kInvalidArgument);
  EXPECT_EQ(program.op_state(), nullptr);
  ASSERT_TRUE(program.init_op_state(state, size).ok());
  EXPECT_EQ(program.op_state(), state);
  for (size_t k = size; k < memory.size() * 8; ++k) EXPECT_EQ(state[k], 0x5a) << "byte " << k << " past the state";

  const std::vector<Tensor> want_outputs = run_graph(g, inputs);
  for (size_t shift : {0, 16, 48}) {
    const std::vector<Tensor> bound = run_program(program, inputs, nullptr, shift);
    ASSERT_EQ(bound.size(), want_outputs.size());
    for (size_t k = 0; k < bound.size(); ++k) {
      ASSERT_EQ(bound[k].nbytes(), want_outputs[k].nbytes());
      EXPECT_EQ(std::memcmp(bound[k].raw(), want_outputs[k].raw(), bound[k].nbytes()), 0) << "output " << k;
      EXPECT_EQ(std::memcmp(bound[k].raw(), unbound[k].raw(), bound[k].nbytes()), 0) << "output " << k;
    }
  }
}

// A resolver of exactly the program's kernels runs it like all_ops(); one without a kernel it
// names is refused at load time, naming the op and the kernel.
TEST(Program, LoadsWithAResolverOfItsKernelsAndRefusesAMissingOne) {
  testing::RandomData rng(13);
  const Graph g = conv_linear_graph(rng);
  const std::string bytes = program::write_program(g, program::sequential_layout(g, Isa::kMve), {});
  Loaded full(bytes);
  ASSERT_TRUE(full.status.ok());
  std::vector<runtime::OpEntry> used;
  for (int32_t i = 0; i < full.program.num_ops(); ++i) {
    const uint8_t kernel = full.program.fb().ops()->Get(i)->kernel();
    bool listed = false;
    for (const runtime::OpEntry& e : used) listed = listed || e.kernel_id == kernel;
    if (!listed) used.push_back(runtime::all_ops().entry(kernel));
  }
  ASSERT_LT(used.size(), static_cast<size_t>(runtime::all_ops().size()));
  const runtime::OpResolver exact(used.data(), static_cast<int32_t>(used.size()));
  runtime::Program program;
  ASSERT_TRUE(runtime::Program::load(full.buffer.data, full.buffer.size, &program, exact).ok());
  EXPECT_EQ(&program.ops(), &exact);
  const std::vector<Tensor> inputs = {random_tensor(g.value(g.inputs()[0]).info, rng)};
  const std::vector<Tensor> want = run_program(full.program, inputs);
  const std::vector<Tensor> got = run_program(program, inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_EQ(std::memcmp(got[k].raw(), want[k].raw(), got[k].nbytes()), 0) << "output " << k;

  std::vector<runtime::OpEntry> without_linear;
  for (const runtime::OpEntry& e : used)
    if (e.kernel_id != fb::KernelId_QuantizedLinear) without_linear.push_back(e);
  ASSERT_EQ(without_linear.size() + 1, used.size());
  const runtime::OpResolver missing(without_linear.data(), static_cast<int32_t>(without_linear.size()));
  const runtime::Status st = runtime::Program::load(full.buffer.data, full.buffer.size, &program, missing);
  EXPECT_EQ(st.code, StatusCode::kUnsupported);
  EXPECT_STREQ(st.section, "ops");
  EXPECT_STREQ(st.detail.argument, "kernel");
  EXPECT_EQ(st.detail.value, fb::KernelId_QuantizedLinear);
  const std::string message = program::status_message(st, full.buffer.data, full.buffer.size, "p");
  EXPECT_NE(message.find("('fc', QuantizedLinear): kernel = "), std::string::npos) << message;
  EXPECT_NE(message.find("is not registered in this runtime's OpResolver"), std::string::npos) << message;
}

// Each op's params table is verified by a registered kernel's verifier (a firmware links no
// other): a malformed table of a registered kernel is a malformed file, one of a kernel the
// resolver lacks is refused as unregistered before anything reads it.
TEST(Program, VerifiesParamsWithTheRegisteredKernels) {
  testing::RandomData rng(13);
  const Graph g = conv_linear_graph(rng);
  const std::string bytes = program::write_program(g, program::sequential_layout(g, Isa::kMve), {});
  Aligned buffer(bytes);
  const fb::Program* p = fb::GetSizePrefixedProgram(buffer.data);
  int32_t linear = -1;
  for (uint32_t i = 0; i < p->ops()->size(); ++i)
    if (p->ops()->Get(i)->kernel() == fb::KernelId_QuantizedLinear) linear = static_cast<int32_t>(i);
  ASSERT_GE(linear, 0);
  // The LinearParams table's vtable offset pointed outside the buffer.
  auto* params = const_cast<uint8_t*>(static_cast<const uint8_t*>(p->ops()->Get(linear)->params()));
  const int32_t outside = 0x7fffff00;
  std::memcpy(params, &outside, sizeof outside);

  runtime::Program program;
  runtime::Status st = runtime::Program::load(buffer.data, buffer.size, &program);
  EXPECT_EQ(st.code, StatusCode::kInvalidProgram);
  EXPECT_STREQ(st.detail.argument, "flatbuffer");

  std::vector<runtime::OpEntry> without_linear;
  for (uint32_t i = 0; i < p->ops()->size(); ++i) {
    const uint8_t kernel = p->ops()->Get(i)->kernel();
    bool listed = kernel == fb::KernelId_QuantizedLinear;
    for (const runtime::OpEntry& e : without_linear) listed = listed || e.kernel_id == kernel;
    if (!listed) without_linear.push_back(runtime::all_ops().entry(kernel));
  }
  for (const runtime::OpEntry& e : without_linear) ASSERT_NE(e.impl->params, fb::OpParams_LinearParams);
  const runtime::OpResolver missing(without_linear.data(), static_cast<int32_t>(without_linear.size()));
  st = runtime::Program::load(buffer.data, buffer.size, &program, missing);
  EXPECT_EQ(st.code, StatusCode::kUnsupported);
  EXPECT_STREQ(st.section, "ops");
  EXPECT_EQ(st.section_index, linear);
  EXPECT_STREQ(st.detail.argument, "kernel");
}

TEST(Program, SequentialLayoutAliasesContiguousViews) {
  testing::RandomData rng(4);
  const Graph g = conv_linear_graph(rng);
  const program::ArenaLayout layout = program::sequential_layout(g, Isa::kScalar);
  for (NodeId id : g.order()) {
    const Node& n = g.node(id);
    if (n.op == "aten.view_copy.default")
      EXPECT_EQ(layout.value_offsets.at(n.outputs[0]), layout.value_offsets.at(n.inputs[0]));
  }
  for (const auto& [value, offset] : layout.value_offsets) EXPECT_EQ(offset % 16, 0) << value;
}

// int8 [2, 5, 1, 3] -> channels-last clone -> squeeze H ([2, 5, 3], order [0, 2, 1]) -> table
// activation -> unsqueeze back to [2, 5, 1, 3] (channels-last) -> contiguous clone.
Graph channels_last_size_one_views_graph(testing::RandomData& rng) {
  Graph g;
  const ValueId x = g.add_input("x", info(DType::kInt8, {2, 5, 1, 3}));
  const ValueId cl = g.call("dim_order_ops._clone_dim_order.default", {x},
                            {{"dim_order", std::vector<int64_t>{0, 2, 3, 1}}})[0];
  const ValueId squeezed = g.call("aten.squeeze_copy.dims", {cl}, {{"dim", std::vector<int64_t>{2}}})[0];
  const ValueId table = g.add_constant("table", random_tensor(info(DType::kInt8, {256}), rng));
  const ValueId act = g.call("cortex_m.quantized_activation.default", {squeezed, table}, {})[0];
  const ValueId back = g.call("aten.unsqueeze_copy.default", {act}, {{"dim", int64_t{2}}})[0];
  g.set_outputs({g.call("dim_order_ops._clone_dim_order.default", {back}, {})[0]});
  return g;
}

TEST(Program, SizeOneViewsOfChannelsLastDataRunInPlace) {
  testing::RandomData rng(5);
  const Graph g = channels_last_size_one_views_graph(rng);
  for (NodeId id : g.order()) {
    const Node& n = g.node(id);
    if (n.op == "aten.squeeze_copy.dims")
      EXPECT_EQ(g.value(n.outputs[0]).info.dim_order, (std::vector<int64_t>{0, 2, 1}));
    if (n.op == "aten.unsqueeze_copy.default")
      EXPECT_EQ(g.value(n.outputs[0]).info.dim_order, (std::vector<int64_t>{0, 2, 3, 1}));
  }
  for (const bool planned : {false, true}) {
    const program::ArenaLayout layout = planned ? program::planned_layout(g, Isa::kScalar, nullptr)
                                                : program::sequential_layout(g, Isa::kScalar);
    for (NodeId id : g.order()) {
      const Node& n = g.node(id);
      if (n.op == "aten.squeeze_copy.dims" || n.op == "aten.unsqueeze_copy.default")
        EXPECT_EQ(layout.value_offsets.at(n.outputs[0]), layout.value_offsets.at(n.inputs[0])) << n.name;
    }
    Loaded loaded(program::write_program(g, layout, {}));
    ASSERT_TRUE(loaded.status.ok()) << program::status_message(loaded.status, loaded.buffer.data, loaded.buffer.size, "p");
    for (int trial = 0; trial < 3; ++trial) {
      const std::vector<Tensor> inputs = {random_tensor(g.value(g.inputs()[0]).info, rng)};
      const std::vector<Tensor> want = run_graph(g, inputs);
      const std::vector<Tensor> got = run_program(loaded.program, inputs);
      ASSERT_EQ(got.size(), 1u);
      ASSERT_EQ(got[0].nbytes(), want[0].nbytes());
      EXPECT_EQ(std::memcmp(got[0].raw(), want[0].raw(), got[0].nbytes()), 0);
    }
  }
}

TEST(Program, BroadcastingMulRunsChannelsLast) {
  // [2, 6, 4, 5] * [2, 6, 1, 1] (a squeeze-and-excite scale), both channels-last, and
  // [2, 6, 4, 5] + [1, 6, 4, 1]: broadcast over the channels-last bytes, bit-exact.
  testing::RandomData rng(6);
  Graph g;
  const std::vector<int64_t> nhwc = {0, 2, 3, 1};
  const ValueId x = g.add_input("x", info(DType::kInt8, {2, 6, 4, 5}));
  const ValueId s = g.add_input("s", info(DType::kInt8, {2, 6, 1, 1}));
  const ValueId t = g.add_input("t", info(DType::kInt8, {1, 6, 4, 1}));
  auto to_cl = [&](ValueId v) {
    return g.call("dim_order_ops._clone_dim_order.default", {v}, {{"dim_order", nhwc}})[0];
  };
  const ValueId xc = to_cl(x);
  const ValueId prod = g.call("cortex_m.quantized_mul.default", {xc, to_cl(s)},
                              {{"self_zero_point", int64_t{3}}, {"other_zero_point", int64_t{-5}},
                               {"output_zero_point", int64_t{2}}, {"output_multiplier", int64_t{1} << 30},
                               {"output_shift", int64_t{-6}}})[0];
  Attrs add_attrs;
  for (auto [name, v] : std::vector<std::pair<const char*, int64_t>>{
           {"self_zero_point", 3}, {"self_multiplier", 1 << 30}, {"self_shift", -1},
           {"other_zero_point", -5}, {"other_multiplier", 3 << 28}, {"other_shift", -1},
           {"output_zero_point", 2}, {"output_multiplier", 1 << 30}, {"output_shift", -19}})
    add_attrs.emplace_back(name, v);
  const ValueId sum = g.call("cortex_m.quantized_add.default", {prod, to_cl(t)}, add_attrs)[0];
  ASSERT_EQ(g.value(prod).info.dim_order, nhwc);
  ASSERT_EQ(g.value(sum).info.dim_order, nhwc);
  g.set_outputs({g.call("dim_order_ops._clone_dim_order.default", {sum}, {})[0]});
  Loaded loaded(program::write_program(g, program::sequential_layout(g, Isa::kScalar), {}));
  ASSERT_TRUE(loaded.status.ok()) << program::status_message(loaded.status, loaded.buffer.data, loaded.buffer.size, "p");
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<Tensor> inputs;
    for (ValueId in : g.inputs()) inputs.push_back(random_tensor(g.value(in).info, rng));
    const std::vector<Tensor> want = run_graph(g, inputs);
    const std::vector<Tensor> got = run_program(loaded.program, inputs);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(std::memcmp(got[0].raw(), want[0].raw(), got[0].nbytes()), 0);
  }
}

TEST(Program, ProfilerHookSeesEveryOpInOrder) {
  testing::RandomData rng(5);
  const Graph g = conv_linear_graph(rng);
  Loaded loaded(program::write_program(g, program::sequential_layout(g, Isa::kScalar), {}));
  ASSERT_TRUE(loaded.status.ok());
  struct Log {
    std::vector<std::pair<int32_t, bool>> events;
  } log;
  runtime::Profiler profiler;
  profiler.context = &log;
  profiler.hook = [](void* context, int32_t op, uint8_t, bool after) {
    static_cast<Log*>(context)->events.emplace_back(op, after);
  };
  std::unique_ptr<uint8_t, void (*)(uint8_t*)> arena(
      static_cast<uint8_t*>(::operator new(loaded.program.required_arena_size(), std::align_val_t(16))),
      [](uint8_t* p) { ::operator delete(p, std::align_val_t(16)); });
  std::memset(arena.get(), 0, loaded.program.required_arena_size());
  ASSERT_TRUE(runtime::execute(loaded.program, arena.get(), loaded.program.required_arena_size(), &profiler).ok());
  ASSERT_EQ(log.events.size(), 2u * static_cast<size_t>(loaded.program.num_ops()));
  for (size_t i = 0; i < log.events.size(); ++i) {
    EXPECT_EQ(log.events[i].first, static_cast<int32_t>(i / 2));
    EXPECT_EQ(log.events[i].second, i % 2 == 1);
  }
}

// The host runs scalar kernels: a conv planned for MVE (4 int8 columns of 27 taps) takes the scalar
// kernel's 4 int16 columns from a region after the arena, which the caller's arena must then hold.
TEST(Program, ScratchBeyondThePlanComesAfterTheArena) {
  testing::RandomData rng(8);
  const Graph g = conv_linear_graph(rng);
  Loaded mve(program::write_program(g, program::sequential_layout(g, Isa::kMve), {}));
  Loaded scalar(program::write_program(g, program::sequential_layout(g, Isa::kScalar), {}));
  ASSERT_TRUE(mve.status.ok());
  ASSERT_TRUE(scalar.status.ok());
  EXPECT_EQ(scalar.program.required_arena_size(), scalar.program.arena_size());
  EXPECT_EQ(mve.program.extra_scratch_offset() % 16, 0u);
  EXPECT_GE(mve.program.extra_scratch_offset(), mve.program.arena_size());
  EXPECT_EQ(mve.program.required_arena_size(), mve.program.extra_scratch_offset() + 4 * 27 * sizeof(int16_t));
  std::unique_ptr<uint8_t, void (*)(uint8_t*)> arena(
      static_cast<uint8_t*>(::operator new(mve.program.required_arena_size(), std::align_val_t(16))),
      [](uint8_t* p) { ::operator delete(p, std::align_val_t(16)); });
  std::memset(arena.get(), 0, mve.program.required_arena_size());
  EXPECT_EQ(runtime::execute(mve.program, arena.get(), mve.program.arena_size()).code, StatusCode::kInvalidArgument);
  EXPECT_TRUE(runtime::execute(mve.program, arena.get(), mve.program.required_arena_size()).ok());
  const std::vector<Tensor> inputs = {random_tensor(g.value(g.inputs()[0]).info, rng)};
  const std::vector<Tensor> want = run_program(scalar.program, inputs), got = run_program(mve.program, inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_EQ(std::memcmp(got[k].raw(), want[k].raw(), got[k].nbytes()), 0) << "output " << k;
}

TEST(Program, ExecuteChecksTheArena) {
  testing::RandomData rng(6);
  const Graph g = conv_linear_graph(rng);
  Loaded loaded(program::write_program(g, program::sequential_layout(g, Isa::kScalar), {}));
  ASSERT_TRUE(loaded.status.ok());
  alignas(16) static uint8_t small[64];
  EXPECT_EQ(runtime::execute(loaded.program, nullptr, 0).code, StatusCode::kInvalidArgument);
  EXPECT_EQ(runtime::execute(loaded.program, small, sizeof(small)).code, StatusCode::kInvalidArgument);
  EXPECT_EQ(runtime::execute(loaded.program, small + 1, loaded.program.arena_size()).code,
            StatusCode::kInvalidArgument);
}

TEST(Program, LoaderRejectsTruncatedAndMisalignedBuffers) {
  testing::RandomData rng(7);
  const Graph g = conv_linear_graph(rng);
  const std::string bytes = program::write_program(g, program::sequential_layout(g, Isa::kScalar), {});
  for (size_t n : {size_t{0}, size_t{7}, size_t{8}, size_t{64}, bytes.size() / 3, bytes.size() - 1}) {
    Loaded loaded(bytes.substr(0, n));
    EXPECT_FALSE(loaded.status.ok()) << n;
    EXPECT_STREQ(loaded.status.section, "program") << n;
  }
  Aligned shifted(std::string(1, '\0') + bytes);
  runtime::Program p;
  const runtime::Status st = runtime::Program::load(shifted.data + 1, bytes.size(), &p);
  EXPECT_EQ(st.code, StatusCode::kInvalidArgument);
  EXPECT_STREQ(st.detail.argument, "address");
}

TEST(Program, LoaderRefusesBuffersBeyondTheFlatBuffersLimit) {
  // Issue 35: FlatBuffers verifies buffers below 2^31 - 1 bytes (its assert on that is compiled out
  // in release builds); a larger buffer is refused before the verifier sees it. calloc leaves the
  // untouched 2 GiB unbacked.
  testing::RandomData rng(8);
  const Graph g = conv_linear_graph(rng);
  const std::string bytes = program::write_program(g, program::sequential_layout(g, Isa::kScalar), {});
  const size_t size = runtime::kMaxProgramBytes + 1;
  std::unique_ptr<uint8_t, decltype(&std::free)> big(static_cast<uint8_t*>(std::calloc(size, 1)), &std::free);
  ASSERT_NE(big, nullptr);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(big.get()) % runtime::kAlignment, 0u);
  std::memcpy(big.get(), bytes.data(), bytes.size());
  const uint32_t prefix = static_cast<uint32_t>(size - 4);  // the program, then zero padding
  std::memcpy(big.get(), &prefix, sizeof(prefix));
  runtime::Program p;
  const runtime::Status st = runtime::Program::load(big.get(), size, &p);
  EXPECT_FALSE(st.ok());
  EXPECT_STREQ(st.detail.argument, "size");
  EXPECT_EQ(st.detail.value, static_cast<int64_t>(size));
  EXPECT_STREQ(st.detail.requirement, "must be <= 2^31 - 2 (the FlatBuffers limit)");
}

TEST(Program, WriterRefusesEveryUnsupportedNodeNamingEach) {
  // A float transposed convolution has no portable kernel; PT2E's quantize has no runtime kernel.
  testing::RandomData rng(3);
  Graph g;
  const ValueId x = g.add_input("x", info(DType::kFloat32, {1, 2, 4, 4}));
  const ValueId w = g.add_constant("w", random_tensor(info(DType::kFloat32, {2, 3, 2, 2}), rng));
  const ValueId up = g.call("aten.convolution.default", {x, w, kNoValue},
                            {{"stride", std::vector<int64_t>{2, 2}},
                             {"padding", std::vector<int64_t>{0, 0}},
                             {"dilation", std::vector<int64_t>{1, 1}},
                             {"transposed", true}},
                            kNoNode, "my_up")[0];
  g.set_outputs({g.call("quantized_decomposed.quantize_per_tensor.default", {up},
                        {{"scale", 0.05}, {"zero_point", int64_t{0}}, {"quant_min", int64_t{-128}},
                         {"quant_max", int64_t{127}}, {"dtype", DType::kInt8}},
                        kNoNode, "my_q")[0]});
  const std::vector<program::ProgramProblem> problems = program::program_problems(g);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].node, "my_up");
  EXPECT_NE(problems[0].reason.find("transposed convolution"), std::string::npos) << problems[0].reason;
  EXPECT_EQ(problems[1].node, "my_q");
  EXPECT_EQ(problems[1].reason.rfind("the runtime has no kernel for it: lower it (cortexm.lower)", 0), 0u)
      << problems[1].reason;
  try {
    program::write_program(g, program::sequential_layout(g, Isa::kScalar), {});
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("2 nodes cannot run in a cortexm program:", 0), 0u) << what;
    EXPECT_NE(what.find(program::problem_line(problems[0])), std::string::npos);
    EXPECT_NE(what.find(program::problem_line(problems[1])), std::string::npos);
  }
}

TEST(Program, WriterRefusesTooLittleScratch) {
  testing::RandomData rng(8);
  const Graph g = conv_linear_graph(rng);
  program::ArenaLayout layout = program::sequential_layout(g, Isa::kMve);  // the options' target, an M55
  ASSERT_FALSE(layout.scratch.empty());
  EXPECT_NO_THROW(program::write_program(g, layout, {}));
  layout.scratch.begin()->second.second -= 1;
  EXPECT_THROW(program::write_program(g, layout, {}), GraphError);
}

// A cat of many inputs (an unrolled RNN's 100 steps), every second one channels-last.
TEST(Program, CatTakesAHundredInputsInAnyLayout) {
  testing::RandomData rng(11);
  Graph g;
  std::vector<ValueId> parts;
  std::vector<Tensor> inputs;
  for (int i = 0; i < 100; ++i) {
    const TensorInfo in = info(DType::kInt8, {1, 1 + i % 3, 2, 3});
    ValueId x = g.add_input("x" + std::to_string(i), in);
    inputs.push_back(random_tensor(in, rng));
    if (i % 2) x = g.call("dim_order_ops._clone_dim_order.default", {x}, {{"dim_order", std::vector<int64_t>{0, 2, 3, 1}}})[0];
    parts.push_back(x);
  }
  g.set_outputs({g.call("aten.cat.default", parts, {{"dim", int64_t{1}}}, kNoNode, "cat")[0]});
  Loaded loaded(program::write_program(g, program::sequential_layout(g, Isa::kScalar), {}));
  ASSERT_TRUE(loaded.status.ok()) << program::status_message(loaded.status, loaded.buffer.data, loaded.buffer.size, "p");
  const std::vector<Tensor> want = run_graph(g, inputs), got = run_program(loaded.program, inputs);
  ASSERT_EQ(got[0].nbytes(), want[0].nbytes());
  EXPECT_EQ(std::memcmp(got[0].raw(), want[0].raw(), got[0].nbytes()), 0);
}

TEST(Program, LoaderNamesTheInputAndOutputCountsAKernelTakes) {
  Graph g;
  const ValueId x = g.add_input("x", info(DType::kInt8, {17, 2}));
  const std::vector<ValueId> parts =
      g.call("aten.split_with_sizes_copy.default", {x},
             {{"split_sizes", std::vector<int64_t>(17, 1)}, {"dim", int64_t{0}}}, kNoNode, "split");
  g.set_outputs(parts);
  try {
    program::write_program(g, program::sequential_layout(g, Isa::kScalar), {});
    FAIL() << "expected GraphError";
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("outputs.size = 17: must be 1 to 16 for this kernel"), std::string::npos)
        << e.what();
  }
}

// An unrolled RNN reads its weights once per step: equal constants become one tensor and one
// segment; equal bytes under other qparams share the segment only.
TEST(Program, WriterStoresIdenticalConstantsOnce) {
  testing::RandomData rng(12);
  Graph g;
  ValueId h = g.add_input("h", info(DType::kInt8, {1, 16}));
  const Tensor w = random_tensor(info(DType::kInt8, {16, 16}), rng);
  TensorInfo requantized = w.info();
  requantized.qparams = QuantParams{{0.5}, {0}, -1, -127, 127};
  for (int step = 0; step < 4; ++step) {
    Tensor bytes(step == 3 ? requantized : w.info());
    std::memcpy(bytes.raw(), w.raw(), w.nbytes());
    const ValueId ws = g.add_constant("w" + std::to_string(step), bytes);
    h = g.call("cortex_m.quantized_linear.default", {h, ws, kNoValue},
               {{"input_offset", int64_t{1}},
                {"output_offset", int64_t{2}},
                {"requantize_multipliers", std::vector<int64_t>{1 << 30}},
                {"requantize_shifts", std::vector<int64_t>{-7}}})[0];
  }
  g.set_outputs({h});
  Loaded loaded(program::write_program(g, program::sequential_layout(g, Isa::kScalar), {}));
  ASSERT_TRUE(loaded.status.ok());
  const fb::Program& p = loaded.program.fb();
  int constant_tensors = 0;
  for (const fb::Tensor* t : *p.tensors()) constant_tensors += t->location() == fb::Location_Constant;
  EXPECT_EQ(constant_tensors, 2);  // w0 (steps 0-2) and w3 (other qparams)
  EXPECT_EQ(p.constants()->size(), 1u);
  EXPECT_EQ(loaded.program.constant_size(), w.nbytes());
  const std::vector<Tensor> inputs = {random_tensor(g.value(g.inputs()[0]).info, rng)};
  const std::vector<Tensor> want = run_graph(g, inputs), got = run_program(loaded.program, inputs);
  EXPECT_EQ(std::memcmp(got[0].raw(), want[0].raw(), got[0].nbytes()), 0);
}

// The float fallback of the binary ops: broadcasting, alpha, and same-shape channels-last.
TEST(Program, FloatBinaryRunsBitExactWithTheInterpreter) {
  testing::RandomData rng(13);
  Graph g;
  const ValueId a = g.add_input("a", info(DType::kFloat32, {2, 3, 4, 5}));
  const ValueId b = g.add_input("b", info(DType::kFloat32, {3, 1, 5}));
  const ValueId one = g.add_constant("one", random_tensor(info(DType::kFloat32, {}), rng));
  const ValueId rsub = g.call("aten.sub.Tensor", {one, a}, {})[0];
  const ValueId sub = g.call("aten.sub.Tensor", {rsub, b}, {{"alpha", 2.5}})[0];
  const ValueId add = g.call("aten.add.Tensor", {sub, b}, {{"alpha", -0.5}})[0];
  const ValueId mul = g.call("aten.mul.Tensor", {add, a}, {})[0];
  const ValueId div = g.call("aten.div.Tensor", {mul, b}, {})[0];
  const ValueId mx = g.call("aten.maximum.default", {div, a}, {})[0];
  const ValueId mn = g.call("aten.minimum.default", {mx, sub}, {})[0];
  const std::vector<int64_t> cl{0, 2, 3, 1};
  const ValueId acl = g.call("dim_order_ops._clone_dim_order.default", {a}, {{"dim_order", cl}})[0];
  const ValueId mcl = g.call("dim_order_ops._clone_dim_order.default", {mn}, {{"dim_order", cl}})[0];
  const ValueId both_cl = g.call("aten.sub.Tensor", {mcl, acl}, {})[0];
  g.set_outputs({g.call("dim_order_ops._clone_dim_order.default", {both_cl}, {})[0]});
  Loaded loaded(program::write_program(g, program::sequential_layout(g, Isa::kScalar), {}));
  ASSERT_TRUE(loaded.status.ok()) << program::status_message(loaded.status, loaded.buffer.data, loaded.buffer.size, "p");
  EXPECT_EQ(loaded.program.float_ops(), 8);
  for (int trial = 0; trial < 3; ++trial) {
    const std::vector<Tensor> inputs = {random_tensor(g.value(a).info, rng), random_tensor(g.value(b).info, rng)};
    const std::vector<Tensor> want = run_graph(g, inputs), got = run_program(loaded.program, inputs);
    ASSERT_EQ(got[0].nbytes(), want[0].nbytes());
    EXPECT_EQ(std::memcmp(got[0].raw(), want[0].raw(), got[0].nbytes()), 0);
  }
}

runtime::TensorView int8_view(std::vector<int64_t> shape, const uint8_t* order) {
  runtime::TensorView v;
  v.dtype = runtime::DType::kInt8;
  v.rank = static_cast<int32_t>(shape.size());
  for (int32_t d = 0; d < v.rank; ++d) v.shape[d] = shape[static_cast<size_t>(d)];
  runtime::strides_for(v.shape, v.rank, order, v.strides);
  return v;
}

TEST(TensorView, SameBytesWhenOnlySizeOneDimsDiffer) {
  const uint8_t nhwc[4] = {0, 2, 3, 1}, ncw_cl[3] = {0, 2, 1}, nchw[4] = {0, 1, 2, 3};
  // Contiguous reshapes, and channels-last with H = 1 dropped: same bytes.
  EXPECT_TRUE(same_bytes(int8_view({2, 6}, nullptr), int8_view({3, 4}, nullptr)));
  EXPECT_TRUE(same_bytes(int8_view({2, 5, 1, 3}, nhwc), int8_view({2, 5, 3}, ncw_cl)));
  EXPECT_TRUE(same_bytes(int8_view({1, 7, 1, 1}, nhwc), int8_view({1, 7}, nullptr)));
  EXPECT_TRUE(same_bytes(int8_view({1, 30, 1, 1}, nhwc), int8_view({2, 15}, nullptr)));
  // Channels-last against contiguous, a merge of non-adjacent dims, other numels: copies.
  EXPECT_FALSE(same_bytes(int8_view({2, 5, 1, 3}, nhwc), int8_view({2, 5, 1, 3}, nchw)));
  EXPECT_FALSE(same_bytes(int8_view({2, 5, 1, 3}, nhwc), int8_view({2, 15}, nullptr)));
  EXPECT_FALSE(same_bytes(int8_view({2, 5, 1, 3}, nhwc), int8_view({2, 5, 2}, ncw_cl)));
}

TEST(TensorView, CopyLogicalMatchesPlainLoopsAcrossDimOrders) {
  testing::RandomData rng(9);
  const int64_t shape[4] = {2, 3, 4, 5};
  const uint8_t orders[3][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {3, 1, 0, 2}};
  for (const auto& from : orders)
    for (const auto& to : orders) {
      std::vector<int16_t> src(120), dst(120, 0);
      for (auto& v : src) v = static_cast<int16_t>(rng.uniform(-30000, 30000));
      runtime::TensorView a, b;
      a.dtype = b.dtype = runtime::DType::kInt16;
      a.rank = b.rank = 4;
      for (int d = 0; d < 4; ++d) a.shape[d] = b.shape[d] = shape[d];
      runtime::strides_for(a.shape, 4, from, a.strides);
      runtime::strides_for(b.shape, 4, to, b.strides);
      a.data = reinterpret_cast<uint8_t*>(src.data());
      b.data = reinterpret_cast<uint8_t*>(dst.data());
      runtime::copy_logical(a, b);
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t c = 0; c < 3; ++c)
          for (int64_t h = 0; h < 4; ++h)
            for (int64_t w = 0; w < 5; ++w) {
              const int64_t sa = n * a.strides[0] + c * a.strides[1] + h * a.strides[2] + w * a.strides[3];
              const int64_t sb = n * b.strides[0] + c * b.strides[1] + h * b.strides[2] + w * b.strides[3];
              ASSERT_EQ(dst[static_cast<size_t>(sb)], src[static_cast<size_t>(sa)]);
            }
    }
}

TEST(TensorView, LayoutPredicatesIgnoreUnitDims) {
  runtime::TensorView v;
  v.rank = 4;
  const int64_t shape[4] = {1, 8, 1, 1};
  for (int d = 0; d < 4; ++d) v.shape[d] = shape[d];
  runtime::strides_for(v.shape, 4, nullptr, v.strides);
  EXPECT_TRUE(v.is_contiguous());
  EXPECT_TRUE(v.is_channels_last());  // [1, C, 1, 1]: the same bytes either way
  v.shape[2] = 3;
  runtime::strides_for(v.shape, 4, nullptr, v.strides);
  EXPECT_FALSE(v.is_channels_last());
}

}  // namespace
}  // namespace cortexm
