// Runs layer shapes once each on a QEMU Cortex-M machine so that an instruction-count plugin can
// attribute executed instructions (not cycles) to every kernel call: cortexm_insn_marker() is
// entered right before and right after each call. bench/qemu_layer_counts.py drives it.
//
//   command line (-semihosting-config arg=...): layer_counts LAYERS [corrupt]
//
// LAYERS holds one record of 16 little-endian int32 per layer: kind (0 conv, 1 depthwise,
// 2 linear, 3 add, 4 mul of two N x H x W x C_in tensors, 5 average pool), N, H, W, C_in, C_out,
// KH, KW, stride_h, stride_w, pad_top, pad_left, pad_bottom, pad_right, groups, dilation (both
// axes). Data are pseudo-random, generated here.
//
// Built with CMSIS-NN (CORTEXM_BENCH_CMSIS_NN, bench/target/CMakeLists.txt), every layer runs
// CMSIS-NN's public function first (arm_convolve_wrapper_s8, arm_depthwise_conv_wrapper_s8,
// arm_fully_connected_s8, arm_elementwise_add_s8, arm_elementwise_mul_s8, arm_avgpool_s8), then
// cortexm's kernel on the same input, weights, bias (conv and linear: folded as the lowering folds
// it, before the counted call), multipliers, shifts, offsets and activation range, each between
// two marker calls, and compares the output bytes. Per layer it writes
//   layer I calls K scratch S [cmsis_scratch C cmsis_fallback B mismatches M first F
//                              cortexm_vs_reference R cmsis_vs_reference Q]
// (K: marker pairs the layer used, cortexm's call last, CMSIS-NN's measured call before it;
// S: quantized_*_scratch_size for this build's variant; C: CMSIS-NN's *_get_buffer_size; B: 1 when
// arm_convolve_wrapper_s8 refused the layer and arm_convolve_s8 ran instead; M: output bytes that
// differ, F: the first one's index or -1; R, Q: when M > 0, the bytes where each side differs
// from cortexm's reference kernel, else -1). `corrupt` flips a bit of CMSIS-NN's first output
// byte of every layer after it ran, so that a test can see the comparison fail.
// Exit code 0; 1 for a bad file or a rejected layer; 2 when some layer's outputs differ (after
// every layer ran).
#include <cstdint>
#include <cstring>

#include "cortexm/kernels/kernel_isa.h"
#include "cortexm/kernels/quantized_add.h"
#include "cortexm/kernels/quantized_avg_pool2d.h"
#include "cortexm/kernels/quantized_conv2d.h"
#include "cortexm/kernels/quantized_depthwise_conv2d.h"
#include "cortexm/kernels/quantized_linear.h"
#include "cortexm/kernels/quantized_mul.h"
#include "semihosting.h"

#if CORTEXM_BENCH_CMSIS_NN
#include "arm_nnfunctions.h"
#endif

extern "C" uint8_t __bulk_start[], __bulk_end[];

extern "C" __attribute__((noinline, used)) void cortexm_insn_marker(void) { __asm__ volatile(""); }

namespace {

using namespace cortexm;

constexpr int kFields = 16;
constexpr int32_t kInputOffset = 7;
constexpr int32_t kOutputOffset = -3;

uint8_t* g_next;
bool g_corrupt_cmsis = false;

void* take(int64_t bytes) {
  uint8_t* p = g_next;
  g_next += (bytes + 15) & ~int64_t{15};
  return g_next <= __bulk_end ? p : nullptr;
}

uint32_t g_state = 12345;
void fill(int8_t* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    g_state ^= g_state << 13;
    g_state ^= g_state >> 17;
    g_state ^= g_state << 5;
    data[i] = static_cast<int8_t>(g_state);
  }
}

int fail(const char* what, int64_t layer) {
  sh_write0("layer_counts: error: ");
  sh_print_int(what, layer);
  return 1;
}

// Appends "<label> <value> " to a line under construction.
char* append(char* at, const char* label, int64_t value) {
  while (*label) *at++ = *label++;
  *at++ = ' ';
  if (value < 0) {
    *at++ = '-';
    value = -value;
  }
  char digits[20];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0);
  while (n > 0) *at++ = digits[--n];
  *at++ = ' ';
  return at;
}

