// pack_gemm_s8 (x86/packed_gemm_s8.h): plain C++, built with the baseline flags.
#include "x86/packed_gemm_s8.h"

#include <cstring>

namespace cortexm::x86 {

namespace {

constexpr int32_t kColumnBlock = 16;  // int32 lanes of a ZMM register
constexpr int32_t kQuad = 4;          // taps per VPDPBUSD lane

int32_t blocks_of(int32_t cols) { return (cols + kColumnBlock - 1) / kColumnBlock; }
int32_t quads_of(int32_t depth) { return (depth + kQuad - 1) / kQuad; }

}  // namespace

size_t packed_gemm_s8_size(int32_t depth, int32_t cols) {
  const size_t blocks = static_cast<size_t>(blocks_of(cols));
  return blocks * kColumnBlock * sizeof(int32_t) + blocks * static_cast<size_t>(quads_of(depth)) * kColumnBlock * kQuad;
}

void pack_gemm_s8(const int8_t* w, int32_t depth, int32_t cols, const int32_t* bias, int32_t offset, void* packed) {
  const int32_t blocks = blocks_of(cols), quads = quads_of(depth);
  auto* terms = static_cast<int32_t*>(packed);
  int8_t* weights = static_cast<int8_t*>(packed) + int64_t{blocks} * kColumnBlock * sizeof(int32_t);
  std::memset(packed, 0, packed_gemm_s8_size(depth, cols));
  for (int32_t n = 0; n < cols; ++n) {
    const int8_t* row = w + int64_t{n} * depth;
    uint32_t weight_sum = 0;
    for (int32_t k = 0; k < depth; ++k) weight_sum += static_cast<uint32_t>(row[k]);
    const uint32_t b = bias ? static_cast<uint32_t>(bias[n]) : 0u;
    terms[n] = static_cast<int32_t>(b + static_cast<uint32_t>(offset - 128) * weight_sum);
    int8_t* block = weights + int64_t{n / kColumnBlock} * quads * kColumnBlock * kQuad;
    for (int32_t k = 0; k < depth; ++k)
      block[(int64_t{k / kQuad} * kColumnBlock + n % kColumnBlock) * kQuad + k % kQuad] = row[k];
  }
}

}  // namespace cortexm::x86
