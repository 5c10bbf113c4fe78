#include "kernel_variants.h"

#include <cstring>
#include <initializer_list>

#include "cortexm/kernels/kernel_isa.h"
#include "cortexm/kernels/quantize_per_tensor.h"
#include "cortexm/kernels/quantized_activation_s16.h"
#include "cortexm/kernels/quantized_add.h"
#include "cortexm/kernels/quantized_add_s16.h"
#include "cortexm/kernels/quantized_avg_pool2d.h"
#include "cortexm/kernels/quantized_conv2d.h"
#include "cortexm/kernels/quantized_conv2d_s16.h"
#include "cortexm/kernels/quantized_conv2d_s16w16.h"
#include "cortexm/kernels/quantized_depthwise_conv2d.h"
#include "cortexm/kernels/quantized_linear.h"
#include "cortexm/kernels/quantized_linear_s16.h"
#include "cortexm/kernels/quantized_linear_s16w16.h"
#include "cortexm/kernels/quantized_mean.h"
#include "cortexm/kernels/quantized_mul.h"
#include "cortexm/kernels/quantized_mul_s16.h"

namespace cortexm::variant_tests {

namespace {

constexpr int32_t kMaxInput = 8192, kMaxFilter = 16384, kMaxOutput = 8192, kMaxChannels = 512;
constexpr int32_t kMaxScratch = 32768, kGuard = 64;
constexpr uint8_t kCanary = 0xA5;

int8_t g_lhs[kMaxInput], g_rhs[kMaxInput], g_filter[kMaxFilter];
int8_t g_out[kMaxOutput + kGuard], g_expected[kMaxOutput];
int8_t g_shared[kMaxInput + kMaxOutput + 16 + kGuard];  // an output written over its input (lag rounded to 16)
int32_t g_bias[kMaxChannels], g_folded_bias[kMaxChannels], g_multipliers[kMaxChannels], g_shifts[kMaxChannels];
alignas(16) uint8_t g_scratch[kMaxScratch + kGuard];
int16_t g_in16[kMaxInput], g_rhs16[kMaxInput], g_out16[kMaxOutput + kGuard], g_expected16[kMaxOutput];
alignas(8) int64_t g_bias64[kMaxChannels];
int16_t g_filter16[kMaxFilter];
// Weights packed as at program load (the host's x86 kernels only; a target build packs none).
constexpr size_t kMaxPacked = sizeof(void*) == 8 ? 131072 : 64;
alignas(64) uint8_t g_packed[kMaxPacked];

class Rng {
 public:
  explicit Rng(uint32_t seed) : state_(seed ? seed : 1u) {}
  uint32_t next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 17;
    state_ ^= state_ << 5;
    return state_;
  }
  int32_t uniform(int32_t lo, int32_t hi) {  // inclusive
    const uint64_t span = static_cast<uint64_t>(int64_t{hi} - lo) + 1u;
    return static_cast<int32_t>(lo + static_cast<int64_t>(next() % span));
  }
  bool chance(int32_t percent) { return uniform(0, 99) < percent; }

 private:
  uint32_t state_;
};

// Multipliers as quantize_multiplier makes them, plus the extremes.
int32_t multiplier(Rng& r) {
  switch (r.uniform(0, 9)) {
    case 0: return INT32_MAX;
    case 1: return 1 << 30;
    case 2: return r.uniform(0, 1 << 30);
    default: return r.uniform(1 << 30, INT32_MAX);
  }
}

// Mostly right shifts as real layers have, some extreme ones and left shifts (which may wrap).
int32_t shift(Rng& r) {
  switch (r.uniform(0, 9)) {
    case 0: return r.uniform(-31, -20);
    case 1: return r.uniform(1, 30);
    case 2: return r.uniform(-31, 30);
    default: return r.uniform(-12, 0);
  }
}

void fill(Rng& r, int8_t* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<int8_t>(r.uniform(-128, 127));
}

const int32_t* make_bias(Rng& r, int32_t n) {
  if (r.chance(15)) return nullptr;
  const bool wide = r.chance(20);  // sums that wrap modulo 2^32
  for (int32_t i = 0; i < n; ++i)
    g_bias[i] = wide ? static_cast<int32_t>(r.next()) : r.uniform(-20000, 20000);
  return g_bias;
}

void requantize_params(Rng& r, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    g_multipliers[i] = multiplier(r);
    g_shifts[i] = shift(r);
  }
}

void activation(Rng& r, int32_t* lo, int32_t* hi) {
  *lo = -128;
  *hi = 127;
  if (r.chance(40)) {
    const int32_t a = r.uniform(-128, 127), b = r.uniform(-128, 127);
    *lo = a < b ? a : b;
    *hi = a < b ? b : a;
  }
}

int32_t input_offset(Rng& r) { return r.chance(10) ? (r.chance(50) ? -127 : 128) : r.uniform(-127, 128); }
int32_t output_offset(Rng& r) { return r.chance(10) ? (r.chance(50) ? -128 : 127) : r.uniform(-128, 127); }