ConvQuantParams quant(int32_t channels) {
  auto* m = static_cast<int32_t*>(take(4 * int64_t{channels}));
  auto* s = static_cast<int32_t*>(take(4 * int64_t{channels}));
  for (int32_t c = 0; m && s && c < channels; ++c) {
    m[c] = 1518500250 + c;
    s[c] = -9;
  }
  ConvQuantParams q;
  q.input_offset = kInputOffset;
  q.output_offset = kOutputOffset;
  q.multipliers = m;
  q.shifts = s;
  return q;
}

int32_t* bias(int32_t channels) {
  auto* b = static_cast<int32_t*>(take(4 * int64_t{channels}));
  for (int32_t c = 0; b && c < channels; ++c) b[c] = 100 * c - 3000;
  return b;
}

// One layer's buffers: the shared input(s), and one output per implementation, pre-filled with
// different bytes so that an output byte neither side writes counts as a mismatch.
struct Outputs {
  int8_t* cortexm = nullptr;
  int8_t* cmsis = nullptr;
  int64_t bytes = 0;
};

Outputs outputs(int64_t bytes) {
  Outputs o;
  o.bytes = bytes;
  o.cortexm = static_cast<int8_t*>(take(bytes));
#if CORTEXM_BENCH_CMSIS_NN
  o.cmsis = static_cast<int8_t*>(take(bytes));
  if (o.cmsis) std::memset(o.cmsis, 0x5a, static_cast<size_t>(bytes));
#else
  o.cmsis = o.cortexm;
#endif
  if (o.cortexm) std::memset(o.cortexm, 0xa5, static_cast<size_t>(bytes));
  return o;
}

// What a layer reports: the scratch each side asks for, and how its outputs compare.
struct Report {
  Outputs y;
  int64_t scratch = 0;
  int64_t cmsis_scratch = 0;
  int64_t calls = 1;  // marker pairs: cortexm's call, CMSIS-NN's call(s) before it
  int64_t cmsis_fallback = 0;
  int64_t mismatches = 0;  // output bytes where cortexm and CMSIS-NN differ
  int64_t first = -1;      // the first such byte
  // When they differ: bytes where each differs from cortexm's plain-loop reference kernel.
  int64_t cortexm_vs_reference = -1;
  int64_t cmsis_vs_reference = -1;
};

// Compares the two outputs; when they differ, runs the reference kernel (reference(out) writes
// the layer's output) to tell which side is off. Returns 0, or fail()'s 1.
template <typename Reference>
int compare(Report* r, int64_t index, Reference reference) {
  const Outputs& y = r->y;
  if (g_corrupt_cmsis && y.bytes > 0) y.cmsis[0] ^= 1;
  for (int64_t i = 0; i < y.bytes; ++i) {
    if (y.cortexm[i] != y.cmsis[i]) {
      if (r->first < 0) r->first = i;
      ++r->mismatches;
    }
  }
  if (r->mismatches == 0) return 0;
  auto* expected = static_cast<int8_t*>(take(y.bytes));
  if (!expected) return fail("out of memory for the reference at layer ", index);
  reference(expected);
  r->cortexm_vs_reference = r->cmsis_vs_reference = 0;
  for (int64_t i = 0; i < y.bytes; ++i) {
    r->cortexm_vs_reference += y.cortexm[i] != expected[i];
    r->cmsis_vs_reference += y.cmsis[i] != expected[i];
  }
  return 0;
}

#if CORTEXM_BENCH_CMSIS_NN
cmsis_nn_dims dims(const Dims4& d) { return cmsis_nn_dims{d.n, d.h, d.w, d.c}; }

// The fields cmsis_nn_conv_params and cmsis_nn_dw_conv_params share. CMSIS-NN takes the top and
// left padding; the output dims imply the rest.
template <typename CmsisParams>
void set_window(const ConvQuantParams& q, const ConvGeometry& g, CmsisParams* cp) {
  cp->input_offset = q.input_offset;
  cp->output_offset = q.output_offset;
  cp->stride = {g.stride_w, g.stride_h};
  cp->padding = {g.padding.left, g.padding.top};
  cp->dilation = {g.dilation_w, g.dilation_h};
  cp->activation = {q.activation_min, q.activation_max};
}

