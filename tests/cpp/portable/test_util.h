// Helpers for the portable kernel tests: N-d index arithmetic for plain-loop references, random
// shapes and byte buffers, and bitwise float comparison (NaN equals NaN).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cortexm/portable/shape.h"
#include "gtest/gtest.h"

namespace cortexm::portable::testing {

using Dims = std::vector<int64_t>;

inline int64_t numel(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

inline Shape to_shape(const Dims& d) {
  Shape s;
  EXPECT_TRUE(make_shape(d.data(), static_cast<int64_t>(d.size()), &s).ok());
  return s;
}

inline Dims to_dims(const Shape& s) { return Dims(s.dims, s.dims + s.rank); }

// Coordinates of flat index i in a contiguous tensor of shape d.
inline Dims unravel(int64_t i, const Dims& d) {
  Dims c(d.size());
  for (size_t k = d.size(); k-- > 0;) {
    c[k] = i % d[k];
    i /= d[k];
  }
  return c;
}

inline int64_t ravel(const Dims& c, const Dims& d) {
  int64_t i = 0;
  for (size_t k = 0; k < d.size(); ++k) i = i * d[k] + c[k];
  return i;
}

inline std::string str(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

class Random {
 public:
  explicit Random(uint32_t seed) : rng_(seed) {}
  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool coin(double p = 0.5) { return std::bernoulli_distribution(p)(rng_); }
  std::vector<uint8_t> bytes(size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = static_cast<uint8_t>(uniform(0, 255));
    return v;
  }
  // Normal floats with a few specials (NaN, infinities, signed zero) when specials is set.
  std::vector<float> floats(size_t n, float scale = 3.0f, bool specials = false) {
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = normal(rng_);
    if (specials) {
      const float special[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 3.0f, -3.0f, 6.0f};
      for (auto& x : v)
        if (coin(0.05)) x = special[uniform(0, 7)];
    }
    return v;
  }
  // A shape of the given rank with dims in [lo, hi], size-1 dims likely.
  Dims dims(int rank, int64_t lo = 1, int64_t hi = 5) {
    Dims d(rank);
    for (auto& x : d) x = coin(0.25) ? 1 : uniform(lo, hi);
    return d;
  }
  std::mt19937& engine() { return rng_; }

 private:
  std::mt19937 rng_;
};

inline bool same_float(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

// Element-wise bitwise equality, reporting the first mismatch.
inline ::testing::AssertionResult floats_equal(const std::vector<float>& got,
                                               const std::vector<float>& want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (!same_float(got[i], want[i]))
      return ::testing::AssertionFailure()
             << "at " << i << ": got " << got[i] << ", want " << want[i];
  return ::testing::AssertionSuccess();
}

constexpr int32_t kElementSizes[] = {1, 2, 4, 8};

}  // namespace cortexm::portable::testing
