// Runs layer shapes once each on a QEMU Cortex-M machine so that an instruction-count plugin can
// attribute executed instructions (not cycles) to every kernel call: cortexm_insn_marker() is
// entered right before and right after each call. bench/qemu_layer_counts.py drives it.
//
//   command line (-semihosting-config arg=...): layer_counts LAYERS
//
// LAYERS holds one record of 16 little-endian int32 per layer: kind (0 conv, 1 depthwise,
// 2 linear, 3 add, 4 mul of two N x H x W x C_in tensors), N, H, W, C_in, C_out, KH, KW, stride_h, stride_w, pad_top, pad_left, pad_bottom,
// pad_right, groups, dilation (both axes). Data are pseudo-random; outputs are not checked here
// (tests/target checks the variants). Exit code 0, or 1 for a bad file or a rejected layer.
#include <cstdint>
#include <cstring>

#include "cortexm/kernels/kernel_isa.h"
#include "cortexm/kernels/quantized_conv2d.h"
#include "cortexm/kernels/quantized_depthwise_conv2d.h"
#include "cortexm/kernels/quantized_add.h"
#include "cortexm/kernels/quantized_linear.h"
#include "cortexm/kernels/quantized_mul.h"
#include "semihosting.h"

extern "C" uint8_t __bulk_start[], __bulk_end[];

extern "C" __attribute__((noinline, used)) void cortexm_insn_marker(void) { __asm__ volatile(""); }