// Text output without stdio.
class Line {
 public:
  Line& operator<<(const char* s) {
    while (*s && n_ + 1 < sizeof(buf_)) buf_[n_++] = *s++;
    buf_[n_] = '\0';
    return *this;
  }
  Line& operator<<(int64_t v) {
    char digits[24];
    int k = 0;
    uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    do {
      digits[k++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u);
    if (v < 0) digits[k++] = '-';
    char text[24];
    for (int i = 0; i < k; ++i) text[i] = digits[k - 1 - i];
    text[k] = '\0';
    return *this << text;
  }
  Line& operator<<(int32_t v) { return *this << int64_t{v}; }
  const char* str() const { return buf_; }

 private:
  char buf_[512] = {};
  size_t n_ = 0;
};

struct Tally {
  const char* kernel;
  Print print;
  int32_t cases = 0, failures = 0;
};

// Fills the output and scratch buffers with the canary that check() looks for past their ends.
void prepare_buffers() {
  std::memset(g_scratch, kCanary, sizeof(g_scratch));
  std::memset(g_out, kCanary, sizeof(g_out));
}

// Compares g_out with g_expected and checks the guard bytes after the output and the scratch.
bool check(Tally& t, int32_t index, const Line& params, size_t scratch_bytes, int64_t outputs) {
  ++t.cases;
  const char* problem = nullptr;
  int64_t at = -1;
  for (int64_t i = 0; i < outputs; ++i)
    if (g_out[i] != g_expected[i]) {
      at = i;
      problem = "output differs";
      break;
    }
  for (int32_t i = 0; !problem && i < kGuard; ++i)
    if (static_cast<uint8_t>(g_out[outputs + i]) != kCanary) problem = "wrote past the output";
  for (int32_t i = 0; !problem && i < kGuard; ++i)
    if (g_scratch[scratch_bytes + i] != kCanary) problem = "wrote past its scratch";
  if (!problem) return true;
  ++t.failures;
  if (t.failures <= 5) {
    Line line;
    line << "FAIL " << t.kernel << " case " << index << ": " << problem;
    if (at >= 0) line << " at " << at << " (" << int32_t{g_out[at]} << " != " << int32_t{g_expected[at]} << ")";
    t.print(line.str());
    t.print(params.str());
  }
  return false;
}

void report(const Tally& t) {
  Line line;
  line << (t.failures ? "FAILED " : "ok     ") << t.kernel << ": " << t.cases << " cases, " << t.failures
       << " failures";
  t.print(line.str());
}

void geometry(Rng& r, ConvGeometry* g, bool pointwise) {
  g->stride_h = r.chance(60) ? 1 : r.uniform(2, 3);
  g->stride_w = r.chance(60) ? 1 : r.uniform(2, 3);
  g->dilation_h = pointwise || r.chance(75) ? 1 : 2;
  g->dilation_w = pointwise || r.chance(75) ? 1 : 2;
  if (pointwise) {
    g->padding = Padding2d{};
  } else {
    g->padding.top = r.uniform(0, 2);
    g->padding.left = r.uniform(0, 2);
    g->padding.bottom = r.uniform(0, 2);
    g->padding.right = r.uniform(0, 2);
  }
}

void describe(Line& line, const Dims4& in, const Dims4& filter, const ConvGeometry& g,
              const ConvQuantParams& q) {
  line << "  input " << in.n << "x" << in.h << "x" << in.w << "x" << in.c << " filter " << filter.n << "x"
       << filter.h << "x" << filter.w << "x" << filter.c << " stride " << g.stride_h << "," << g.stride_w
       << " dilation " << g.dilation_h << "," << g.dilation_w << " pad " << g.padding.top << ","
       << g.padding.left << "," << g.padding.bottom << "," << g.padding.right << " offsets "
       << q.input_offset << "," << q.output_offset << " act " << q.activation_min << ","
       << q.activation_max;
}

ConvQuantParams conv_quant(Rng& r, int32_t channels) {
  ConvQuantParams q;
  q.input_offset = input_offset(r);
  q.output_offset = output_offset(r);
  activation(r, &q.activation_min, &q.activation_max);
  requantize_params(r, channels);
  q.multipliers = g_multipliers;
  q.shifts = g_shifts;
  return q;
}

// Whether a case's weights (`bytes` packed) run again packed as at load: then p's host_packed points
// at g_packed (for the caller to fill) and the output buffers are reset.
template <typename Params>
bool packs(size_t bytes, Params* p) {
  if (bytes == 0 || bytes > kMaxPacked) return false;  // this build packs none, or too many
  p->host_packed = g_packed;
  prepare_buffers();
  return true;
}

// The kernels built with only the paths a call takes (quantized_*_on_paths), as the op table of a
// firmware whose program makes this call registers them.
void conv2d_on_own_paths(const Conv2dParams& p, const int8_t* input, const int8_t* filter, const int32_t* bias,
                         int8_t* output, void* scratch) {
  switch (quantized_conv2d_paths(p)) {
    case kConv2dFoldedBias | kConv2dShortRows:
      return quantized_conv2d_on_paths<kConv2dFoldedBias | kConv2dShortRows>(p, input, filter, bias, output, scratch);
    case kConv2dFoldedBias | kConv2dLongRows:
      return quantized_conv2d_on_paths<kConv2dFoldedBias | kConv2dLongRows>(p, input, filter, bias, output, scratch);
    case kConv2dUnfoldedBias | kConv2dShortRows:
      return quantized_conv2d_on_paths<kConv2dUnfoldedBias | kConv2dShortRows>(p, input, filter, bias, output, scratch);
    default:
      return quantized_conv2d_on_paths<kConv2dUnfoldedBias | kConv2dLongRows>(p, input, filter, bias, output, scratch);
  }
}

void depthwise_on_own_paths(const DepthwiseConv2dParams& p, const int8_t* input, const int8_t* filter,
                            const int32_t* bias, int8_t* output, void* scratch) {
  switch (quantized_depthwise_conv2d_paths(p)) {
    case kDepthwiseConv2dWindows2To3:
      return quantized_depthwise_conv2d_on_paths<kDepthwiseConv2dWindows2To3>(p, input, filter, bias, output, scratch);
    case kDepthwiseConv2dOtherWindows:
      return quantized_depthwise_conv2d_on_paths<kDepthwiseConv2dOtherWindows>(p, input, filter, bias, output, scratch);
    default:
      return quantized_depthwise_conv2d_on_paths<kDepthwiseConv2dMultiplier>(p, input, filter, bias, output, scratch);
  }
}

void avg_pool2d_on_own_paths(const Pool2dParams& p, const int8_t* input, int8_t* output, void* scratch) {
  if (quantized_avg_pool2d_paths(p) == kAvgPool2dNarrowSums)
    quantized_avg_pool2d_on_paths<kAvgPool2dNarrowSums>(p, input, output, scratch);
  else
    quantized_avg_pool2d_on_paths<kAvgPool2dWideSums>(p, input, output, scratch);
}

// Each case also runs with the kernel built with only its own paths and on its weights packed as
// at load, where this build packs them (a tally each).
Tally test_conv2d(Rng& r, int32_t cases, Print print, Tally* own_paths, Tally* packed) {
  Tally t{"quantized_conv2d", print};
  for (int32_t i = 0; i < cases;) {
    Conv2dParams p;
    const bool pointwise = r.chance(35);
    const int32_t groups = r.chance(80) ? 1 : r.uniform(2, 3);
    const bool wide = r.chance(25);  // channel counts of real layers
    const int32_t group_c = wide ? r.uniform(8, 48) : r.uniform(1, 20);
    // Sometimes more than 64 output channels: several passes of the packed product's columns.
    const int32_t out_per_group = r.chance(10) ? r.uniform(60, 140) : wide ? r.uniform(8, 40) : r.uniform(1, 9);
    p.input = Dims4{r.uniform(1, 2), r.uniform(1, 9), r.uniform(1, 9), groups * group_c};
    const int32_t sizes[] = {1, 2, 3, 3, 4, 5};
    p.filter = Dims4{groups * out_per_group, pointwise ? 1 : sizes[r.uniform(0, 5)],
                     pointwise ? 1 : sizes[r.uniform(0, 5)], group_c};
    geometry(r, &p.geometry, pointwise);
    p.output = quantized_conv2d_output_dims(p);
    if (p.output.h < 1 || p.output.w < 1) continue;
    if (p.input.elements() > kMaxInput || p.filter.elements() > kMaxFilter ||
        p.output.elements() > kMaxOutput || p.filter.n > kMaxChannels)
      continue;
    p.quant = conv_quant(r, p.filter.n);
    const size_t scratch = quantized_conv2d_scratch_size(p, kKernelIsa);
    if (scratch > kMaxScratch || !quantized_conv2d_prepare(p).ok()) continue;
    fill(r, g_lhs, p.input.elements());
    fill(r, g_filter, p.filter.elements());
    const int32_t* bias = make_bias(r, p.filter.n);
    quantized_conv2d_reference(p, g_lhs, g_filter, bias, g_expected);
    // Half the cases take the bias folded ahead of time (the reference stays unfolded).
    const bool folded = r.chance(50);
    if (folded) {
      quantized_conv2d_fold_bias(p, g_filter, bias, g_folded_bias);
      p.bias_includes_input_offset = true;
      bias = g_folded_bias;
    }
    prepare_buffers();
    quantized_conv2d(p, g_lhs, g_filter, bias, g_out, g_scratch);
    Line line;
    describe(line, p.input, p.filter, p.geometry, p.quant);
    if (folded) line << " folded bias";
    check(t, i, line, scratch, p.output.elements());
    prepare_buffers();
    conv2d_on_own_paths(p, g_lhs, g_filter, bias, g_out, g_scratch);
    check(*own_paths, i, line, scratch, p.output.elements());
    if (packs(quantized_conv2d_host_packed_size(p), &p)) {
      quantized_conv2d_host_pack(p, g_filter, bias, g_packed);
      quantized_conv2d(p, g_lhs, g_filter, bias, g_out, g_scratch);
      check(*packed, i, line << " packed", scratch, p.output.elements());
    }
    ++i;
  }
  return t;
}

// Runs kernel(input, output) in g_shared, g_lhs's in_bytes copied `lag` bytes above the output's
// start, then copies the output to g_out for check(); a write past the two flips the byte after it.
template <typename Kernel>
void run_in_place(int64_t lag, int64_t in_bytes, int64_t out_bytes, Kernel kernel) {
  const int64_t end = lag + in_bytes > out_bytes ? lag + in_bytes : out_bytes;
  std::memset(g_shared, kCanary, sizeof(g_shared));
  std::memcpy(g_shared + lag, g_lhs, static_cast<size_t>(in_bytes));
  prepare_buffers();
  kernel(g_shared + lag, g_shared);
  std::memcpy(g_out, g_shared, static_cast<size_t>(out_bytes));
  for (int32_t k = 0; k < kGuard; ++k)
    if (static_cast<uint8_t>(g_shared[end + k]) != kCanary) g_out[out_bytes] = static_cast<int8_t>(~kCanary);
}

// Pointwise convs (1x1, stride 1, one group) and, half the cases, windows (one group) in place: the
// output from the kernel's lag below the input (exact, rounded up to 16 as the planner places it,
// or further), over it. Fewer, as many
// or more output channels than input ones; more than 64 (several column passes of the host's
// products), rows of at most 16 taps (MVE's registers), batch 2; every other pair of cases with
// the kernel built with only its own paths, and on weights packed as at load where this build
// packs them.
Tally test_conv2d_in_place(Rng& r, int32_t cases, Print print) {
  Tally t{"quantized_conv2d in place", print};
  for (int32_t i = 0; i < cases;) {
    Conv2dParams p;
    const int32_t in_c = r.chance(30) ? r.uniform(1, 16) : r.uniform(8, 100);
    const int32_t shape = r.uniform(0, 9);
    const int32_t out_c = shape < 4   ? r.uniform(1, in_c)
                          : shape < 6 ? in_c
                          : shape < 8 ? r.uniform(in_c, in_c + 40)
                                      : r.uniform(60, 140);
    p.input = Dims4{r.uniform(1, 2), r.uniform(1, 12), r.uniform(1, 12), in_c};
    // Half the cases a window (1x1 to 3x3, padded, strided, dilated), gathered before its stores.
    const bool window = r.chance(50);
    p.filter = window ? Dims4{out_c, r.uniform(1, 3), r.uniform(1, 3), in_c} : Dims4{out_c, 1, 1, in_c};
    geometry(r, &p.geometry, !window);
    if (!window) p.geometry.stride_h = p.geometry.stride_w = 1;
    p.output = quantized_conv2d_output_dims(p);
    if (p.output.h < 1 || p.output.w < 1 || p.input.elements() > kMaxInput || p.filter.elements() > kMaxFilter ||
        p.output.elements() > kMaxOutput || quantized_conv2d_scratch_size(p, kKernelIsa) > kMaxScratch)
      continue;
    p.quant = conv_quant(r, p.filter.n);
    if (!quantized_conv2d_prepare(p).ok()) continue;
    const int64_t exact_lag = quantized_conv2d_in_place_lag(p);
    const int64_t lag = i % 3 == 0 ? exact_lag : i % 3 == 1 ? (exact_lag + 15) / 16 * 16 : exact_lag + r.uniform(1, 300);
    const int64_t in_bytes = p.input.elements(), out_bytes = p.output.elements();
    if (exact_lag < 0 || (lag + in_bytes > out_bytes ? lag + in_bytes : out_bytes) + kGuard >
                             static_cast<int64_t>(sizeof(g_shared)))
      continue;
    fill(r, g_lhs, in_bytes);
    fill(r, g_filter, p.filter.elements());
    const int32_t* bias = make_bias(r, p.filter.n);
    quantized_conv2d_reference(p, g_lhs, g_filter, bias, g_expected);
    if (r.chance(50)) {
      quantized_conv2d_fold_bias(p, g_filter, bias, g_folded_bias);
      p.bias_includes_input_offset = true;
      bias = g_folded_bias;
    }
    if (i % 4 >= 2 && packs(quantized_conv2d_host_packed_size(p), &p)) quantized_conv2d_host_pack(p, g_filter, bias, g_packed);
    run_in_place(lag, in_bytes, out_bytes, [&](const int8_t* input, int8_t* output) {
      if (i % 4 < 2)
        quantized_conv2d(p, input, g_filter, bias, output, g_scratch);
      else
        conv2d_on_own_paths(p, input, g_filter, bias, output, g_scratch);
    });
    Line line;
    describe(line, p.input, p.filter, p.geometry, p.quant);
    if (p.bias_includes_input_offset) line << " folded bias";
    if (p.host_packed) line << " packed";
    line << " in place, lag " << lag;
    check(t, i, line, quantized_conv2d_scratch_size(p, kKernelIsa), out_bytes);
    ++i;
  }
  return t;
}

// Each case also runs in place and with the kernel built with only its own paths (their own
// tallies): in place, the output from the kernel's lag below the input.
Tally test_depthwise(Rng& r, int32_t cases, Print print, Tally* in_place, Tally* own_paths) {
  Tally t{"quantized_depthwise_conv2d", print};
  for (int32_t i = 0; i < cases;) {
    DepthwiseConv2dParams p;
    // Multiplier 1 mostly; 2-3; 4-9 (groups of 4 outputs of one input); one input channel with
    // many outputs (DS-CNN's first layer lowered as depthwise); a 1-pixel-wide image under a
    // one-column filter up to 15 tall (str_ww's depthwise convs; channels mostly a multiple of 4).
    const int32_t shape = r.uniform(0, 11);
    const bool column = shape >= 10;
    p.depth_multiplier = shape < 6 || column ? 1 : shape == 6 ? r.uniform(2, 3) : shape < 9 ? r.uniform(4, 9) : r.uniform(8, 64);
    const int32_t in_c = column ? (r.chance(80) ? 4 * r.uniform(1, 12) : r.uniform(1, 21))
                         : shape == 9 ? 1 : r.chance(25) ? r.uniform(16, 100) : r.uniform(1, 21);
    p.input = Dims4{r.uniform(1, 2), column ? r.uniform(1, 24) : r.uniform(1, 10), column ? 1 : r.uniform(1, 10), in_c};
    const int32_t sizes[] = {3, 3, 3, 1, 2, 5};
    const bool square3 = !column && r.chance(50);
    p.filter = Dims4{1, column ? r.uniform(1, 15) : square3 ? 3 : sizes[r.uniform(0, 5)],
                     column ? 1 : square3 ? 3 : sizes[r.uniform(0, 5)], in_c * p.depth_multiplier};
    geometry(r, &p.geometry, false);
    if (column && r.chance(70)) p.geometry.padding.left = p.geometry.padding.right = 0;
    if (r.chance(30)) p.geometry.padding = Padding2d{};
    p.output = quantized_depthwise_conv2d_output_dims(p);
    if (p.output.h < 1 || p.output.w < 1) continue;
    if (p.input.elements() > kMaxInput || p.filter.elements() > kMaxFilter ||
        p.output.elements() > kMaxOutput || p.filter.c > kMaxChannels)
      continue;
    p.quant = conv_quant(r, p.filter.c);
    const size_t scratch = quantized_depthwise_conv2d_scratch_size(p, kKernelIsa);
    if (scratch > kMaxScratch || !quantized_depthwise_conv2d_prepare(p).ok()) continue;
    fill(r, g_lhs, p.input.elements());
    fill(r, g_filter, p.filter.elements());
    const int32_t* bias = make_bias(r, p.filter.c);
    quantized_depthwise_conv2d_reference(p, g_lhs, g_filter, bias, g_expected);
    prepare_buffers();
    quantized_depthwise_conv2d(p, g_lhs, g_filter, bias, g_out, g_scratch);
    Line line;
    describe(line, p.input, p.filter, p.geometry, p.quant);
    line << " multiplier " << p.depth_multiplier;
    check(t, i, line, scratch, p.output.elements());
    prepare_buffers();
    depthwise_on_own_paths(p, g_lhs, g_filter, bias, g_out, g_scratch);
    check(*own_paths, i, line, scratch, p.output.elements());
    // In place: the output from the kernel's lag below the input (every second case the lag
    // rounded up to 16 bytes, as the planner places it), over it; nothing written past the two.
    const int64_t exact_lag = quantized_depthwise_conv2d_in_place_lag(p);
    const int64_t lag = i % 2 ? (exact_lag + 15) / 16 * 16 : exact_lag;
    const int64_t out_bytes = p.output.elements();
    // Every other pair of cases in place with the kernel built with its own paths.
    run_in_place(lag, p.input.elements(), out_bytes, [&](const int8_t* input, int8_t* output) {
      if (i % 4 < 2)
        quantized_depthwise_conv2d(p, input, g_filter, bias, output, g_scratch);
      else
        depthwise_on_own_paths(p, input, g_filter, bias, output, g_scratch);
    });
    line << " in place, lag " << lag;
    check(*in_place, i, line, scratch, out_bytes);
    ++i;
  }
  return t;
}

// Each case also runs with the kernel built with only its own paths (its own tally).
Tally test_avg_pool2d(Rng& r, int32_t cases, Print print, Tally* own_paths) {
  Tally t{"quantized_avg_pool2d", print};
  for (int32_t i = 0; i < cases;) {
    Pool2dParams p;
    // Small windows mostly; some of more than 256 taps (int32 sums on MVE); DS-CNN's global pool.
    const int32_t shape = r.uniform(0, 9);
    const int32_t c = r.chance(30) ? r.uniform(16, 100) : r.uniform(1, 21);
    if (shape < 7) {
      p.input = Dims4{r.uniform(1, 2), r.uniform(1, 10), r.uniform(1, 10), c};
      p.kernel_h = r.uniform(1, 4);
      p.kernel_w = r.uniform(1, 4);
      p.stride_h = r.uniform(1, 3);
      p.stride_w = r.uniform(1, 3);
      p.padding.top = r.uniform(0, p.kernel_h - 1);
      p.padding.left = r.uniform(0, p.kernel_w - 1);
      p.padding.bottom = r.uniform(0, p.kernel_h - 1);
      p.padding.right = r.uniform(0, p.kernel_w - 1);
    } else if (shape < 9) {
      p.input = Dims4{1, r.uniform(16, 20), r.uniform(16, 20), r.uniform(1, 20)};
      p.kernel_h = r.uniform(15, p.input.h);
      p.kernel_w = r.uniform(15, p.input.w);
    } else {
      p.input = Dims4{1, 25, 5, 64};
      p.kernel_h = 25;
      p.kernel_w = 5;
    }
    p.output = pool2d_output_dims(p);
    if (p.input.elements() > kMaxInput || p.output.elements() > kMaxOutput) continue;
    if (r.chance(50)) activation(r, &p.activation_min, &p.activation_max);
    const size_t scratch = quantized_avg_pool2d_scratch_size(p, kKernelIsa);
    if (scratch > kMaxScratch || !quantized_avg_pool2d_prepare(p).ok()) continue;
    // Constant -128 or 127 inputs reach the extreme sums (-128 * 256 = -2^15 in int16 lanes).
    if (r.chance(20))
      std::memset(g_lhs, r.chance(50) ? 0x80 : 0x7F, static_cast<size_t>(p.input.elements()));
    else
      fill(r, g_lhs, p.input.elements());
    quantized_avg_pool2d_reference(p, g_lhs, g_expected);
    prepare_buffers();
    quantized_avg_pool2d(p, g_lhs, g_out, g_scratch);
    Line line;
    line << "  input " << p.input.n << "x" << p.input.h << "x" << p.input.w << "x" << p.input.c << " kernel "
         << p.kernel_h << "x" << p.kernel_w << " stride " << p.stride_h << "," << p.stride_w << " pad "
         << p.padding.top << "," << p.padding.left << "," << p.padding.bottom << "," << p.padding.right
         << " act " << p.activation_min << "," << p.activation_max;
    check(t, i, line, scratch, p.output.elements());
    prepare_buffers();
    avg_pool2d_on_own_paths(p, g_lhs, g_out, g_scratch);
    check(*own_paths, i, line, scratch, p.output.elements());
    ++i;
  }
  return t;
}

Tally test_mean(Rng& r, int32_t cases, Print print) {
  Tally t{"quantized_mean", print};
  for (int32_t i = 0; i < cases;) {
    MeanParams p;
    // Spatial means over channels (inner > 1) and last-dim means (inner 1), counts that are no
    // power of two, up to kMaxInput taps (a deep 1/count fold).
    p.outer = r.uniform(1, 3);
    p.inner = r.chance(30) ? 1 : r.uniform(1, 64);
    p.reduce = r.chance(20) ? r.uniform(1, kMaxInput / p.inner) : r.uniform(1, 100);
    if (int64_t{p.outer} * p.reduce * p.inner > kMaxInput || int64_t{p.outer} * p.inner > kMaxOutput) continue;
    p.input_offset = input_offset(r);
    p.output_offset = output_offset(r);
    const QuantizedMultiplier m = mean_multiplier({multiplier(r), shift(r)}, p.reduce);
    p.multiplier = m.multiplier;
    p.shift = m.shift;
    if (r.chance(50)) activation(r, &p.activation_min, &p.activation_max);
    const size_t scratch = quantized_mean_scratch_size(p, kKernelIsa);
    if (scratch > kMaxScratch || !quantized_mean_prepare(p).ok()) continue;
    const int64_t n = int64_t{p.outer} * p.reduce * p.inner;
    if (r.chance(20))  // the extreme sums
      std::memset(g_lhs, r.chance(50) ? 0x80 : 0x7F, static_cast<size_t>(n));
    else
      fill(r, g_lhs, n);
    quantized_mean_reference(p, g_lhs, g_expected);
    prepare_buffers();
    quantized_mean(p, g_lhs, g_out, g_scratch);
    Line line;
    line << "  outer " << p.outer << " reduce " << p.reduce << " inner " << p.inner << " offsets "
         << p.input_offset << "," << p.output_offset << " requant " << p.multiplier << "," << p.shift << " act "
         << p.activation_min << "," << p.activation_max;
    check(t, i, line, scratch, int64_t{p.outer} * p.inner);
    ++i;
  }
  return t;
}

// Each case also runs on its weights packed as at load, where this build packs them (own tally).
Tally test_linear(Rng& r, int32_t cases, Print print, Tally* packed) {
  Tally t{"quantized_linear", print};
  for (int32_t i = 0; i < cases;) {
    LinearParams p;
    p.batches = r.chance(10) ? r.uniform(4, 20) : r.uniform(1, 3);  // sometimes whole blocks of rows
    p.input_features = r.chance(20) ? r.uniform(64, 1000) : r.uniform(1, 40);
    p.output_features = r.chance(20) ? r.uniform(16, 70) : r.uniform(1, 13);
    if (int64_t{p.batches} * p.input_features > kMaxInput ||
        int64_t{p.input_features} * p.output_features > kMaxFilter ||
        int64_t{p.batches} * p.output_features > kMaxOutput)
      continue;
    p.input_offset = input_offset(r);
    p.filter_offset = r.chance(70) ? 0 : input_offset(r);
    p.output_offset = output_offset(r);
    activation(r, &p.activation_min, &p.activation_max);
    p.num_multipliers = r.chance(50) ? 1 : p.output_features;
    requantize_params(r, p.num_multipliers);
    p.multipliers = g_multipliers;
    p.shifts = g_shifts;
    const size_t scratch = quantized_linear_scratch_size(p, kKernelIsa);
    if (scratch > kMaxScratch || !quantized_linear_prepare(p).ok()) continue;
    fill(r, g_lhs, int64_t{p.batches} * p.input_features);
    fill(r, g_filter, int64_t{p.input_features} * p.output_features);
    const int32_t* bias = make_bias(r, p.output_features);
    quantized_linear_reference(p, g_lhs, g_filter, bias, g_expected);
    const bool folded = r.chance(50);
    if (folded) {
      quantized_linear_fold_bias(p, g_filter, bias, g_folded_bias);
      p.bias_includes_input_offset = true;
      bias = g_folded_bias;
    }
    const int64_t outputs = int64_t{p.batches} * p.output_features;
    prepare_buffers();
    quantized_linear(p, g_lhs, g_filter, bias, g_out, g_scratch);
    Line line;
    line << "  batches " << p.batches << " in " << p.input_features << " out " << p.output_features
         << " offsets " << p.input_offset << "," << p.filter_offset << "," << p.output_offset
         << " multipliers " << p.num_multipliers << " act " << p.activation_min << "," << p.activation_max
         << (folded ? " folded bias" : "");
    check(t, i, line, scratch, outputs);
    if (packs(quantized_linear_host_packed_size(p), &p)) {
      quantized_linear_host_pack(p, g_filter, bias, g_packed);
      quantized_linear(p, g_lhs, g_filter, bias, g_out, g_scratch);
      check(*packed, i, line << " packed", scratch, outputs);
    }
    ++i;
  }
  return t;
}

// Two shapes that broadcast: same shape, a scalar side, or size-1 dims on either side.
bool broadcast_shape(Rng& r, BroadcastShape* shape, int64_t* lhs_n, int64_t* rhs_n, Line& line) {
  const int rank = r.uniform(1, 4);
  int64_t out[4], lhs[4], rhs[4];
  for (int d = 0; d < rank; ++d) out[d] = r.chance(20) ? r.uniform(1, 2) : r.uniform(1, 9);
  if (rank == 1 && r.chance(50)) out[0] = r.uniform(1, 300);
  const int kind = r.uniform(0, 3);
  int lhs_rank = rank, rhs_rank = rank;
  for (int d = 0; d < rank; ++d) {
    lhs[d] = out[d];
    rhs[d] = out[d];
    if (kind == 1 && r.chance(50)) rhs[d] = 1;
    if (kind == 2 && r.chance(50)) lhs[d] = 1;
  }
  if (kind == 3) rhs_rank = 0;  // a scalar side
  if (make_broadcast_shape(lhs, lhs_rank, rhs, rhs_rank, shape).ok() == false) return false;
  *lhs_n = 1;
  *rhs_n = 1;
  for (int d = 0; d < lhs_rank; ++d) *lhs_n *= lhs[d];
  for (int d = 0; d < rhs_rank; ++d) *rhs_n *= rhs[d];
  line << "  lhs";
  for (int d = 0; d < lhs_rank; ++d) line << " " << lhs[d];
  line << " rhs";
  for (int d = 0; d < rhs_rank; ++d) line << " " << rhs[d];
  return shape->elements() <= kMaxOutput && *lhs_n <= kMaxInput && *rhs_n <= kMaxInput;
}

Tally test_add(Rng& r, int32_t cases, Print print) {
  Tally t{"quantized_add", print};
  for (int32_t i = 0; i < cases;) {
    AddParams p;
    int64_t lhs_n, rhs_n;
    Line line;
    if (!broadcast_shape(r, &p.shape, &lhs_n, &rhs_n, line)) continue;
    p.lhs_offset = input_offset(r);
    p.rhs_offset = input_offset(r);
    p.output_offset = output_offset(r);
    // Input scales as TFLite derives them (shift <= 0 after << 20) and, sometimes, anything.
    const bool wild = r.chance(20);
    p.lhs_multiplier = multiplier(r);
    p.lhs_shift = wild ? shift(r) : r.uniform(-12, 0);
    p.rhs_multiplier = multiplier(r);
    p.rhs_shift = wild ? shift(r) : r.uniform(-12, 0);
    p.output_multiplier = multiplier(r);
    p.output_shift = wild ? shift(r) : r.uniform(-24, -10);
    activation(r, &p.activation_min, &p.activation_max);
    if (!quantized_add_prepare(p).ok()) continue;
    fill(r, g_lhs, lhs_n);
    fill(r, g_rhs, rhs_n);
    quantized_add_reference(p, g_lhs, g_rhs, g_expected);
    prepare_buffers();
    quantized_add(p, g_lhs, g_rhs, g_out);
    line << " offsets " << p.lhs_offset << "," << p.rhs_offset << "," << p.output_offset << " shifts "
         << p.lhs_shift << "," << p.rhs_shift << "," << p.output_shift << " multipliers " << p.lhs_multiplier
         << "," << p.rhs_multiplier << "," << p.output_multiplier;
    check(t, i, line, 0, p.shape.elements());
    ++i;
  }
  return t;
}

Tally test_mul(Rng& r, int32_t cases, Print print) {
  Tally t{"quantized_mul", print};
  for (int32_t i = 0; i < cases;) {
    MulParams p;
    int64_t lhs_n, rhs_n;
    Line line;
    if (!broadcast_shape(r, &p.shape, &lhs_n, &rhs_n, line)) continue;
    p.lhs_offset = input_offset(r);
    p.rhs_offset = input_offset(r);
    p.output_offset = output_offset(r);
    p.output_multiplier = multiplier(r);
    p.output_shift = r.chance(30) ? shift(r) : r.uniform(-16, -4);
    activation(r, &p.activation_min, &p.activation_max);
    if (!quantized_mul_prepare(p).ok()) continue;
    fill(r, g_lhs, lhs_n);
    fill(r, g_rhs, rhs_n);
    quantized_mul_reference(p, g_lhs, g_rhs, g_expected);
    prepare_buffers();
    quantized_mul(p, g_lhs, g_rhs, g_out);
    line << " offsets " << p.lhs_offset << "," << p.rhs_offset << "," << p.output_offset << " shift "
         << p.output_shift << " multiplier " << p.output_multiplier;
    check(t, i, line, 0, p.shape.elements());
    ++i;
  }
  return t;
}

// The 16x8 (int8 weights) and 16x16 (int16 weights) conv and linear kernels: entry points, the
// weight buffer and how weights, biases and shifts are drawn. The 16x16 sums reach 2^46: biases up
// to 2^46, weights often at +-32767, and mostly the small shifts its 2^8 finer scales take.
template <class W>
struct S16Kernels;

template <>
struct S16Kernels<int8_t> {
  using Conv = Conv2dS16Params;
  using Linear = LinearS16Params;
  static constexpr const char* kConv = "quantized_conv2d_s16";
  static constexpr const char* kLinear = "quantized_linear_s16";
  static constexpr auto conv_output_dims = quantized_conv2d_s16_output_dims;
  static constexpr auto conv_prepare = quantized_conv2d_s16_prepare;
  static constexpr auto conv_scratch_size = quantized_conv2d_s16_scratch_size;
  static constexpr auto conv = quantized_conv2d_s16;
  static constexpr auto conv_reference = quantized_conv2d_s16_reference;
  static constexpr auto linear_prepare = quantized_linear_s16_prepare;
  static constexpr auto linear_scratch_size = quantized_linear_s16_scratch_size;
  static constexpr auto linear = quantized_linear_s16;
  static constexpr auto linear_reference = quantized_linear_s16_reference;
  static int8_t* weights() { return g_filter; }
  static void fill_weights(Rng& r, int64_t n) { fill(r, g_filter, n); }
  static int64_t bias(Rng& r) { return int64_t{r.uniform(-(1 << 30), 1 << 30)} * r.uniform(1, 64); }
  static int32_t shift(Rng& r, int32_t drawn) { return drawn > 7 ? r.uniform(-20, 7) : drawn; }
};

template <>
struct S16Kernels<int16_t> {
  using Conv = Conv2dS16W16Params;
  using Linear = LinearS16W16Params;
  static constexpr const char* kConv = "quantized_conv2d_s16w16";
  static constexpr const char* kLinear = "quantized_linear_s16w16";
  static constexpr auto conv_output_dims = quantized_conv2d_s16w16_output_dims;
  static constexpr auto conv_prepare = quantized_conv2d_s16w16_prepare;
  static constexpr auto conv_scratch_size = quantized_conv2d_s16w16_scratch_size;
  static constexpr auto conv = quantized_conv2d_s16w16;
  static constexpr auto conv_reference = quantized_conv2d_s16w16_reference;
  static constexpr auto linear_prepare = quantized_linear_s16w16_prepare;
  static constexpr auto linear_scratch_size = quantized_linear_s16w16_scratch_size;
  static constexpr auto linear = quantized_linear_s16w16;
  static constexpr auto linear_reference = quantized_linear_s16w16_reference;
  static int16_t* weights() { return g_filter16; }
  static void fill_weights(Rng& r, int64_t n) {
    for (int64_t k = 0; k < n; ++k)
      g_filter16[k] = static_cast<int16_t>(r.chance(20) ? (r.chance(50) ? -32767 : 32767) : r.uniform(-32768, 32767));
  }
  static int64_t bias(Rng& r) { return int64_t{r.uniform(-(1 << 30), 1 << 30)} * r.uniform(1, 1 << 16); }
  static int32_t shift(Rng& r, int32_t drawn) { return r.chance(60) ? r.uniform(-31, -12) : (drawn > 7 ? 7 : drawn); }
};

// The 16x8 / 16x16 conv (arm_convolve_s16 arithmetic): int16 inputs biased to the extremes, int64
// bias, shifts in [-31, 7], against its reference.
template <class W>
Tally test_conv2d_s16(Rng& r, int32_t cases, Print print) {
  using K = S16Kernels<W>;
  Tally t{K::kConv, print};
  for (int32_t i = 0; i < cases;) {
    typename K::Conv p;
    const int32_t groups = r.chance(80) ? 1 : r.uniform(2, 3);
    const bool long_window = r.chance(25);  // an STFT-like window: several int32 blocks
    const int32_t group_c = long_window ? 1 : r.uniform(1, 20);
    const int32_t out_per_group = r.uniform(1, 12);
    p.input = Dims4{r.uniform(1, 2), long_window ? 1 : r.uniform(1, 9),
                    long_window ? r.uniform(600, 1200) : r.uniform(1, 9), groups * group_c};
    const int32_t sizes[] = {1, 2, 3, 3, 4, 5};
    p.filter = Dims4{groups * out_per_group, long_window ? 1 : sizes[r.uniform(0, 5)],
                     long_window ? r.uniform(257, 700) : sizes[r.uniform(0, 5)], group_c};
    // Unpadded 1-D windows are read in place: scalar and MVE then report no scratch at all.
    geometry(r, &p.geometry, r.chance(30));
    if (long_window) p.geometry.stride_w = r.uniform(64, 200);
    p.output = K::conv_output_dims(p);
    if (p.output.h < 1 || p.output.w < 1) continue;
    if (p.input.elements() > kMaxInput || p.filter.elements() > kMaxFilter ||
        p.output.elements() > kMaxOutput || p.filter.n > kMaxChannels)
      continue;
    requantize_params(r, p.filter.n);
    for (int32_t c = 0; c < p.filter.n; ++c) g_shifts[c] = K::shift(r, g_shifts[c]);
    p.multipliers = g_multipliers;
    p.shifts = g_shifts;
    p.activation_min = r.chance(70) ? -32768 : r.uniform(-32768, 0);
    p.activation_max = r.chance(70) ? 32767 : r.uniform(p.activation_min, 32767);
    const size_t scratch = K::conv_scratch_size(p, kKernelIsa);
    if (scratch > kMaxScratch || !K::conv_prepare(p).ok()) continue;
    for (int64_t k = 0; k < p.input.elements(); ++k)
      g_in16[k] = static_cast<int16_t>(r.chance(20) ? (r.chance(50) ? -32768 : 32767) : r.uniform(-32768, 32767));
    K::fill_weights(r, p.filter.elements());
    for (int32_t c = 0; c < p.filter.n; ++c) g_bias64[c] = K::bias(r);
    const int64_t* bias = r.chance(20) ? nullptr : g_bias64;
    K::conv_reference(p, g_in16, K::weights(), bias, g_expected16);
    std::memset(g_scratch, kCanary, sizeof(g_scratch));
    for (int32_t k = 0; k < kMaxOutput + kGuard; ++k) g_out16[k] = 0x5A5A;
    K::conv(p, g_in16, K::weights(), bias, g_out16, g_scratch);
    ++t.cases;
    const int64_t outputs = p.output.elements();
    const char* problem = nullptr;
    for (int64_t k = 0; !problem && k < outputs; ++k)
      if (g_out16[k] != g_expected16[k]) problem = "output differs";
    for (int32_t k = 0; !problem && k < kGuard; ++k)
      if (g_out16[outputs + k] != 0x5A5A) problem = "wrote past the output";
    for (int32_t k = 0; !problem && k < kGuard; ++k)
      if (g_scratch[scratch + k] != kCanary) problem = "wrote past its scratch";
    if (problem && ++t.failures <= 5) {
      Line line;
      line << "FAIL " << t.kernel << " case " << i << ": " << problem;
      print(line.str());
      Line params;
      ConvQuantParams q;
      q.activation_min = p.activation_min;
      q.activation_max = p.activation_max;
      describe(params, p.input, p.filter, p.geometry, q);
      print(params.str());
    }
    ++i;
  }
  return t;
}

// The 16x8 / 16x16 fully connected layer (arm_fully_connected_s16 arithmetic): int16 inputs biased
// to the extremes, rows long enough for several int32 blocks, int64 bias, per-tensor or
// per-channel shifts in [-31, 7], against its reference.
template <class W>
Tally test_linear_s16(Rng& r, int32_t cases, Print print) {
  using K = S16Kernels<W>;
  Tally t{K::kLinear, print};
  for (int32_t i = 0; i < cases;) {
    typename K::Linear p;
    p.batches = r.uniform(1, 3);
    p.input_features = r.chance(25) ? r.uniform(250, 1100) : r.uniform(1, 40);
    p.output_features = r.chance(20) ? r.uniform(16, 130) : r.uniform(1, 13);
    if (int64_t{p.batches} * p.input_features > kMaxInput ||
        int64_t{p.input_features} * p.output_features > kMaxFilter ||
        int64_t{p.batches} * p.output_features > kMaxOutput || p.output_features > kMaxChannels)
      continue;
    p.num_multipliers = r.chance(50) ? 1 : p.output_features;
    requantize_params(r, p.num_multipliers);
    for (int32_t c = 0; c < p.num_multipliers; ++c) g_shifts[c] = K::shift(r, g_shifts[c]);
    p.multipliers = g_multipliers;
    p.shifts = g_shifts;
    p.activation_min = r.chance(70) ? -32768 : r.uniform(-32768, 0);
    p.activation_max = r.chance(70) ? 32767 : r.uniform(p.activation_min, 32767);
    const size_t scratch = K::linear_scratch_size(p, kKernelIsa);
    if (scratch > kMaxScratch || !K::linear_prepare(p).ok()) continue;
    for (int64_t k = 0; k < int64_t{p.batches} * p.input_features; ++k)
      g_in16[k] = static_cast<int16_t>(r.chance(20) ? (r.chance(50) ? -32768 : 32767) : r.uniform(-32768, 32767));
    K::fill_weights(r, int64_t{p.input_features} * p.output_features);
    for (int32_t c = 0; c < p.output_features; ++c) g_bias64[c] = K::bias(r);
    const int64_t* bias = r.chance(20) ? nullptr : g_bias64;
    K::linear_reference(p, g_in16, K::weights(), bias, g_expected16);
    std::memset(g_scratch, kCanary, sizeof(g_scratch));
    for (int32_t k = 0; k < kMaxOutput + kGuard; ++k) g_out16[k] = 0x5A5A;
    K::linear(p, g_in16, K::weights(), bias, g_out16, g_scratch);
    ++t.cases;
    const int64_t outputs = int64_t{p.batches} * p.output_features;
    const char* problem = nullptr;
    for (int64_t k = 0; !problem && k < outputs; ++k)
      if (g_out16[k] != g_expected16[k]) problem = "output differs";
    for (int32_t k = 0; !problem && k < kGuard; ++k)
      if (g_out16[outputs + k] != 0x5A5A) problem = "wrote past the output";
    for (int32_t k = 0; !problem && k < kGuard; ++k)
      if (g_scratch[scratch + k] != kCanary) problem = "wrote past its scratch";
    if (problem && ++t.failures <= 5) {
      Line line;
      line << "FAIL " << t.kernel << " case " << i << ": " << problem << " batches " << p.batches
           << " in " << p.input_features << " out " << p.output_features << " multipliers "
           << p.num_multipliers << " act " << p.activation_min << "," << p.activation_max;
      print(line.str());
    }
    ++i;
  }
  return t;
}

// int16 values, a fifth of them at the extremes.
void fill16(Rng& r, int16_t* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    data[i] = static_cast<int16_t>(r.chance(20) ? (r.chance(50) ? -32768 : 32767) : r.uniform(-32768, 32767));
}

void activation16(Rng& r, int32_t* lo, int32_t* hi) {
  *lo = -32768;
  *hi = 32767;
  if (r.chance(40)) {
    const int32_t a = r.uniform(-32768, 32767), b = r.uniform(-32768, 32767);
    *lo = a < b ? a : b;
    *hi = a < b ? b : a;
  }
}

// Checks one int16 output against g_expected16 and the guard after it.
void check16(Tally& t, int32_t index, const Line& params, int64_t outputs) {
  ++t.cases;
  const char* problem = nullptr;
  for (int64_t k = 0; !problem && k < outputs; ++k)
    if (g_out16[k] != g_expected16[k]) problem = "output differs";
  for (int32_t k = 0; !problem && k < kGuard; ++k)
    if (g_out16[outputs + k] != 0x5A5A) problem = "wrote past the output";
  if (problem && ++t.failures <= 5) {
    Line line;
    line << "FAIL " << t.kernel << " case " << index << ": " << problem;
    t.print(line.str());
    t.print(params.str());
  }
}

// The 16x8 add (arm_elementwise_add_s16 arithmetic): input multipliers as TFLite derives them
// (<= 0.5 after << 15) and, sometimes, anything.
Tally test_add_s16(Rng& r, int32_t cases, Print print) {
  Tally t{"quantized_add_s16", print};
  for (int32_t i = 0; i < cases;) {
    AddS16Params p;
    int64_t lhs_n, rhs_n;
    Line line;
    if (!broadcast_shape(r, &p.shape, &lhs_n, &rhs_n, line)) continue;
    const bool wild = r.chance(20);
    p.lhs_multiplier = multiplier(r);
    p.lhs_shift = wild ? shift(r) : r.uniform(-20, -1);
    p.rhs_multiplier = multiplier(r);
    p.rhs_shift = wild ? shift(r) : r.uniform(-20, -1);
    p.output_multiplier = multiplier(r);
    p.output_shift = wild ? shift(r) : r.uniform(-20, 0);
    activation16(r, &p.activation_min, &p.activation_max);
    if (!quantized_add_s16_prepare(p).ok()) continue;
    fill16(r, g_in16, lhs_n);
    fill16(r, g_rhs16, rhs_n);
    quantized_add_s16_reference(p, g_in16, g_rhs16, g_expected16);
    for (int32_t k = 0; k < kMaxOutput + kGuard; ++k) g_out16[k] = 0x5A5A;
    quantized_add_s16(p, g_in16, g_rhs16, g_out16);
    line << " shifts " << p.lhs_shift << "," << p.rhs_shift << "," << p.output_shift << " multipliers "
         << p.lhs_multiplier << "," << p.rhs_multiplier << "," << p.output_multiplier;
    check16(t, i, line, p.shape.elements());
    ++i;
  }
  return t;
}

Tally test_mul_s16(Rng& r, int32_t cases, Print print) {
  Tally t{"quantized_mul_s16", print};
  for (int32_t i = 0; i < cases;) {
    MulS16Params p;
    int64_t lhs_n, rhs_n;
    Line line;
    if (!broadcast_shape(r, &p.shape, &lhs_n, &rhs_n, line)) continue;
    p.output_multiplier = multiplier(r);
    p.output_shift = r.chance(30) ? shift(r) : r.uniform(-24, 0);
    activation16(r, &p.activation_min, &p.activation_max);
    if (!quantized_mul_s16_prepare(p).ok()) continue;
    fill16(r, g_in16, lhs_n);
    fill16(r, g_rhs16, rhs_n);
    quantized_mul_s16_reference(p, g_in16, g_rhs16, g_expected16);
    for (int32_t k = 0; k < kMaxOutput + kGuard; ++k) g_out16[k] = 0x5A5A;
    quantized_mul_s16(p, g_in16, g_rhs16, g_out16);
    line << " shift " << p.output_shift << " multiplier " << p.output_multiplier;
    check16(t, i, line, p.shape.elements());
    ++i;
  }
  return t;
}

// The int16 lookup table (TFLite's lut_lookup interpolation): random tables, often with
// neighbours at the int16 extremes, over inputs biased to the extremes and segment edges.
Tally test_activation_s16(Rng& r, int32_t cases, Print print) {
  Tally t{"quantized_activation_s16", print};
  static int16_t table[kActivationS16TableSize];
  for (int32_t i = 0; i < cases; ++i) {
    const bool extremes = r.chance(30);
    const int32_t spread = r.chance(50) ? 32767 : r.uniform(1, 300);
    for (int32_t k = 0; k < kActivationS16TableSize; ++k)
      table[k] = static_cast<int16_t>(extremes ? (r.chance(50) ? -32768 : 32767)
                                               : r.uniform(-32768, 32767) % (spread + 1));
    ActivationS16Params p;
    p.count = r.uniform(0, kMaxOutput);
    p.table = table;
    for (int64_t k = 0; k < p.count; ++k)
      g_in16[k] = static_cast<int16_t>(r.chance(20) ? (r.chance(50) ? -32768 : 32767)
                                       : r.chance(20) ? r.uniform(-256, 255) * 128 + (r.chance(50) ? 0 : 127)
                                                      : r.uniform(-32768, 32767));
    quantized_activation_s16_reference(p, g_in16, g_expected16);
    for (int32_t k = 0; k < kMaxOutput + kGuard; ++k) g_out16[k] = 0x5A5A;
    quantized_activation_s16(p, g_in16, g_out16);
    ++t.cases;
    const char* problem = nullptr;
    for (int64_t k = 0; !problem && k < p.count; ++k)
      if (g_out16[k] != g_expected16[k]) problem = "output differs";
    for (int32_t k = 0; !problem && k < kGuard; ++k)
      if (g_out16[p.count + k] != 0x5A5A) problem = "wrote past the output";
    if (problem && ++t.failures <= 5) {
      Line line;
      line << "FAIL " << t.kernel << " case " << i << ": " << problem << ", " << p.count << " elements";
      print(line.str());
    }
  }
  return t;
}


// quantize_per_tensor (float -> int8 / int16): scales from tiny to huge, inputs that are exact
// halves of a step (ties to even), NaN, infinities, signed zeros, subnormals and values past the
// quant range, over lengths with every tail.
float g_floats[kMaxInput];

float float_from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// In place (`in_place`), each case also runs with its output from the float input's first byte, as
// the planner narrows it over a dying input, and must equal the run on separate buffers.
Tally test_quantize(Rng& r, int32_t cases, Print print, Tally* in_place) {
  Tally t{"quantize_per_tensor", print};
  for (int32_t i = 0; i < cases;) {
    QuantizeParams p;
    const bool int8 = r.chance(60);
    p.dtype = int8 ? QuantDtype::kInt8 : QuantDtype::kInt16;
    const int32_t type_min = int8 ? -128 : -32768, type_max = int8 ? 127 : 32767;
    // 2^-40 .. 2^20 with a random mantissa.
    p.scale = float_from_bits(static_cast<uint32_t>(r.uniform(87, 147)) << 23 | (r.next() & 0x7FFFFF));
    p.zero_point = r.chance(20) ? (r.chance(50) ? type_min : type_max) : r.uniform(type_min, type_max);
    p.quant_min = type_min;
    p.quant_max = type_max;
    if (r.chance(30)) {
      const int32_t a = r.uniform(type_min, type_max), b = r.uniform(type_min, type_max);
      p.quant_min = a < b ? a : b;
      p.quant_max = a < b ? b : a;
    }
    if (!quantize_per_tensor_prepare(p).ok()) continue;
    const int32_t n = r.uniform(0, int8 ? kMaxOutput : kMaxOutput / 2);
    const float special[] = {float_from_bits(0x7FC00000u), float_from_bits(0xFFC00001u),
                             float_from_bits(0x7F800000u), float_from_bits(0xFF800000u),
                             0.0f, -0.0f, float_from_bits(0x00000001u), float_from_bits(0x807FFFFFu),
                             3.0e38f, -3.0e38f};
    for (int32_t k = 0; k < n; ++k) {
      const int32_t kind = r.uniform(0, 9);
      const float steps = static_cast<float>(r.uniform(-40000, 40000));
      if (kind == 0) g_floats[k] = special[r.uniform(0, 9)];
      else if (kind <= 3) g_floats[k] = (steps + 0.5f) * p.scale;  // a tie, up to the multiply's rounding
      else if (kind == 4) g_floats[k] = float_from_bits(r.next());
      else g_floats[k] = (steps + static_cast<float>(r.uniform(-1000, 1000)) / 1000.0f) * p.scale;
    }
    Line line;
    line << (int8 ? "int8" : "int16") << " n " << n << " zero point " << p.zero_point << " range "
         << p.quant_min << ".." << p.quant_max;
    if (int8) {
      quantize_per_tensor_reference(p, g_floats, g_expected, static_cast<size_t>(n));
      prepare_buffers();
      quantize_per_tensor(p, g_floats, g_out, static_cast<size_t>(n));
      check(t, i, line, 0, n);
    } else {
      quantize_per_tensor_reference(p, g_floats, g_expected16, static_cast<size_t>(n));
      for (int32_t k = 0; k < kMaxOutput + kGuard; ++k) g_out16[k] = 0x5A5A;
      quantize_per_tensor(p, g_floats, g_out16, static_cast<size_t>(n));
      check16(t, i, line, n);
    }
    // g_floats is regenerated next case: write over it.
    quantize_per_tensor(p, g_floats, g_floats, static_cast<size_t>(n));
    const size_t bytes = static_cast<size_t>(n) * (int8 ? 1 : 2);
    const void* separate = int8 ? static_cast<const void*>(g_out) : static_cast<const void*>(g_out16);
    ++in_place->cases;
    if (std::memcmp(g_floats, separate, bytes) != 0 && ++in_place->failures <= 5) {
      Line fail;
      fail << "FAIL " << in_place->kernel << " case " << i << ": differs from the run on separate buffers";
      in_place->print(fail.str());
      in_place->print(line.str());
    }
    ++i;
  }
  return t;
}

}  // namespace

