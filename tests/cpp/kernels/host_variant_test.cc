// The host's x86 variants against weights packed for each variant: a kernel told to run one variant
// uses a packing only when it was made for that variant (packings are plain C++, so any variant's
// layout can be made on any CPU), never reads past it (AVX2's layout is larger than VNNI's: the
// AVX2 product on a VNNI packing read past the buffer) and gives the reference's bytes in every
// combination. Run under the host-asan preset, ASan catches any read past a packing.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "cortexm/kernels/host_variant.h"
#include "cortexm/kernels/quantized_conv2d.h"
#include "cortexm/kernels/quantized_linear.h"
#include "random_data.h"

namespace cortexm {
namespace {

constexpr HostVariant kAllVariants[] = {HostVariant::kScalar, HostVariant::kAvx2, HostVariant::kAvx512Vnni};

// A packing of exactly `bytes`, 64-byte aligned, so that ASan sees any read past its end.
struct Packing {
  explicit Packing(size_t bytes)
      : data(bytes ? static_cast<uint8_t*>(::operator new(bytes, std::align_val_t(64))) : nullptr) {}
  ~Packing() {
    if (data) ::operator delete(data, std::align_val_t(64));
  }
  Packing(const Packing&) = delete;
  Packing& operator=(const Packing&) = delete;
  uint8_t* data;
};

// The variants this CPU runs.
std::vector<HostVariant> runnable() {
  std::vector<HostVariant> out;
  for (HostVariant v : kAllVariants)
    if (static_cast<uint8_t>(v) <= static_cast<uint8_t>(best_host_variant())) out.push_back(v);
  return out;
}

struct ConvCase {
  int32_t n, h, w, in_c, out_c, kh, kw, stride, pad, groups;
};

TEST(HostVariantTest, ConvRunsOnlyThePackingOfItsOwnVariant) {
  const ConvCase cases[] = {
      {2, 5, 7, 64, 16, 1, 1, 1, 0, 1},   // pointwise over every image
      {1, 6, 6, 32, 40, 1, 1, 2, 0, 2},   // strided pointwise, 2 groups
      {1, 7, 5, 24, 17, 3, 3, 1, 1, 1},   // im2col columns, padded
  };
  testing::RandomData rng(7);
  for (const ConvCase& c : cases) {
    Conv2dParams p;
    p.input = {c.n, c.h, c.w, c.in_c};
    p.filter = {c.out_c, c.kh, c.kw, c.in_c / c.groups};
    p.geometry.stride_h = p.geometry.stride_w = c.stride;
    p.geometry.padding = {c.pad, c.pad, c.pad, c.pad};
    std::vector<int32_t> multipliers(c.out_c), shifts(c.out_c);
    for (int32_t oc = 0; oc < c.out_c; ++oc) {
      multipliers[oc] = rng.multiplier();
      shifts[oc] = rng.uniform(-12, -6);
    }
    p.quant.input_offset = 17;
    p.quant.output_offset = -3;
    p.quant.multipliers = multipliers.data();
    p.quant.shifts = shifts.data();
    p.output = quantized_conv2d_output_dims(p);
    ASSERT_TRUE(quantized_conv2d_prepare(p).ok());
    const auto input = rng.int8s(static_cast<size_t>(p.input.elements()));
    const auto filter = rng.int8s(static_cast<size_t>(p.filter.elements()));
    const auto bias = rng.int32s(static_cast<size_t>(c.out_c), -40000, 40000);
    const size_t outputs = static_cast<size_t>(p.output.elements());
    std::vector<int8_t> want(outputs);
    quantized_conv2d_reference(p, input.data(), filter.data(), bias.data(), want.data());
    std::vector<int8_t> scratch(quantized_conv2d_scratch_size(p, Isa::kScalar) + 1);
    for (HostVariant packed_for : kAllVariants) {
      Conv2dParams pack = p;
      pack.host_variant = packed_for;
      // Packed as that variant lays its weights out, whichever CPU this is.
      const size_t bytes = quantized_conv2d_host_packed_size(pack);
      Packing packing(bytes);
      if (bytes) quantized_conv2d_host_pack(pack, filter.data(), bias.data(), packing.data);
      for (HostVariant run : runnable()) {
        Conv2dParams q = p;
        q.host_variant = run;
        q.host_packed = packing.data;
        std::vector<int8_t> got(outputs + 64, 0x5A);
        quantized_conv2d(q, input.data(), filter.data(), bias.data(), got.data(), scratch.data());
        for (size_t i = 0; i < outputs; ++i)
          ASSERT_EQ(got[i], want[i]) << "packed for " << host_variant_name(packed_for) << ", run on "
                                     << host_variant_name(run) << ", " << c.kh << "x" << c.kw << " conv, output " << i;
        for (size_t i = outputs; i < got.size(); ++i) ASSERT_EQ(got[i], 0x5A) << "wrote past the output";
      }
    }
  }
}

TEST(HostVariantTest, LinearRunsOnlyThePackingOfItsOwnVariant) {
  testing::RandomData rng(11);
  for (const int32_t k : {64, 37}) {
    LinearParams p;
    p.batches = 3;
    p.input_features = k;
    p.output_features = 16;
    p.input_offset = -5;
    p.output_offset = 4;
    std::vector<int32_t> multipliers(16), shifts(16);
    for (int32_t oc = 0; oc < 16; ++oc) {
      multipliers[oc] = rng.multiplier();
      shifts[oc] = rng.uniform(-12, -6);
    }
    p.multipliers = multipliers.data();
    p.shifts = shifts.data();
    p.num_multipliers = 16;
    ASSERT_TRUE(quantized_linear_prepare(p).ok());
    const auto input = rng.int8s(static_cast<size_t>(p.batches) * k);
    const auto weights = rng.int8s(static_cast<size_t>(k) * 16);
    const auto bias = rng.int32s(16, -40000, 40000);
    std::vector<int8_t> want(static_cast<size_t>(p.batches) * 16);
    quantized_linear_reference(p, input.data(), weights.data(), bias.data(), want.data());
    for (HostVariant packed_for : kAllVariants) {
      LinearParams pack = p;
      pack.host_variant = packed_for;
      const size_t bytes = quantized_linear_host_packed_size(pack);
      Packing packing(bytes);
      if (bytes) quantized_linear_host_pack(pack, weights.data(), bias.data(), packing.data);
      for (HostVariant run : runnable()) {
        LinearParams q = p;
        q.host_variant = run;
        q.host_packed = packing.data;
        std::vector<int8_t> got(want.size() + 64, 0x5A);
        quantized_linear(q, input.data(), weights.data(), bias.data(), got.data(), nullptr);
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_EQ(got[i], want[i]) << "packed for " << host_variant_name(packed_for) << ", run on "
                                     << host_variant_name(run) << ", K " << k << ", output " << i;
        for (size_t i = want.size(); i < got.size(); ++i) ASSERT_EQ(got[i], 0x5A) << "wrote past the output";
      }
    }
  }
}

// A variant the CPU lacks runs the richest one it has; kHostVariantInUse the one set.
TEST(HostVariantTest, ResolvesToAVariantTheCpuRuns) {
  EXPECT_EQ(resolve_host_variant(HostVariant::kScalar), HostVariant::kScalar);
  EXPECT_EQ(resolve_host_variant(HostVariant::kAvx512Vnni), best_host_variant());
  const HostVariant before = host_variant();
  ASSERT_TRUE(set_host_variant(HostVariant::kScalar));
  EXPECT_EQ(resolve_host_variant(kHostVariantInUse), HostVariant::kScalar);
  ASSERT_TRUE(set_host_variant(before));
  EXPECT_EQ(resolve_host_variant(kHostVariantInUse), before);
}

}  // namespace
}  // namespace cortexm