namespace {

using namespace cortexm;

constexpr int kFields = 16;

uint8_t* g_next;

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

ConvQuantParams quant(int32_t channels) {
  auto* m = static_cast<int32_t*>(take(4 * int64_t{channels}));
  auto* s = static_cast<int32_t*>(take(4 * int64_t{channels}));
  for (int32_t c = 0; m && s && c < channels; ++c) {
    m[c] = 1518500250 + c;
    s[c] = -9;
  }
  ConvQuantParams q;
  q.input_offset = 7;
  q.output_offset = -3;
  q.multipliers = m;
  q.shifts = s;
  return q;
}

int32_t* bias(int32_t channels) {
  auto* b = static_cast<int32_t*>(take(4 * int64_t{channels}));
  for (int32_t c = 0; b && c < channels; ++c) b[c] = 100 * c - 3000;
  return b;
}

int run_layer(const int32_t* f, int64_t index) {
  const int32_t kind = f[0];
  ConvGeometry g;
  g.stride_h = f[8];
  g.stride_w = f[9];
  g.padding = Padding2d{f[10], f[11], f[12], f[13]};
  g.dilation_h = g.dilation_w = f[15];
  const Dims4 input{f[1], f[2], f[3], f[4]};
  if (kind == 0) {
    Conv2dParams p;
    p.input = input;
    p.filter = Dims4{f[5], f[6], f[7], f[4] / f[14]};
    p.geometry = g;
    p.output = quantized_conv2d_output_dims(p);
    p.quant = quant(f[5]);
    auto* x = static_cast<int8_t*>(take(p.input.elements()));
    auto* w = static_cast<int8_t*>(take(p.filter.elements()));
    auto* y = static_cast<int8_t*>(take(p.output.elements()));
    const int32_t* b = bias(f[5]);
    void* scratch = take(static_cast<int64_t>(quantized_conv2d_scratch_size(p, kKernelIsa)));
    if (!x || !w || !y || !b || !scratch) return fail("out of memory at layer ", index);
    if (!quantized_conv2d_prepare(p).ok()) return fail("invalid conv layer ", index);
    fill(x, p.input.elements());
    fill(w, p.filter.elements());
    // The bias folded at lowering, as the lowered programs take it (not counted).
    int32_t* folded = static_cast<int32_t*>(take(4 * int64_t{p.filter.n}));
    if (!folded) return fail("out of memory at layer ", index);
    quantized_conv2d_fold_bias(p, w, b, folded);
    p.bias_includes_input_offset = true;
    cortexm_insn_marker();
    quantized_conv2d(p, x, w, folded, y, scratch);
    cortexm_insn_marker();
  } else if (kind == 1) {
    DepthwiseConv2dParams p;
    p.input = input;
    p.depth_multiplier = f[5] / f[4];
    p.filter = Dims4{1, f[6], f[7], f[5]};
    p.geometry = g;
    p.output = quantized_depthwise_conv2d_output_dims(p);
    p.quant = quant(f[5]);
    auto* x = static_cast<int8_t*>(take(p.input.elements()));
    auto* w = static_cast<int8_t*>(take(p.filter.elements()));
    auto* y = static_cast<int8_t*>(take(p.output.elements()));
    const int32_t* b = bias(f[5]);
    void* scratch = take(static_cast<int64_t>(quantized_depthwise_conv2d_scratch_size(p, kKernelIsa)));
    if (!x || !w || !y || !b || !scratch) return fail("out of memory at layer ", index);
    if (!quantized_depthwise_conv2d_prepare(p).ok()) return fail("invalid depthwise layer ", index);
    fill(x, p.input.elements());
    fill(w, p.filter.elements());
    cortexm_insn_marker();
    quantized_depthwise_conv2d(p, x, w, b, y, scratch);
    cortexm_insn_marker();
  } else if (kind == 2) {
    LinearParams p;
    p.batches = f[1];
    p.input_features = f[4];
    p.output_features = f[5];
    p.input_offset = 7;
    p.output_offset = -3;
    const ConvQuantParams q = quant(1);
    p.multipliers = q.multipliers;
    p.shifts = q.shifts;
    auto* x = static_cast<int8_t*>(take(int64_t{p.batches} * p.input_features));
    auto* w = static_cast<int8_t*>(take(int64_t{p.input_features} * p.output_features));
    auto* y = static_cast<int8_t*>(take(int64_t{p.batches} * p.output_features));
    const int32_t* b = bias(p.output_features);
    void* scratch = take(static_cast<int64_t>(quantized_linear_scratch_size(p, kKernelIsa)));
    if (!x || !w || !y || !b || !scratch) return fail("out of memory at layer ", index);
    if (!quantized_linear_prepare(p).ok()) return fail("invalid linear layer ", index);
    fill(x, int64_t{p.batches} * p.input_features);
    fill(w, int64_t{p.input_features} * p.output_features);
    int32_t* folded = static_cast<int32_t*>(take(4 * int64_t{p.output_features}));
    if (!folded) return fail("out of memory at layer ", index);
    quantized_linear_fold_bias(p, w, b, folded);
    p.bias_includes_input_offset = true;
    cortexm_insn_marker();
    quantized_linear(p, x, w, folded, y, scratch);
    cortexm_insn_marker();
  } else if (kind == 3 || kind == 4) {
    const int64_t dims[4] = {f[1], f[2], f[3], f[4]};
    const int64_t n = input.elements();
    auto* a = static_cast<int8_t*>(take(n));
    auto* b = static_cast<int8_t*>(take(n));
    auto* y = static_cast<int8_t*>(take(n));
    if (!a || !b || !y) return fail("out of memory at layer ", index);
    fill(a, n);
    fill(b, n);
    if (kind == 3) {
      AddParams p;
      if (!make_broadcast_shape(dims, 4, dims, 4, &p.shape).ok()) return fail("invalid add layer ", index);
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
      cortexm_insn_marker();
      quantized_add(p, a, b, y);
      cortexm_insn_marker();
    } else {
      MulParams p;
      if (!make_broadcast_shape(dims, 4, dims, 4, &p.shape).ok()) return fail("invalid mul layer ", index);
      p.lhs_offset = 5;
      p.rhs_offset = -9;
      p.output_multiplier = 1288490189;
      p.output_shift = -8;
      p.output_offset = 3;
      if (!quantized_mul_prepare(p).ok()) return fail("invalid mul layer ", index);
      cortexm_insn_marker();
      quantized_mul(p, a, b, y);
      cortexm_insn_marker();
    }
  } else {
    return fail("unknown kind in layer ", index);
  }
  return 0;
}

}  // namespace

int main() {
  char line[256] = {};
  if (sh_get_cmdline(line, sizeof line) != 0) return fail("no command line ", 0);
  char* path = std::strchr(line, ' ');
  if (!path) return fail("usage: layer_counts LAYERS; arguments: ", 0);
  ++path;
  const int handle = sh_open(path, SH_OPEN_READ_BINARY);
  if (handle < 0) return fail("cannot open the layer file; handle ", handle);
  const long bytes = sh_flen(handle);
  if (bytes <= 0 || bytes % (4 * kFields) != 0) return fail("bad layer file size ", bytes);
  auto* records = static_cast<int32_t*>(static_cast<void*>(__bulk_start));
  g_next = __bulk_start;
  take(bytes);
  if (sh_read(handle, records, static_cast<size_t>(bytes)) != 0) return fail("short read ", bytes);
  sh_close(handle);
  uint8_t* const data_start = g_next;
  for (long i = 0; i < bytes / (4 * kFields); ++i) {
    g_next = data_start;  // each layer reuses the memory
    const int rc = run_layer(records + i * kFields, i);
    if (rc != 0) return rc;
  }
  return 0;
}