int run_all(uint32_t seed, int32_t cases, Print print) {
  Line header;
  const char* names[] = {"scalar", "DSP", "MVE"};
  header << "kernel variants: " << names[static_cast<int>(kKernelIsa)] << ", seed " << int64_t{seed} << ", "
         << cases << " cases per kernel";
  print(header.str());
  Rng r(seed);
  Tally depthwise_in_place{"quantized_depthwise_conv2d in place", print};
  Tally quantize_in_place{"quantize_per_tensor in place", print};
  Tally conv2d_own{"quantized_conv2d on its own paths", print};
  Tally depthwise_own{"quantized_depthwise_conv2d on its own paths", print};
  Tally avg_pool2d_own{"quantized_avg_pool2d on its own paths", print};
  Tally conv_packed{"quantized_conv2d packed", print};
  Tally linear_packed{"quantized_linear packed", print};
  const Tally tallies[] = {test_conv2d(r, cases, print, &conv2d_own, &conv_packed),
                           test_depthwise(r, cases, print, &depthwise_in_place, &depthwise_own),
                           test_linear(r, cases, print, &linear_packed), test_add(r, cases, print),
                           test_mul(r, cases, print), test_avg_pool2d(r, cases, print, &avg_pool2d_own),
                           test_conv2d_s16<int8_t>(r, cases, print),
                           test_linear_s16<int8_t>(r, cases, print), test_add_s16(r, cases, print),
                           test_mul_s16(r, cases, print), test_activation_s16(r, cases, print),
                           test_quantize(r, cases, print, &quantize_in_place), test_mean(r, cases, print),
                           test_conv2d_in_place(r, cases, print), test_conv2d_s16<int16_t>(r, cases, print),
                           test_linear_s16<int16_t>(r, cases, print)};
  int failures = 0;
  for (const Tally& t : tallies) {
    report(t);
    failures += t.failures;
  }
  for (const Tally* t : {&depthwise_in_place, &quantize_in_place, &conv2d_own, &depthwise_own, &avg_pool2d_own}) {
    report(*t);
    failures += t->failures;
  }
  for (const Tally* t : {&conv_packed, &linear_packed}) {
    if (t->cases > 0) report(*t);  // none where this build packs nothing
    failures += t->failures;
  }
  return failures;
}

}  // namespace cortexm::variant_tests