cmsis_nn_per_channel_quant_params per_channel(const ConvQuantParams& q) {
  return {const_cast<int32_t*>(q.multipliers), const_cast<int32_t*>(q.shifts)};
}

// CMSIS-NN's scratch (none for 0 bytes), from the bulk region; returns 0, or fail()'s 1.
int cmsis_context(int64_t bytes, int64_t index, cmsis_nn_context* ctx) {
  ctx->size = static_cast<int32_t>(bytes);
  ctx->buf = bytes > 0 ? take(bytes) : nullptr;
  return bytes > 0 && ctx->buf == nullptr ? fail("out of memory at layer ", index) : 0;
}
#endif

// Runs cortexm's kernel call between two markers and, in a CMSIS-NN build, compares its output
// with CMSIS-NN's (reference(out) writes the reference kernel's). Returns 0, or fail()'s 1.
template <typename Call, typename Reference>
int measure_cortexm(Report* r, int64_t index, Call call, Reference reference) {
  cortexm_insn_marker();
  call();
  cortexm_insn_marker();
#if CORTEXM_BENCH_CMSIS_NN
  return compare(r, index, reference);
#else
  (void)r, (void)index, (void)reference;
  return 0;
#endif
}

#if CORTEXM_BENCH_CMSIS_NN
// Runs one CMSIS-NN call between two markers; returns its status.
template <typename Call>
arm_cmsis_nn_status measure_cmsis(Report* r, Call call) {
  cortexm_insn_marker();
  const arm_cmsis_nn_status status = call();
  cortexm_insn_marker();
  ++r->calls;
  return status;
}
#endif

// A weighted layer's data: input, weights, bias and cortexm's scratch; outputs in report->y.
struct Weighted {
  int8_t* x = nullptr;
  int8_t* w = nullptr;
  int32_t* b = nullptr;
  void* scratch = nullptr;
};

// Takes and fills a weighted layer's buffers; returns 0, or fail()'s 1 when out of memory.
int take_weighted(int64_t inputs, int64_t weights, int64_t output_bytes, int32_t channels,
                  int64_t index, Report* report, Weighted* d) {
  d->x = static_cast<int8_t*>(take(inputs));
  d->w = static_cast<int8_t*>(take(weights));
  report->y = outputs(output_bytes);
  d->b = bias(channels);
  d->scratch = take(report->scratch);
  if (!d->x || !d->w || !report->y.cortexm || !report->y.cmsis || !d->b || !d->scratch)
    return fail("out of memory at layer ", index);
  fill(d->x, inputs);
  fill(d->w, weights);
  return 0;
}

// Each run_* prepares a layer, then calls CMSIS-NN's function (in a CMSIS-NN build) and cortexm's
// kernel, each between two marker calls. Returns 0, or fail()'s 1.

