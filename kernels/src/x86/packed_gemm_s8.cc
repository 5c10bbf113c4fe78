// The packing of x86/packed_gemm_s8.h and the choice of its variant: plain C++, built with the
// baseline flags.
#include "x86/packed_gemm_s8.h"

#include <cstring>

#include "cortexm/kernels/host_variant.h"

namespace cortexm::x86 {

namespace {

constexpr size_t kHeader = 64;  // the variant packed for, then padding to keep groups aligned

// A variant's layout: `lanes` int32 column terms per block, then per block the taps in steps of
// `taps` per lane ([cols / lanes][depth / taps][lanes][taps] elements of `element` bytes).
struct Layout {
  int32_t lanes, taps, element;

  int32_t blocks(int32_t cols) const { return (cols + lanes - 1) / lanes; }
  int32_t steps(int32_t depth) const { return (depth + taps - 1) / taps; }
  size_t group_bytes(int32_t depth, int32_t cols) const {
    const size_t b = static_cast<size_t>(blocks(cols)) * static_cast<size_t>(lanes);
    const size_t bytes = b * sizeof(int32_t) + b * static_cast<size_t>(steps(depth)) * taps * element;
    return (bytes + 63) / 64 * 64;
  }
};

constexpr Layout kVnni{16, 4, 1}, kAvx2{8, 2, 2};

Layout layout_of(HostVariant v) { return v == HostVariant::kAvx512Vnni ? kVnni : kAvx2; }

void pack_group(const Layout& l, const int8_t* w, int32_t depth, int32_t cols, const int32_t* bias,
                uint32_t term_offset, void* packed) {
  auto* terms = static_cast<int32_t*>(packed);
  uint8_t* weights = static_cast<uint8_t*>(packed) + int64_t{l.blocks(cols)} * l.lanes * sizeof(int32_t);
  const int64_t block_elements = int64_t{l.steps(depth)} * l.lanes * l.taps;
  for (int32_t n = 0; n < cols; ++n) {
    const int8_t* row = w + int64_t{n} * depth;
    uint32_t weight_sum = 0;
    for (int32_t k = 0; k < depth; ++k) {
      weight_sum += static_cast<uint32_t>(row[k]);
      const int64_t at = (n / l.lanes) * block_elements + (int64_t{k / l.taps} * l.lanes + n % l.lanes) * l.taps + k % l.taps;
      if (l.element == 1) {
        weights[at] = static_cast<uint8_t>(row[k]);
      } else {
        const int16_t wide = row[k];
        std::memcpy(weights + at * 2, &wide, 2);
      }
    }
    terms[n] = static_cast<int32_t>((bias ? static_cast<uint32_t>(bias[n]) : 0u) + term_offset * weight_sum);
  }
}

}  // namespace

HostVariant packing_variant(HostVariant requested) {
  return requested == kHostVariantInUse ? host_variant() : requested;
}

size_t packed_weights_size(int32_t groups, int32_t depth, int32_t cols, HostVariant v) {
  if (v != HostVariant::kAvx2 && v != HostVariant::kAvx512Vnni) return 0;
  return kHeader + static_cast<size_t>(groups) * layout_of(v).group_bytes(depth, cols);
}

void pack_weights(const int8_t* w, int32_t groups, int32_t depth, int32_t cols, const int32_t* bias, int32_t offset,
                  HostVariant v, void* packed) {
  const size_t bytes = packed_weights_size(groups, depth, cols, v);
  if (bytes == 0) return;
  const Layout l = layout_of(v);
  std::memset(packed, 0, bytes);
  *static_cast<uint8_t*>(packed) = static_cast<uint8_t>(v);
  // VPDPBUSD's activations are a + 128: the term takes offset - 128.
  const uint32_t term_offset = static_cast<uint32_t>(v == HostVariant::kAvx512Vnni ? offset - 128 : offset);
  for (int32_t group = 0; group < groups; ++group)
    pack_group(l, w + int64_t{group} * cols * depth, depth, cols, bias ? bias + int64_t{group} * cols : nullptr,
               term_offset, static_cast<uint8_t*>(packed) + kHeader + group * l.group_bytes(depth, cols));
}

const void* packed_group(const void* packed, int32_t group, int32_t depth, int32_t cols, HostVariant v) {
  if (!packed || v == HostVariant::kScalar || *static_cast<const uint8_t*>(packed) != static_cast<uint8_t>(v))
    return nullptr;
  return static_cast<const uint8_t*>(packed) + kHeader + group * layout_of(v).group_bytes(depth, cols);
}

void packed_gemm_s8(const GemmS8& g, const void* group, HostVariant v) {
  if (v == HostVariant::kAvx512Vnni) packed_gemm_s8_avx512vnni(g, group);
  else packed_gemm_s8_avx2(g, group);
}

}  // namespace cortexm::x86
