#include "cortexm/portable/constant_pad.h"

#include <cmath>

#include "cortexm/portable/reflection_pad1d.h"
#include "portable/test_util.h"

namespace cortexm::portable {
namespace {

using testing::Dims;

TEST(ConstantPad, RandomPadsAndCropsEveryElementSize) {
  testing::Random rng(21);
  int checked = 0;
  for (int iter = 0; iter < 600; ++iter) {
    const int rank = static_cast<int>(rng.uniform(0, 6));
    const Dims shape = rng.dims(rank, 1, 5);
    ConstantPadParams p;
    p.input = testing::to_shape(shape);
    p.pad_length = 2 * static_cast<int32_t>(rng.uniform(0, rank));
    for (int i = 0; i < p.pad_length; ++i) p.pad[i] = rng.uniform(-3, 3);
    p.element_size = testing::kElementSizes[rng.uniform(0, 3)];
    const std::vector<uint8_t> value = rng.bytes(p.element_size);
    p.value = value.data();
    // Expected validity: crops alone must fit each dim.
    Dims before(rank, 0), out_dims = shape;
    bool valid = true;
    for (int i = 0; i < p.pad_length / 2; ++i) {
      const int d = rank - 1 - i;
      before[d] = p.pad[2 * i];
      out_dims[d] += p.pad[2 * i] + p.pad[2 * i + 1];
      if (shape[d] + std::min<int64_t>(p.pad[2 * i], 0) + std::min<int64_t>(p.pad[2 * i + 1], 0) < 0)
        valid = false;
    }
    Shape out_shape;
    const Error e = constant_pad_prepare(p, &out_shape);
    ASSERT_EQ(e.ok(), valid) << testing::str(shape);
    if (!valid) {
      EXPECT_STREQ(e.argument, "pad");
      continue;
    }
    ASSERT_EQ(testing::to_dims(out_shape), out_dims);
    ++checked;
    const int32_t es = p.element_size;
    const std::vector<uint8_t> in = rng.bytes(testing::numel(shape) * es);
    std::vector<uint8_t> out(testing::numel(out_dims) * es + 1, 0x5A);
    constant_pad(p, in.data(), out.data());
    EXPECT_EQ(out.back(), 0x5A);
    for (int64_t o = 0; o < testing::numel(out_dims); ++o) {
      Dims c = testing::unravel(o, out_dims);
      bool inside = true;
      for (int d = 0; d < rank; ++d) {
        c[d] -= before[d];
        inside = inside && c[d] >= 0 && c[d] < shape[d];
      }
      const uint8_t* want = inside ? &in[testing::ravel(c, shape) * es] : value.data();
      ASSERT_EQ(0, std::memcmp(&out[o * es], want, es)) << testing::str(shape) << " at " << o;
    }
  }
  EXPECT_GT(checked, 300);
}

TEST(ConstantPad, RejectsBadPadLists) {
  float zero = 0.0f;
  ConstantPadParams p;
  p.input = testing::to_shape({2, 3});
  p.value = &zero;
  p.element_size = 4;
  p.pad_length = 3;
  EXPECT_STREQ(constant_pad_prepare(p).argument, "pad.length");
  p.pad_length = 6;
  EXPECT_STREQ(constant_pad_prepare(p).argument, "pad.length");
  p.pad_length = 2;
  p.value = nullptr;
  EXPECT_STREQ(constant_pad_prepare(p).argument, "value");
}

// torch's reflection: output column j reads input column |j - left| mirrored at the far edge.
int64_t reflect_reference(int64_t j, int64_t width, int64_t left) {
  int64_t x = j - left;  // position relative to the input start
  if (x < 0) x = -x;
  if (x >= width) x = 2 * (width - 1) - x;
  return x;
}

TEST(ReflectionPad1d, RandomPadsAndCrops) {
  testing::Random rng(4);
  int checked = 0;
  for (int iter = 0; iter < 500; ++iter) {
    const int rank = static_cast<int>(rng.uniform(1, 4));
    const Dims shape = rng.dims(rank, 1, 9);
    const int64_t width = shape.back();
    ReflectionPad1dParams p;
    p.input = testing::to_shape(shape);
    p.left = rng.uniform(-width, width);
    p.right = rng.uniform(-width, width);
    p.element_size = testing::kElementSizes[rng.uniform(0, 3)];
    const int64_t out_width = width + p.left + p.right;
    bool valid = p.left < width && p.right < width && out_width >= 1;
    for (int64_t j = 0; valid && j < out_width; ++j) {
      const int64_t x = reflect_reference(j, width, p.left);
      valid = x >= 0 && x < width;
    }
    Shape out_shape;
    const Error e = reflection_pad1d_prepare(p, &out_shape);
    ASSERT_EQ(e.ok(), valid) << width << " " << p.left << " " << p.right;
    if (!valid) continue;
    ++checked;
    const int32_t es = p.element_size;
    const int64_t rows = testing::numel(shape) / width;
    const std::vector<uint8_t> in = rng.bytes(testing::numel(shape) * es);
    std::vector<uint8_t> out(rows * out_width * es);
    reflection_pad1d(p, in.data(), out.data());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < out_width; ++j)
        ASSERT_EQ(0, std::memcmp(&out[(r * out_width + j) * es],
                                 &in[(r * width + reflect_reference(j, width, p.left)) * es], es));
  }
  EXPECT_GT(checked, 200);
}

// The shared index math (reflection_pad1d.h) that the interpreter's op, the runtime's strided path
// and this kernel use: torch's column for every output column, and the bounds check of every
// column from the ends of its pieces, for pads and crops in and beyond (-width, width).
TEST(ReflectionPad1d, SharedIndexMath) {
  static_assert(reflection_source_index(0, 4, 2) == 2, "usable in constant expressions");
  for (int64_t width = 1; width <= 7; ++width)
    for (int64_t left = -2 * width; left <= 2 * width; ++left)
      for (int64_t right = -2 * width; right <= 2 * width; ++right) {
        const int64_t out_width = width + left + right;
        if (out_width < 1) continue;
        bool inside = true;
        for (int64_t j = 0; j < out_width; ++j) {
          const int64_t x = reflection_source_index(j, width, left);
          if (left < width) EXPECT_EQ(x, reflect_reference(j, width, left)) << width << " " << left << " " << j;
          inside = inside && x >= 0 && x < width;
        }
        EXPECT_EQ(reflection_stays_inside(width, left, right), inside) << width << " " << left << " " << right;
      }
}

}  // namespace
}  // namespace cortexm::portable