int run_conv(const int32_t* f, const ConvGeometry& g, const Dims4& input, int64_t index,
             Report* report) {
  Conv2dParams p;
  p.input = input;
  p.filter = Dims4{f[5], f[6], f[7], f[4] / f[14]};
  p.geometry = g;
  p.output = quantized_conv2d_output_dims(p);
  p.quant = quant(f[5]);
  if (!quantized_conv2d_prepare(p).ok()) return fail("invalid conv layer ", index);
  report->scratch = static_cast<int64_t>(quantized_conv2d_scratch_size(p, kKernelIsa));
  Weighted d;
  if (take_weighted(p.input.elements(), p.filter.elements(), p.output.elements(), f[5], index,
                    report, &d) != 0)
    return 1;
  const int8_t *x = d.x, *w = d.w;
  const int32_t* b = d.b;
  const Outputs& y = report->y;
#if CORTEXM_BENCH_CMSIS_NN
  cmsis_nn_conv_params cp{};
  set_window(p.quant, g, &cp);
  cmsis_nn_per_channel_quant_params qp = per_channel(p.quant);
  const cmsis_nn_dims in = dims(p.input), filter = dims(p.filter), out = dims(p.output);
  const cmsis_nn_dims bias_dims{1, 1, 1, p.output.c};
  cmsis_nn_context ctx;
  report->cmsis_scratch = arm_convolve_wrapper_s8_get_buffer_size(&cp, &in, &filter, &out);
  if (cmsis_context(report->cmsis_scratch, index, &ctx) != 0) return 1;
  arm_cmsis_nn_status status = measure_cmsis(report, [&] {
    return arm_convolve_wrapper_s8(&ctx, &cp, &qp, &in, x, &filter, w, &bias_dims, b, &out, y.cmsis);
  });
  if (status != ARM_CMSIS_NN_SUCCESS) {
    // The wrapper's pick refuses some shapes (MVE arm_convolve_1_x_n_s8: padding other than
    // TFLite's SAME split, e.g. PyTorch's k3 s2 p1 on an even width); its generic
    // arm_convolve_s8 takes any padding. Measured again, reported as a fallback.
    report->cmsis_fallback = 1;
    report->cmsis_scratch = arm_convolve_s8_get_buffer_size(&in, &filter);
    if (cmsis_context(report->cmsis_scratch, index, &ctx) != 0) return 1;
    status = measure_cmsis(report, [&] {
      return arm_convolve_s8(&ctx, &cp, &qp, &in, x, &filter, w, &bias_dims, b, nullptr, &out, y.cmsis);
    });
  }
  if (status != ARM_CMSIS_NN_SUCCESS) return fail("CMSIS-NN rejected conv layer ", index);
#endif
  // cortexm runs with the bias folded at lowering, as a lowered program holds it (not counted);
  // the reference takes the unfolded one.
  auto* folded = static_cast<int32_t*>(take(4 * int64_t{p.filter.n}));
  if (!folded) return fail("out of memory at layer ", index);
  quantized_conv2d_fold_bias(p, w, b, folded);
  Conv2dParams pf = p;
  pf.bias_includes_input_offset = true;
  return measure_cortexm(report, index,
                         [&] { quantized_conv2d(pf, x, w, folded, y.cortexm, d.scratch); },
                         [&](int8_t* out) { quantized_conv2d_reference(p, x, w, b, out); });
}

int run_depthwise(const int32_t* f, const ConvGeometry& g, const Dims4& input, int64_t index,
                  Report* report) {
  DepthwiseConv2dParams p;
  p.input = input;
  p.depth_multiplier = f[5] / f[4];
  p.filter = Dims4{1, f[6], f[7], f[5]};
  p.geometry = g;
  p.output = quantized_depthwise_conv2d_output_dims(p);
  p.quant = quant(f[5]);
  if (!quantized_depthwise_conv2d_prepare(p).ok()) return fail("invalid depthwise layer ", index);
  report->scratch = static_cast<int64_t>(quantized_depthwise_conv2d_scratch_size(p, kKernelIsa));
  Weighted d;
  if (take_weighted(p.input.elements(), p.filter.elements(), p.output.elements(), f[5], index,
                    report, &d) != 0)
    return 1;
  const int8_t *x = d.x, *w = d.w;
  const int32_t* b = d.b;
  const Outputs& y = report->y;
#if CORTEXM_BENCH_CMSIS_NN
  cmsis_nn_dw_conv_params cp{};
  set_window(p.quant, g, &cp);
  cp.ch_mult = p.depth_multiplier;
  cmsis_nn_per_channel_quant_params qp = per_channel(p.quant);
  const cmsis_nn_dims in = dims(p.input), filter = dims(p.filter), out = dims(p.output);
  const cmsis_nn_dims bias_dims{1, 1, 1, p.output.c};
  cmsis_nn_context ctx;
  report->cmsis_scratch = arm_depthwise_conv_wrapper_s8_get_buffer_size(&cp, &in, &filter, &out);
  if (cmsis_context(report->cmsis_scratch, index, &ctx) != 0) return 1;
  const arm_cmsis_nn_status status = measure_cmsis(report, [&] {
    return arm_depthwise_conv_wrapper_s8(&ctx, &cp, &qp, &in, x, &filter, w, &bias_dims, b, &out,
                                         y.cmsis);
  });
  if (status != ARM_CMSIS_NN_SUCCESS) return fail("CMSIS-NN rejected depthwise layer ", index);
#endif
  return measure_cortexm(
      report, index, [&] { quantized_depthwise_conv2d(p, x, w, b, y.cortexm, d.scratch); },
      [&](int8_t* out) { quantized_depthwise_conv2d_reference(p, x, w, b, out); });
}

