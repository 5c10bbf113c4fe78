// The int8 matrix product of x86/gemm_s8.h on weights packed once, at program load, for products
// vectorized along the output channels (the fbgemm / oneDNN scheme): AVX512-VNNI's VPDPBUSD
// multiplies unsigned activations u = a + 128 by signed weights, 16 columns per register, no
// horizontal sums. sum_k (a + offset) * w = sum_k u * w + (offset - 128) * sum_k w exactly modulo
// 2^32 (VPDPBUSD wraps, as the scalar kernels' int32 sums do), so the packing folds
// bias + (offset - 128) * sum_k w into one int32 per column. Built only for x86-64 hosts
// (CORTEXM_HOST_X86).
#pragma once

#include <cstddef>
#include <cstdint>

#include "x86/gemm_s8.h"

namespace cortexm::x86 {

// One product's packed weights, 64-byte aligned: `cols` rounded up to 16 int32 column terms, then
// the weights as [cols / 16][depth / 4][16][4] bytes (rounded up, zero padded).
size_t packed_gemm_s8_size(int32_t depth, int32_t cols);

// Packs `cols` rows of `depth` int8 weights (contiguous) with their bias (cols entries, or null) and
// the offset their activations take.
void pack_gemm_s8(const int8_t* w, int32_t depth, int32_t cols, const int32_t* bias, int32_t offset,
                  void* packed);

// g on its packed weights: g.w, g.offset and g.bias are not read (the packing holds them).
void packed_gemm_s8_avx512vnni(const GemmS8& g, const void* packed);

}  // namespace cortexm::x86
