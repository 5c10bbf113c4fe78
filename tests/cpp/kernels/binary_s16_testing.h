// Shared by the int16 add / mul gtests: numpy broadcasting of shapes and indices, int16 test data
// biased to the extremes.
#pragma once

#include <cstdint>
#include <vector>

#include "random_data.h"

namespace cortexm::testing {

inline size_t element_count(const std::vector<int64_t>& s) {
  size_t n = 1;
  for (auto d : s) n *= size_t(d);
  return n;
}

inline std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a,
                                            const std::vector<int64_t>& b) {
  const size_t r = a.size() > b.size() ? a.size() : b.size();
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t x = i + a.size() >= r ? a[i + a.size() - r] : 1;
    const int64_t y = i + b.size() >= r ? b[i + b.size() - r] : 1;
    out[i] = x > y ? x : y;
  }
  return out;
}

// Flat index into an operand of shape `in` for flat output index e.
inline size_t source_index(size_t e, const std::vector<int64_t>& out,
                           const std::vector<int64_t>& in) {
  std::vector<size_t> coord(out.size());
  for (size_t d = out.size(); d-- > 0;) {
    coord[d] = e % size_t(out[d]);
    e /= size_t(out[d]);
  }
  size_t index = 0;
  const size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    index = index * size_t(in[d]) + (in[d] == 1 ? 0 : coord[lead + d]);
  return index;
}

// Uniform int16 values, a fifth of them -32768 or 32767.
inline std::vector<int16_t> int16s_with_extremes(RandomData& rng, size_t n) {
  std::vector<int16_t> v(n);
  for (auto& x : v)
    x = int16_t(rng.uniform(0, 4) == 0 ? (rng.uniform(0, 1) ? 32767 : -32768)
                                       : rng.uniform(-32768, 32767));
  return v;
}

}  // namespace cortexm::testing
