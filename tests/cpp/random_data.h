// Seeded random data for kernel tests: int8 tensors, int32 biases, plausible multipliers.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace cortexm::testing {

class RandomData {
 public:
  explicit RandomData(uint32_t seed) : rng_(seed) {}

  int32_t uniform(int32_t lo, int32_t hi) {
    return std::uniform_int_distribution<int32_t>(lo, hi)(rng_);
  }

  std::vector<int8_t> int8s(size_t n, int32_t lo = -128, int32_t hi = 127) {
    std::vector<int8_t> v(n);
    for (auto& x : v) x = static_cast<int8_t>(uniform(lo, hi));
    return v;
  }

  std::vector<int32_t> int32s(size_t n, int32_t lo, int32_t hi) {
    std::vector<int32_t> v(n);
    for (auto& x : v) x = uniform(lo, hi);
    return v;
  }

  // A multiplier in [2^30, 2^31) as quantize_multiplier produces for nonzero scales.
  int32_t multiplier() { return uniform(1 << 30, INT32_MAX); }

  std::mt19937& engine() { return rng_; }

 private:
  std::mt19937 rng_;
};

}  // namespace cortexm::testing
