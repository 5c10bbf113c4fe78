// The int8 matrix product of x86/gemm_s8.h on weights packed once, at program load, for products
// vectorized along the output channels (the fbgemm / oneDNN scheme), no horizontal sums:
//  - AVX512-VNNI: VPDPBUSD multiplies unsigned activations u = a + 128 by the int8 weights, 16
//    columns per register, 4 taps per lane. sum_k (a + offset) * w = sum_k u * w +
//    (offset - 128) * sum_k w exactly modulo 2^32 (VPDPBUSD wraps, as the scalar kernels' int32
//    sums do), so the packing folds bias + (offset - 128) * sum_k w into one int32 per column.
//  - AVX2: VPMADDWD multiplies pairs of taps widened to int16 by the weights packed as int16
//    (exact, no saturation), 8 columns per register; the packing folds bias + offset * sum_k w.
// The packing of a conv's groups starts with a header naming the variant it was packed for; a run
// on another variant reads the weights as stored. Built only for x86-64 hosts (CORTEXM_HOST_X86).
#pragma once

#include <cstddef>
#include <cstdint>

#include "x86/gemm_s8.h"

namespace cortexm::x86 {

// Bytes of `groups` products of `cols` rows of `depth` weights each, packed for the host variant in
// use (0 for the scalar one); a multiple of 64.
size_t packed_weights_size(int32_t groups, int32_t depth, int32_t cols);

// Packs them (weights group after group, `cols` rows of `depth` each, contiguous; bias: groups *
// cols entries or null; offset: the one the activations take) to `packed`, 64-byte aligned.
void pack_weights(const int8_t* w, int32_t groups, int32_t depth, int32_t cols, const int32_t* bias, int32_t offset,
                  void* packed);

// Group `group`'s packed weights when they were packed for the variant in use, else null.
const void* packed_group(const void* packed, int32_t group, int32_t depth, int32_t cols);

// g on packed_group's weights: g.w, g.offset and g.bias are not read (the packing holds them).
void packed_gemm_s8(const GemmS8& g, const void* group);
void packed_gemm_s8_avx2(const GemmS8& g, const void* group);
void packed_gemm_s8_avx512vnni(const GemmS8& g, const void* group);

}  // namespace cortexm::x86
