#include "cortexm/portable/binary.h"

#include <cmath>
#include <functional>

#include "portable/test_util.h"

namespace cortexm::portable {
namespace {

using testing::Dims;

float reference_op(BinaryOp op, float alpha, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd: return alpha == 1.0f ? a + b : a + alpha * b;
    case BinaryOp::kSub: return alpha == 1.0f ? a - b : a - alpha * b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    // Ties (0 and -0) give b, as the interpreter always did.
    case BinaryOp::kMinimum: return std::isnan(a) || std::isnan(b) ? NAN : (a < b ? a : b);
    case BinaryOp::kMaximum: return std::isnan(a) || std::isnan(b) ? NAN : (a > b ? a : b);
  }
  return 0.0f;
}

// Index into an operand of shape `d` (right-aligned against the output) for output coordinate c.
int64_t operand_index(const Dims& c, const Dims& d) {
  const size_t skip = c.size() - d.size();
  Dims cc(d.size());
  for (size_t i = 0; i < d.size(); ++i) cc[i] = d[i] == 1 ? 0 : c[i + skip];
  return testing::ravel(cc, d);
}

// Random pair of broadcast-compatible shapes: each dim is shared, 1 on one side, or missing.
std::pair<Dims, Dims> broadcast_pair(testing::Random& rng) {
  const int rank = static_cast<int>(rng.uniform(0, 6));
  Dims a(rank), b(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t n = rng.coin(0.05) ? 0 : rng.uniform(1, 5);
    switch (rng.uniform(0, 3)) {
      case 0: a[i] = b[i] = n; break;
      case 1: a[i] = 1, b[i] = n; break;
      case 2: a[i] = n, b[i] = 1; break;
      default: a[i] = b[i] = 1; break;
    }
  }
  const int64_t drop_a = rng.uniform(0, rank), drop_b = rng.coin() ? 0 : rng.uniform(0, rank);
  a.erase(a.begin(), a.begin() + drop_a);  // a missing leading dims broadcasts too
  b.erase(b.begin(), b.begin() + std::min<int64_t>(drop_b, rank));
  return {a, b};
}

TEST(Binary, BroadcastingOfEveryKind) {
  testing::Random rng(29);
  const BinaryOp ops[] = {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul,
                          BinaryOp::kDiv, BinaryOp::kMinimum, BinaryOp::kMaximum};
  for (int iter = 0; iter < 400; ++iter) {
    const std::pair<Dims, Dims> dims = broadcast_pair(rng);  // not a structured binding: lambdas capture
    const Dims& da = dims.first;                                // it only from C++20 (clang refuses)
    const Dims& db = dims.second;
    const Dims out_dims = [&] {
      const size_t rank = std::max(da.size(), db.size());
      Dims o(rank);
      for (size_t i = 0; i < rank; ++i) {
        const int64_t x = i + da.size() >= rank ? da[i + da.size() - rank] : 1;
        const int64_t y = i + db.size() >= rank ? db[i + db.size() - rank] : 1;
        o[i] = x == 1 ? y : x;
      }
      return o;
    }();
    const std::vector<float> a = rng.floats(testing::numel(da), 3.0f, true);
    const std::vector<float> b = rng.floats(testing::numel(db), 3.0f, true);
    for (BinaryOp op : ops) {
      BinaryParams p;
      p.op = op;
      p.alpha = (op == BinaryOp::kAdd || op == BinaryOp::kSub) && rng.coin() ? 0.37f : 1.0f;
      Shape out_shape;
      ASSERT_TRUE(binary_prepare(testing::to_shape(da), testing::to_shape(db), &p, &out_shape).ok())
          << testing::str(da) << " " << testing::str(db);
      ASSERT_EQ(testing::to_dims(out_shape), out_dims);
      const int64_t n = testing::numel(out_dims);
      std::vector<float> out(n + 1, 12345.0f), want(n);
      binary_f32(p, a.data(), b.data(), out.data());
      EXPECT_EQ(out.back(), 12345.0f);
      out.pop_back();
      for (int64_t o = 0; o < n; ++o) {
        const Dims c = testing::unravel(o, out_dims);
        want[o] = reference_op(op, p.alpha, a[operand_index(c, da)], b[operand_index(c, db)]);
      }
      EXPECT_TRUE(testing::floats_equal(out, want))
          << testing::str(da) << " op " << static_cast<int>(op) << " " << testing::str(db);
    }
  }
}

TEST(Binary, NaNPropagatesThroughMinimumAndMaximum) {
  const float a[2] = {NAN, 1.0f}, b[2] = {2.0f, NAN};
  for (BinaryOp op : {BinaryOp::kMinimum, BinaryOp::kMaximum}) {
    BinaryParams p;
    p.op = op;
    ASSERT_TRUE(binary_prepare(testing::to_shape({2}), testing::to_shape({2}), &p).ok());
    float out[2];
    binary_f32(p, a, b, out);
    EXPECT_TRUE(std::isnan(out[0]) && std::isnan(out[1]));
  }
}

TEST(Binary, RejectsIncompatibleShapes) {
  BinaryParams p;
  const Error e = binary_prepare(testing::to_shape({2, 3}), testing::to_shape({4, 1, 2}), &p);
  EXPECT_STREQ(e.argument, "other.shape");
  EXPECT_EQ(e.index, 2);
  EXPECT_EQ(e.value, 2);
  p.op = static_cast<BinaryOp>(6);
  EXPECT_STREQ(binary_prepare(testing::to_shape({2}), testing::to_shape({2}), &p).argument, "op");
}

}  // namespace
}  // namespace cortexm::portable
