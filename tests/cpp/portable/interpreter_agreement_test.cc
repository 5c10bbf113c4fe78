// The shared-code guarantee: the graph interpreter's aten ops and the portable kernels called
// directly (as the runtime calls them) give the same bytes.
#include <cstring>

#include "cortexm/portable/binary.h"
#include "cortexm/portable/constant_pad.h"
#include "cortexm/portable/convolution.h"
#include "cortexm/portable/matmul.h"
#include "cortexm/portable/mean.h"
#include "cortexm/portable/permute.h"
#include "cortexm/portable/pool2d.h"
#include "cortexm/portable/softmax.h"
#include "cortexm/portable/unary.h"
#include "cortexm/portable/upsample_nearest2d.h"
#include "graph/errors.h"
#include "graph/graph.h"
#include "graph/interpreter.h"
#include "portable/test_util.h"

namespace cortexm::portable {
namespace {

using testing::Dims;

Tensor random_tensor(testing::Random& rng, DType dtype, const Dims& shape) {
  TensorInfo info;
  info.dtype = dtype;
  info.shape = shape;
  Tensor t(info);
  if (dtype == DType::kFloat32) {
    const std::vector<float> v = rng.floats(t.numel());
    std::memcpy(t.raw(), v.data(), t.nbytes());
  } else {
    const std::vector<uint8_t> v = rng.bytes(t.nbytes());
    std::memcpy(t.raw(), v.data(), t.nbytes());
  }
  return t;
}

// Runs one op on the given tensors (graph inputs) through the interpreter.
Tensor interpret(const std::string& op, const std::vector<Tensor>& inputs, Attrs attrs) {
  Graph g;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i)
    ids.push_back(g.add_input("x" + std::to_string(i), inputs[i].info()));
  g.set_outputs(g.call(op, ids, std::move(attrs)));
  return run_graph(g, inputs)[0];
}

void expect_same_bytes(const Tensor& got, const std::vector<uint8_t>& want) {
  ASSERT_EQ(got.nbytes(), want.size());
  EXPECT_EQ(0, std::memcmp(got.raw(), want.data(), want.size()));
}

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST(InterpreterAgreement, Softmax) {
  testing::Random rng(1);
  const Tensor x = random_tensor(rng, DType::kFloat32, {2, 7, 3});
  const Tensor y = interpret("aten._softmax.default", {x}, {{"dim", int64_t{1}}});
  SoftmaxParams p;
  p.input = testing::to_shape({2, 7, 3});
  p.dim = 1;
  ASSERT_TRUE(softmax_prepare(p).ok());
  std::vector<float> out(42);
  softmax_f32(p, x.data<float>(), out.data());
  expect_same_bytes(y, bytes_of(out));
}

TEST(InterpreterAgreement, GeluTanhAndAddWithAlpha) {
  testing::Random rng(2);
  const Tensor x = random_tensor(rng, DType::kFloat32, {3, 1, 5});
  const Tensor b = random_tensor(rng, DType::kFloat32, {4, 1});
  const Tensor g = interpret("aten.gelu.default", {x}, {{"approximate", std::string("tanh")}});
  std::vector<float> out(15);
  gelu_tanh_f32(x.data<float>(), out.data(), 15);
  expect_same_bytes(g, bytes_of(out));
  const Tensor s = interpret("aten.add.Tensor", {x, b}, {{"alpha", 0.3}});
  BinaryParams p;
  p.op = BinaryOp::kAdd;
  p.alpha = 0.3f;
  Shape out_shape;
  ASSERT_TRUE(binary_prepare(testing::to_shape({3, 1, 5}), testing::to_shape({4, 1}), &p, &out_shape).ok());
  std::vector<float> sum(out_shape.numel());
  binary_f32(p, x.data<float>(), b.data<float>(), sum.data());
  expect_same_bytes(s, bytes_of(sum));
}

TEST(InterpreterAgreement, MeanAndPools) {
  testing::Random rng(3);
  const Tensor x = random_tensor(rng, DType::kFloat32, {2, 3, 9, 8});
  const Tensor m = interpret("aten.mean.dim", {x}, {{"dim", std::vector<int64_t>{-1, -2}}, {"keepdim", true}});
  MeanParams mp;
  mp.input = testing::to_shape({2, 3, 9, 8});
  mp.num_dims = 2;
  mp.dims[0] = -1, mp.dims[1] = -2;
  mp.keepdim = true;
  ASSERT_TRUE(mean_prepare(mp).ok());
  std::vector<float> mean(6);
  mean_f32(mp, x.data<float>(), mean.data());
  expect_same_bytes(m, bytes_of(mean));

  const Tensor a = interpret("aten.avg_pool2d.default", {x},
                             {{"kernel_size", std::vector<int64_t>{3, 2}},
                              {"stride", std::vector<int64_t>{2, 2}},
                              {"padding", std::vector<int64_t>{1, 1}},
                              {"ceil_mode", true},
                              {"count_include_pad", false}});
  AvgPool2dParams ap;
  ap.pool.input = mp.input;
  ap.pool.kernel_h = 3, ap.pool.kernel_w = 2, ap.pool.stride_h = 2, ap.pool.stride_w = 2;
  ap.pool.pad_h = 1, ap.pool.pad_w = 1, ap.pool.ceil_mode = true;
  ap.count_include_pad = false;
  Shape out_shape;
  ASSERT_TRUE(avg_pool2d_prepare(ap, &out_shape).ok());
  std::vector<float> avg(out_shape.numel());
  avg_pool2d_f32(ap, x.data<float>(), avg.data());
  expect_same_bytes(a, bytes_of(avg));

  const Tensor mx = interpret("aten.max_pool2d.default", {x},
                              {{"kernel_size", std::vector<int64_t>{3}},
                               {"stride", std::vector<int64_t>{2}},
                               {"padding", std::vector<int64_t>{1}},
                               {"dilation", std::vector<int64_t>{2}}});
  Pool2dParams pp = ap.pool;
  pp.kernel_w = 3, pp.pad_w = 1, pp.dilation_h = pp.dilation_w = 2, pp.ceil_mode = false;
  ASSERT_TRUE(max_pool2d_prepare(pp, &out_shape).ok());
  std::vector<float> maxes(out_shape.numel());
  max_pool2d_f32(pp, x.data<float>(), maxes.data());
  expect_same_bytes(mx, bytes_of(maxes));
}

TEST(InterpreterAgreement, LinearAndConvolution) {
  testing::Random rng(4);
  const Tensor x = random_tensor(rng, DType::kFloat32, {2, 5, 19});
  const Tensor w = random_tensor(rng, DType::kFloat32, {7, 19});
  const Tensor b = random_tensor(rng, DType::kFloat32, {7});
  const Tensor l = interpret("aten.linear.default", {x, w, b}, {});
  LinearParams lp;
  lp.m = 10, lp.k = 19, lp.n = 7;
  std::vector<float> lin(70);
  linear_f32(lp, x.data<float>(), w.data<float>(), b.data<float>(), lin.data());
  expect_same_bytes(l, bytes_of(lin));

  const Tensor img = random_tensor(rng, DType::kFloat32, {1, 4, 9, 7});
  const Tensor k = random_tensor(rng, DType::kFloat32, {6, 2, 3, 3});
  const Tensor bias6 = random_tensor(rng, DType::kFloat32, {6});
  const Tensor c6 = interpret("aten.convolution.default", {img, k, bias6},
                              {{"stride", std::vector<int64_t>{2, 1}},
                               {"padding", std::vector<int64_t>{1, 2}},
                               {"dilation", std::vector<int64_t>{1, 2}},
                               {"groups", int64_t{2}}});
  ConvolutionParams cp;
  cp.input = testing::to_shape({1, 4, 9, 7});
  cp.weight = testing::to_shape({6, 2, 3, 3});
  cp.stride[0] = 2, cp.padding[0] = 1, cp.padding[1] = 2, cp.dilation[1] = 2, cp.groups = 2;
  Shape out_shape;
  ASSERT_TRUE(convolution_prepare(cp, &out_shape).ok());
  std::vector<float> conv(out_shape.numel());
  convolution_f32(cp, img.data<float>(), k.data<float>(), bias6.data<float>(), conv.data());
  expect_same_bytes(c6, bytes_of(conv));
}

TEST(InterpreterAgreement, Int8DataMovement) {
  testing::Random rng(5);
  const Tensor x = random_tensor(rng, DType::kInt8, {2, 3, 4, 5});
  const Tensor t = interpret("aten.permute_copy.default", {x}, {{"dims", std::vector<int64_t>{0, 2, 3, 1}}});
  PermuteParams pp;
  pp.input = testing::to_shape({2, 3, 4, 5});
  const int32_t perm[] = {0, 2, 3, 1};
  for (int i = 0; i < 4; ++i) pp.perm[i] = perm[i];
  std::vector<uint8_t> moved(120);
  permute(pp, x.raw(), moved.data());
  expect_same_bytes(t, moved);

  const Tensor padded = interpret("aten.constant_pad_nd.default", {x},
                                  {{"pad", std::vector<int64_t>{1, -2, 0, 3}}, {"value", -7.0}});
  ConstantPadParams cp;
  cp.input = pp.input;
  cp.pad_length = 4;
  cp.pad[0] = 1, cp.pad[1] = -2, cp.pad[2] = 0, cp.pad[3] = 3;
  const int8_t fill = -7;
  cp.value = &fill;
  Shape out_shape;
  ASSERT_TRUE(constant_pad_prepare(cp, &out_shape).ok());
  std::vector<uint8_t> pad_out(out_shape.numel());
  constant_pad(cp, x.raw(), pad_out.data());
  expect_same_bytes(padded, pad_out);

  const Tensor up = interpret("aten.upsample_nearest2d.default", {x}, {{"output_size", std::vector<int64_t>{7, 11}}});
  UpsampleNearest2dParams up_params;
  up_params.input = pp.input;
  up_params.out_h = 7, up_params.out_w = 11;
  std::vector<uint8_t> up_out(2 * 3 * 7 * 11);
  upsample_nearest2d(up_params, x.raw(), up_out.data());
  expect_same_bytes(up, up_out);
}

TEST(InterpreterAgreement, RankAboveSixIsABuildError) {
  Graph g;
  TensorInfo info;
  info.shape = {1, 2, 1, 2, 1, 2, 3};
  const ValueId x = g.add_input("x", info);
  try {
    g.call("aten.relu.default", {x}, {}, kNoNode, "deep");
    FAIL() << "rank 7 accepted";
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("deep"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("at most 6 dims"), std::string::npos) << e.what();
  }
  info.shape = {1, 2, 1, 2, 1, 2};
  const ValueId y = g.add_input("y", info);
  EXPECT_NO_THROW(g.call("aten.relu.default", {y}, {}));
}

}  // namespace
}  // namespace cortexm::portable