// Per-tensor requantization (one multiplier), as arm_fully_connected_s8 takes it.
int run_linear(const int32_t* f, int64_t index, Report* report) {
  LinearParams p;
  p.batches = f[1];
  p.input_features = f[4];
  p.output_features = f[5];
  p.input_offset = kInputOffset;
  p.output_offset = kOutputOffset;
  const ConvQuantParams q = quant(1);
  p.multipliers = q.multipliers;
  p.shifts = q.shifts;
  if (!quantized_linear_prepare(p).ok()) return fail("invalid linear layer ", index);
  report->scratch = static_cast<int64_t>(quantized_linear_scratch_size(p, kKernelIsa));
  Weighted d;
  if (take_weighted(int64_t{p.batches} * p.input_features,
                    int64_t{p.input_features} * p.output_features,
                    int64_t{p.batches} * p.output_features, p.output_features, index, report,
                    &d) != 0)
    return 1;
  const int8_t *x = d.x, *w = d.w;
  const int32_t* b = d.b;
  const Outputs& y = report->y;
#if CORTEXM_BENCH_CMSIS_NN
  cmsis_nn_fc_params fp{};
  fp.input_offset = p.input_offset;
  fp.filter_offset = 0;
  fp.output_offset = p.output_offset;
  fp.activation = {p.activation_min, p.activation_max};
  cmsis_nn_per_tensor_quant_params qp{p.multipliers[0], p.shifts[0]};
  const cmsis_nn_dims in{p.batches, 1, 1, p.input_features};
  const cmsis_nn_dims filter{p.input_features, 1, 1, p.output_features};
  const cmsis_nn_dims bias_dims{1, 1, 1, p.output_features};
  const cmsis_nn_dims out{p.batches, 1, 1, p.output_features};
  cmsis_nn_context ctx;
  report->cmsis_scratch = arm_fully_connected_s8_get_buffer_size(&filter);
  if (cmsis_context(report->cmsis_scratch, index, &ctx) != 0) return 1;
  // The kernel sums (MVE: bias + input_offset * row sums) are computed once per model, at prepare
  // time in TFLite Micro: outside the counted region.
  if (ctx.buf != nullptr)
    arm_vector_sum_s8(static_cast<int32_t*>(ctx.buf), p.input_features, p.output_features, w,
                      p.input_offset, 0, b);
  const arm_cmsis_nn_status status = measure_cmsis(report, [&] {
    return arm_fully_connected_s8(&ctx, &fp, &qp, &in, x, &filter, w, &bias_dims, b, &out, y.cmsis);
  });
  if (status != ARM_CMSIS_NN_SUCCESS) return fail("CMSIS-NN rejected linear layer ", index);
#endif
  auto* folded = static_cast<int32_t*>(take(4 * int64_t{p.output_features}));
  if (!folded) return fail("out of memory at layer ", index);
  quantized_linear_fold_bias(p, w, b, folded);
  LinearParams pf = p;
  pf.bias_includes_input_offset = true;
  return measure_cortexm(report, index,
                         [&] { quantized_linear(pf, x, w, folded, y.cortexm, d.scratch); },
                         [&](int8_t* out) { quantized_linear_reference(p, x, w, b, out); });
}

