#include "cortexm/portable/slice.h"

#include "cortexm/portable/select.h"
#include "cortexm/portable/split_with_sizes.h"
#include "portable/test_util.h"

namespace cortexm::portable {
namespace {

using testing::Dims;

// Python's slice rule: the kept indices along a dim of `size`.
std::vector<int64_t> kept_indices(int64_t size, int64_t start, int64_t end, int64_t step) {
  auto clampi = [&](int64_t v) {
    if (v < 0) v += size;
    return v < 0 ? 0 : (v > size ? size : v);
  };
  const int64_t s = clampi(start), e = clampi(end);
  std::vector<int64_t> kept;
  for (int64_t j = 0; j < size; ++j)
    if (j >= s && j < e && (j - s) % step == 0) kept.push_back(j);
  return kept;
}

// Copies input elements whose coordinate along dim is in `kept` (in order) to the output.
std::vector<uint8_t> reference_take(const std::vector<uint8_t>& in, const Dims& shape, int dim,
                                    const std::vector<int64_t>& kept, int32_t es) {
  Dims os = shape;
  os[dim] = static_cast<int64_t>(kept.size());
  std::vector<uint8_t> out(testing::numel(os) * es);
  for (int64_t o = 0; o < testing::numel(os); ++o) {
    Dims c = testing::unravel(o, os);
    c[dim] = kept[c[dim]];
    std::memcpy(&out[o * es], &in[testing::ravel(c, shape) * es], es);
  }
  return out;
}

TEST(Slice, RandomBoundsAndSteps) {
  testing::Random rng(5);
  for (int iter = 0; iter < 600; ++iter) {
    const int rank = static_cast<int>(rng.uniform(1, 6));
    const Dims shape = rng.dims(rank, 1, 7);
    const int dim = static_cast<int>(rng.uniform(0, rank - 1));
    const int64_t size = shape[dim];
    SliceParams p;
    p.input = testing::to_shape(shape);
    p.dim = rng.coin() ? dim : dim - rank;
    p.start = rng.uniform(-size - 3, size + 3);
    p.end = rng.coin(0.2) ? kSliceEnd : rng.uniform(-size - 3, size + 3);
    p.step = rng.coin(0.5) ? 1 : rng.uniform(1, 4);
    p.element_size = testing::kElementSizes[rng.uniform(0, 3)];
    Shape out_shape;
    ASSERT_TRUE(slice_prepare(p, &out_shape).ok());
    const std::vector<int64_t> kept = kept_indices(size, p.start, p.end, p.step);
    ASSERT_EQ(out_shape.dims[dim], static_cast<int64_t>(kept.size()))
        << "size " << size << " start " << p.start << " end " << p.end << " step " << p.step;
    const std::vector<uint8_t> in = rng.bytes(testing::numel(shape) * p.element_size);
    const std::vector<uint8_t> want = reference_take(in, shape, dim, kept, p.element_size);
    std::vector<uint8_t> out(want.size() + 1, 0xEE);
    slice(p, in.data(), out.data());
    EXPECT_EQ(out.back(), 0xEE);
    out.pop_back();
    EXPECT_EQ(out, want);
  }
}

TEST(Slice, RejectsBadArguments) {
  SliceParams p;
  p.input = testing::to_shape({4, 5});
  p.step = 0;
  EXPECT_STREQ(slice_prepare(p).argument, "step");
  p.step = 1;
  p.dim = 2;
  EXPECT_STREQ(slice_prepare(p).argument, "dim");
  p.dim = 0;
  p.input = testing::to_shape({});
  EXPECT_STREQ(slice_prepare(p).argument, "self.rank");
}

TEST(Select, EveryIndexOfEveryDim) {
  testing::Random rng(9);
  for (int iter = 0; iter < 150; ++iter) {
    const int rank = static_cast<int>(rng.uniform(1, 6));
    const Dims shape = rng.dims(rank, 1, 5);
    const int32_t es = testing::kElementSizes[rng.uniform(0, 3)];
    const std::vector<uint8_t> in = rng.bytes(testing::numel(shape) * es);
    for (int dim = 0; dim < rank; ++dim) {
      for (int64_t index = -shape[dim]; index < shape[dim]; ++index) {
        SelectParams p;
        p.input = testing::to_shape(shape);
        p.dim = dim - (index % 2 ? rank : 0);
        p.index = index;
        p.element_size = es;
        Shape out_shape;
        ASSERT_TRUE(select_prepare(p, &out_shape).ok());
        ASSERT_EQ(out_shape.rank, rank - 1);
        const int64_t at = index < 0 ? index + shape[dim] : index;
        const std::vector<uint8_t> want = reference_take(in, shape, dim, {at}, es);
        std::vector<uint8_t> out(want.size());
        select(p, in.data(), out.data());
        EXPECT_EQ(out, want);
      }
    }
  }
  SelectParams p;
  p.input = testing::to_shape({3, 2});
  p.index = 3;
  EXPECT_STREQ(select_prepare(p).argument, "index");
  p.index = -4;
  EXPECT_STREQ(select_prepare(p).argument, "index");
}

TEST(SplitWithSizes, PiecesReassembleTheInput) {
  testing::Random rng(13);
  for (int iter = 0; iter < 200; ++iter) {
    const int rank = static_cast<int>(rng.uniform(1, 5));
    const Dims shape = rng.dims(rank, 1, 8);
    const int dim = static_cast<int>(rng.uniform(0, rank - 1));
    std::vector<int64_t> sizes;
    for (int64_t left = shape[dim]; left > 0 || sizes.empty();) {
      const int64_t s = rng.coin(0.15) ? 0 : rng.uniform(0, left);
      sizes.push_back(s);
      left -= s;
      if (left > 0 && sizes.size() > 5) sizes.push_back(left), left = 0;
    }
    SplitWithSizesParams p;
    p.input = testing::to_shape(shape);
    p.dim = dim;
    p.split_sizes = sizes.data();
    p.num_outputs = static_cast<int32_t>(sizes.size());
    p.element_size = testing::kElementSizes[rng.uniform(0, 3)];
    ASSERT_TRUE(split_with_sizes_prepare(p).ok()) << testing::str(sizes);
    const std::vector<uint8_t> in = rng.bytes(testing::numel(shape) * p.element_size);
    std::vector<std::vector<uint8_t>> outs;
    std::vector<void*> ptrs;
    int64_t start = 0;
    std::vector<std::vector<uint8_t>> wants;
    for (int64_t s : sizes) {
      std::vector<int64_t> kept;
      for (int64_t j = 0; j < s; ++j) kept.push_back(start + j);
      start += s;
      wants.push_back(reference_take(in, shape, dim, kept, p.element_size));
      outs.emplace_back(wants.back().size());
    }
    for (auto& o : outs) ptrs.push_back(o.data());
    split_with_sizes(p, in.data(), ptrs.data());
    EXPECT_EQ(outs, wants);
  }
  SplitWithSizesParams p;
  p.input = testing::to_shape({5});
  const int64_t bad[] = {2, 2};
  p.split_sizes = bad;
  p.num_outputs = 2;
  EXPECT_STREQ(split_with_sizes_prepare(p).argument, "split_sizes");
  const int64_t negative[] = {6, -1};
  p.split_sizes = negative;
  EXPECT_EQ(split_with_sizes_prepare(p).index, 0);
}

}  // namespace
}  // namespace cortexm::portable
