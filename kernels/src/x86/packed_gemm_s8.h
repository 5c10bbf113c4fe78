// The int8 matrix product of x86/gemm_s8.h on weights packed once, at program load, for products
// vectorized along the output channels (the fbgemm / oneDNN scheme), no horizontal sums:
//  - AVX512-VNNI: VPDPBUSD multiplies unsigned activations u = a + 128 by the int8 weights, 16
//    columns per register, 4 taps per lane. sum_k (a + offset) * w = sum_k u * w +
//    (offset - 128) * sum_k w exactly modulo 2^32 (VPDPBUSD wraps, as the scalar kernels' int32
//    sums do), so the packing folds bias + (offset - 128) * sum_k w into one int32 per column.
//  - AVX2: VPMADDWD multiplies pairs of taps widened to int16 by the weights packed as int16
//    (exact, no saturation), 8 columns per register; the packing folds bias + offset * sum_k w.
// A packing starts with a header naming the variant it was packed for; packed_group gives its
// groups only to a run of that same variant (a run of another reads the weights as stored), so a
// kernel never reads one variant's layout with another's code (AVX2's blocks are larger than
// VNNI's). Built only for x86-64 hosts (CORTEXM_HOST_X86).
#pragma once

#include <cstddef>
#include <cstdint>

#include "x86/gemm_s8.h"

namespace cortexm::x86 {

// The variant a packing for params' host_variant `requested` is laid out for: host_variant() for
// kHostVariantInUse, else `requested` itself, uncapped (a run takes the packing only on that variant).
HostVariant packing_variant(HostVariant requested);

// Bytes of `groups` products of `cols` rows of `depth` weights each, packed for `variant` (0 for
// the scalar one); a multiple of 64. Packing is plain C++: any variant's layout can be made on any
// CPU.
size_t packed_weights_size(int32_t groups, int32_t depth, int32_t cols, HostVariant variant);

// Packs them for `variant` (weights group after group, `cols` rows of `depth` each, contiguous;
// bias: groups * cols entries or null; offset: the one the activations take) to `packed`, 64-byte
// aligned, packed_weights_size bytes (nothing for the scalar variant).
void pack_weights(const int8_t* w, int32_t groups, int32_t depth, int32_t cols, const int32_t* bias, int32_t offset,
                  HostVariant variant, void* packed);

// Group `group`'s packed weights when they were packed for `variant` (the run's, resolved), else null.
const void* packed_group(const void* packed, int32_t group, int32_t depth, int32_t cols, HostVariant variant);

// g on the weights packed_group gave for `variant` (the same variant): g.w, g.offset and g.bias are
// not read (the packing holds them).
void packed_gemm_s8(const GemmS8& g, const void* group, HostVariant variant);
void packed_gemm_s8_avx2(const GemmS8& g, const void* group);
void packed_gemm_s8_avx512vnni(const GemmS8& g, const void* group);

}  // namespace cortexm::x86
