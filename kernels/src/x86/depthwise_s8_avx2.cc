// AVX2 depthwise conv of the host's x86 variants (AVX512-VNNI CPUs run it too), depth multiplier 1:
// 8 channels at a time, each valid tap widened to int32 (VPMOVSXBD), offset, multiplied (VPMULLD)
// and added; the 8 sums get the bias and are requantized together (x86/requantize8.h). The
// channels past the last multiple of 8 run scalar. Sums wrap modulo 2^32 like the scalar kernel's.
// Built with -mavx2.
#include "x86/depthwise_s8.h"

#include <cstring>

#include "conv_window.h"
#include "cortexm/kernels/requantize.h"
#include "x86/requantize8.h"

namespace cortexm::x86 {

namespace {

inline __m256i widen8(const int8_t* p) {
  int64_t bytes;
  std::memcpy(&bytes, p, sizeof(bytes));
  return _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(bytes));
}

// pixel(image, out, tap) for every output pixel: `image` is its batch's input, `out` its output
// channels, tap(visit) calls visit(input offset of the tap's pixel, filter offset of the tap)
// for each tap inside the input.
template <typename Pixel>
void for_each_pixel(const DepthwiseConv2dParams& p, const int8_t* input, int8_t* output, Pixel pixel) {
  const ConvGeometry& geo = p.geometry;
  const int32_t in_h = p.input.h, in_w = p.input.w, channels = p.input.c;
  const int32_t kernel_h = p.filter.h, kernel_w = p.filter.w;
  for (int32_t n = 0; n < p.output.n; ++n) {
    const int8_t* image = input + int64_t{n} * in_h * in_w * channels;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      const int64_t y0 = int64_t{oy} * geo.stride_h - geo.padding.top;
      const TapRange rows = valid_taps(y0, in_h, kernel_h, geo.dilation_h);
      int8_t* out = output + (int64_t{n} * p.output.h + oy) * p.output.w * channels;
      for (int32_t ox = 0; ox < p.output.w; ++ox, out += channels) {
        const int64_t x0 = int64_t{ox} * geo.stride_w - geo.padding.left;
        const TapRange cols = valid_taps(x0, in_w, kernel_w, geo.dilation_w);
        pixel(image, out, [&](auto visit) {
          for (int32_t kh = rows.first; kh < rows.last; ++kh) {
            const int64_t iy = y0 + int64_t{kh} * geo.dilation_h;
            for (int32_t kw = cols.first; kw < cols.last; ++kw)
              visit((iy * in_w + x0 + int64_t{kw} * geo.dilation_w) * channels, (int64_t{kh} * kernel_w + kw) * channels);
          }
        });
      }
    }
  }
}

}  // namespace

void depthwise_s8_avx2(const DepthwiseConv2dParams& p, const int8_t* input, const int8_t* filter,
                       const int32_t* bias, int8_t* output) {
  const ConvQuantParams& q = p.quant;
  const int32_t channels = p.input.c;
  const int32_t vector_channels = channels / 8 * 8;
  const __m256i offset = _mm256_set1_epi32(q.input_offset);
  for (int32_t c = 0; c < vector_channels; c += 8) {
    const Requantize8 requantize(q.multipliers + c, q.shifts + c, q.output_offset, q.activation_min,
                                 q.activation_max);
    const __m256i b = bias ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bias + c)) : _mm256_setzero_si256();
    for_each_pixel(p, input, output, [&](const int8_t* image, int8_t* out, auto taps) {
      __m256i acc = b;
      taps([&](int64_t at, int64_t w) {
        const __m256i x = _mm256_add_epi32(widen8(image + at + c), offset);
        acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(x, widen8(filter + w + c)));
      });
      const int64_t bytes = bytes_of(requantize(acc));
      std::memcpy(out + c, &bytes, 8);
    });
  }
  if (vector_channels == channels) return;
  for_each_pixel(p, input, output, [&](const int8_t* image, int8_t* out, auto taps) {
    for (int32_t c = vector_channels; c < channels; ++c) {  // the last channels, one at a time
      uint32_t sum = bias ? static_cast<uint32_t>(bias[c]) : 0u;
      taps([&](int64_t at, int64_t w) { sum += static_cast<uint32_t>((image[at + c] + q.input_offset) * filter[w + c]); });
      const int32_t scaled = wrapping_add(requantize(static_cast<int32_t>(sum), q.multipliers[c], q.shifts[c]),
                                          q.output_offset);
      out[c] = static_cast<int8_t>(clamp(scaled, q.activation_min, q.activation_max));
    }
  });
}

}  // namespace cortexm::x86