int run_elementwise(const int32_t* f, const Dims4& input, int64_t index, Report* report) {
  const int64_t dims4[4] = {f[1], f[2], f[3], f[4]};
  const int64_t n = input.elements();
  auto* a = static_cast<int8_t*>(take(n));
  auto* b = static_cast<int8_t*>(take(n));
  const Outputs y = report->y = outputs(n);
  if (!a || !b || !y.cortexm || !y.cmsis) return fail("out of memory at layer ", index);
  fill(a, n);
  fill(b, n);
  if (f[0] == 3) {
    AddParams p;
    if (!make_broadcast_shape(dims4, 4, dims4, 4, &p.shape).ok()) return fail("invalid add layer ", index);
    p.lhs_offset = 5;
    p.rhs_offset = -9;
    p.lhs_multiplier = 1431655765;
    p.lhs_shift = -1;
    p.rhs_multiplier = 1073741824;
    p.rhs_shift = -1;
    p.output_multiplier = 1717986918;
    p.output_shift = -19;
    p.output_offset = 3;
    if (!quantized_add_prepare(p).ok()) return fail("invalid add layer ", index);
#if CORTEXM_BENCH_CMSIS_NN
    const arm_cmsis_nn_status status = measure_cmsis(report, [&] {
      return arm_elementwise_add_s8(a, b, p.lhs_offset, p.lhs_multiplier, p.lhs_shift, p.rhs_offset,
                                    p.rhs_multiplier, p.rhs_shift, kAddLeftShift, y.cmsis,
                                    p.output_offset, p.output_multiplier, p.output_shift,
                                    p.activation_min, p.activation_max, static_cast<int32_t>(n));
    });
    if (status != ARM_CMSIS_NN_SUCCESS) return fail("CMSIS-NN rejected add layer ", index);
#endif
    return measure_cortexm(report, index, [&] { quantized_add(p, a, b, y.cortexm); },
                           [&](int8_t* out) { quantized_add_reference(p, a, b, out); });
  } else {
    MulParams p;
    if (!make_broadcast_shape(dims4, 4, dims4, 4, &p.shape).ok()) return fail("invalid mul layer ", index);
    p.lhs_offset = 5;
    p.rhs_offset = -9;
    p.output_multiplier = 1288490189;
    p.output_shift = -8;
    p.output_offset = 3;
    if (!quantized_mul_prepare(p).ok()) return fail("invalid mul layer ", index);
#if CORTEXM_BENCH_CMSIS_NN
    const arm_cmsis_nn_status status = measure_cmsis(report, [&] {
      return arm_elementwise_mul_s8(a, b, p.lhs_offset, p.rhs_offset, y.cmsis, p.output_offset,
                                    p.output_multiplier, p.output_shift, p.activation_min,
                                    p.activation_max, static_cast<int32_t>(n));
    });
    if (status != ARM_CMSIS_NN_SUCCESS) return fail("CMSIS-NN rejected mul layer ", index);
#endif
    return measure_cortexm(report, index, [&] { quantized_mul(p, a, b, y.cortexm); },
                           [&](int8_t* out) { quantized_mul_reference(p, a, b, out); });
  }
}

int run_avgpool(const int32_t* f, const Dims4& input, int64_t index, Report* report) {
  Pool2dParams p;
  p.input = input;
  p.kernel_h = f[6];
  p.kernel_w = f[7];
  p.stride_h = f[8];
  p.stride_w = f[9];
  p.padding = Padding2d{f[10], f[11], f[12], f[13]};
  p.output = pool2d_output_dims(p);
  if (!quantized_avg_pool2d_prepare(p).ok()) return fail("invalid avgpool layer ", index);
  auto* x = static_cast<int8_t*>(take(p.input.elements()));
  const Outputs y = report->y = outputs(p.output.elements());
  report->scratch = static_cast<int64_t>(quantized_avg_pool2d_scratch_size(p, kKernelIsa));
  void* scratch = take(report->scratch);
  if (!x || !y.cortexm || !y.cmsis || !scratch) return fail("out of memory at layer ", index);
  fill(x, p.input.elements());
#if CORTEXM_BENCH_CMSIS_NN
  cmsis_nn_pool_params pp{};
  pp.stride = {p.stride_w, p.stride_h};
  pp.padding = {p.padding.left, p.padding.top};
  pp.activation = {p.activation_min, p.activation_max};
  const cmsis_nn_dims in = dims(p.input), out = dims(p.output);
  const cmsis_nn_dims filter{1, p.kernel_h, p.kernel_w, 1};
  cmsis_nn_context ctx;
  report->cmsis_scratch = arm_avgpool_s8_get_buffer_size(p.output.w, p.input.c);
  if (cmsis_context(report->cmsis_scratch, index, &ctx) != 0) return 1;
  const arm_cmsis_nn_status status = measure_cmsis(report, [&] {
    return arm_avgpool_s8(&ctx, &pp, &in, x, &filter, &out, y.cmsis);
  });
  if (status != ARM_CMSIS_NN_SUCCESS) return fail("CMSIS-NN rejected avgpool layer ", index);
#endif
  return measure_cortexm(report, index, [&] { quantized_avg_pool2d(p, x, y.cortexm, scratch); },
                         [&](int8_t* out) { quantized_avg_pool2d_reference(p, x, out); });
}

