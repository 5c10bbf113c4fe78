// The int8 matrix product behind the host's pointwise conv and linear kernels on x86-64: each
// output is requantize(bias + sum_k (a + offset) * w) + output_offset, clamped, computed as the
// scalar kernels compute it (int32 sums wrap modulo 2^32, CMSIS-NN's requantize), so every
// variant gives their bytes. Built only for x86-64 hosts (CORTEXM_HOST_X86).
#pragma once

#include <cstdint>

#include "cortexm/kernels/host_variant.h"

namespace cortexm::x86 {

struct GemmS8 {
  const int8_t* a;        // rows of `depth` int8 values, a_stride apart
  int64_t a_stride;
  int32_t rows;
  const int8_t* w;        // `cols` rows of `depth` int8 weights, contiguous
  int32_t depth;
  int32_t cols;
  int32_t offset;         // added to every value of a (0 with a folded bias)
  const int32_t* bias;    // cols entries, or null
  const int32_t* multipliers;  // cols entries (per_channel) or one
  const int32_t* shifts;
  bool per_channel;
  int32_t output_offset, activation_min, activation_max;
  int8_t* out;            // out[m * out_stride + n]
  int64_t out_stride;
};

void gemm_s8_avx2(const GemmS8& g);
void gemm_s8_avx512vnni(const GemmS8& g);

// Runs g on `variant` (a resolved one: resolve_host_variant); false (nothing written) for the scalar one.
bool gemm_s8(const GemmS8& g, HostVariant variant);

// The requantized, clamped output of one sum (shared by the variants' output stages).
int8_t output_of(const GemmS8& g, int32_t n, uint32_t sum);

// offset * (sum of weight row n), modulo 2^32: what the offset adds to every sum of column n.
uint32_t offset_term(const GemmS8& g, int32_t n);

}  // namespace cortexm::x86