// Runs layer `index` and writes its report line; *mismatched is set when outputs differ.
int run_layer(const int32_t* f, int64_t index, bool* mismatched) {
  const int32_t kind = f[0];
  ConvGeometry g;
  g.stride_h = f[8];
  g.stride_w = f[9];
  g.padding = Padding2d{f[10], f[11], f[12], f[13]};
  g.dilation_h = g.dilation_w = f[15];
  const Dims4 input{f[1], f[2], f[3], f[4]};
  Report report;
  int rc = 0;
  if (kind == 0) {
    rc = run_conv(f, g, input, index, &report);
  } else if (kind == 1) {
    rc = run_depthwise(f, g, input, index, &report);
  } else if (kind == 2) {
    rc = run_linear(f, index, &report);
  } else if (kind == 3 || kind == 4) {
    rc = run_elementwise(f, input, index, &report);
  } else if (kind == 5) {
    rc = run_avgpool(f, input, index, &report);
  } else {
    return fail("unknown kind in layer ", index);
  }
  if (rc != 0) return rc;
  char line[200];
  char* at = append(line, "layer", index);
  at = append(at, "calls", report.calls);
  at = append(at, "scratch", report.scratch);
#if CORTEXM_BENCH_CMSIS_NN
  at = append(at, "cmsis_scratch", report.cmsis_scratch);
  at = append(at, "cmsis_fallback", report.cmsis_fallback);
  at = append(at, "mismatches", report.mismatches);
  at = append(at, "first", report.first);
  at = append(at, "cortexm_vs_reference", report.cortexm_vs_reference);
  at = append(at, "cmsis_vs_reference", report.cmsis_vs_reference);
#endif
  *mismatched = report.mismatches != 0;
  at[-1] = '\n';
  *at = '\0';
  sh_write0(line);
  return 0;
}

}  // namespace

int main() {
  char line[256] = {};
  if (sh_get_cmdline(line, sizeof line) != 0) return fail("no command line ", 0);
  char* path = std::strchr(line, ' ');
  if (!path) return fail("usage: layer_counts LAYERS [corrupt]; arguments: ", 0);
  ++path;
  if (char* option = std::strchr(path, ' ')) {
    *option++ = '\0';
    if (std::strcmp(option, "corrupt") != 0)
      return fail("usage: layer_counts LAYERS [corrupt]; arguments: ", 0);
    g_corrupt_cmsis = true;
  }
  const int handle = sh_open(path, SH_OPEN_READ_BINARY);
  if (handle < 0) return fail("cannot open the layer file; handle ", handle);
  const long bytes = sh_flen(handle);
  if (bytes <= 0 || bytes % (4 * kFields) != 0) return fail("bad layer file size ", bytes);
  auto* records = static_cast<int32_t*>(static_cast<void*>(__bulk_start));
  g_next = __bulk_start;
  take(bytes);
  if (sh_read(handle, records, static_cast<size_t>(bytes)) != 0) return fail("short read ", bytes);
  sh_close(handle);
  sh_write0(CORTEXM_BENCH_CMSIS_NN ? "layer_counts: cortexm and CMSIS-NN\n" : "layer_counts: cortexm\n");
  uint8_t* const data_start = g_next;
  bool any_mismatch = false;
  for (long i = 0; i < bytes / (4 * kFields); ++i) {
    g_next = data_start;  // each layer reuses the memory
    bool mismatched = false;
    const int rc = run_layer(records + i * kFields, i, &mismatched);
    if (rc != 0) return rc;
    any_mismatch = any_mismatch || mismatched;
  }
  return any_mismatch ? 2 : 0;
}
