#include "bench_layer.h"

#include <cmath>
#include <random>
#include <stdexcept>

#include "core/error_message.h"
#include "cortexm/kernels/host_variant.h"
#include "cortexm/kernels/quantized_conv2d.h"
#include "cortexm/kernels/quantized_depthwise_conv2d.h"
#include "cortexm/kernels/quantized_linear.h"
#include "cortexm/kernels/requantize.h"

namespace cortexm_bench {

namespace {

// The host build's kernels are the portable (scalar C++) variants.
constexpr cortexm::Isa kHostIsa = cortexm::Isa::kScalar;

std::vector<int8_t> random_int8s(std::mt19937& rng, int64_t count, int lo, int hi) {
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<int8_t> v(static_cast<size_t>(count) + kTensorSlack, 0);
  for (int64_t i = 0; i < count; ++i) v[i] = static_cast<int8_t>(dist(rng));
  return v;
}

void check(const cortexm::Error& error, const char* op) {
  if (!error.ok()) throw std::runtime_error(cortexm::error_message(op, error));
}

std::unique_ptr<int8_t[]> make_scratch(size_t bytes) {
  return bytes == 0 ? nullptr : std::unique_ptr<int8_t[]>(new int8_t[bytes]);
}

// The weights packed for the host's kernels as a program's load packs them: `bytes` of `storage`,
// 64-byte aligned, written by pack(at); null when the kernel packs none.
template <typename Pack>
const void* host_packed(std::vector<uint8_t>& storage, size_t bytes, Pack pack) {
  if (bytes == 0) return nullptr;
  storage.assign(bytes + 63, 0);
  void* at = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
  pack(at);
  return at;
}

cortexm::ConvGeometry geometry_of(const LayerShape& s) {
  cortexm::ConvGeometry g;
  g.stride_h = s.stride_h, g.stride_w = s.stride_w;
  g.dilation_h = s.dilation_h, g.dilation_w = s.dilation_w;
  g.padding = {s.pad_top, s.pad_left, s.pad_bottom, s.pad_right};
  return g;
}

cortexm::ConvQuantParams quant_of(const LayerData& d) {
  cortexm::ConvQuantParams q;
  q.input_offset = -d.input_zero_point;
  q.output_offset = d.output_zero_point;
  q.multipliers = d.multipliers.data();
  q.shifts = d.shifts.data();
  return q;
}

class CortexmConv : public Runner {
 public:
  explicit CortexmConv(std::shared_ptr<const LayerData> data) : d_(std::move(data)) {
    const LayerShape& s = d_->shape;
    p_.input = {s.n, s.h, s.w, s.c_in};
    p_.filter = {s.c_out, s.kh, s.kw, s.c_in / s.groups};
    p_.geometry = geometry_of(s);
    p_.quant = quant_of(*d_);
    p_.host_variant = cortexm::host_variant();  // packed for and timed on this one
    p_.output = cortexm::quantized_conv2d_output_dims(p_);
    check(cortexm::quantized_conv2d_prepare(p_), "quantized_conv2d");
    scratch_ = make_scratch(cortexm::quantized_conv2d_scratch_size(p_, kHostIsa));
    output_.assign(static_cast<size_t>(p_.output.elements()), 0);
    p_.host_packed = host_packed(packed_, cortexm::quantized_conv2d_host_packed_size(p_), [this](void* at) {
      cortexm::quantized_conv2d_host_pack(p_, d_->weights.data(), d_->bias.data(), at);
    });
  }
  void run() override {
    cortexm::quantized_conv2d(p_, d_->input.data(), d_->weights.data(), d_->bias.data(),
                              output_.data(), scratch_.get());
  }

 private:
  std::shared_ptr<const LayerData> d_;
  cortexm::Conv2dParams p_;
  std::unique_ptr<int8_t[]> scratch_;
  std::vector<uint8_t> packed_;
};

class CortexmDepthwise : public Runner {
 public:
  explicit CortexmDepthwise(std::shared_ptr<const LayerData> data) : d_(std::move(data)) {
    const LayerShape& s = d_->shape;
    p_.input = {s.n, s.h, s.w, s.c_in};
    p_.filter = {1, s.kh, s.kw, s.c_out};
    p_.depth_multiplier = s.c_out / s.c_in;
    p_.geometry = geometry_of(s);
    p_.quant = quant_of(*d_);
    p_.host_variant = cortexm::host_variant();
    p_.output = cortexm::quantized_depthwise_conv2d_output_dims(p_);
    check(cortexm::quantized_depthwise_conv2d_prepare(p_), "quantized_depthwise_conv2d");
    scratch_ = make_scratch(cortexm::quantized_depthwise_conv2d_scratch_size(p_, kHostIsa));
    output_.assign(static_cast<size_t>(p_.output.elements()), 0);
  }
  void run() override {
    cortexm::quantized_depthwise_conv2d(p_, d_->input.data(), d_->weights.data(),
                                        d_->bias.data(), output_.data(), scratch_.get());
  }

 private:
  std::shared_ptr<const LayerData> d_;
  cortexm::DepthwiseConv2dParams p_;
  std::unique_ptr<int8_t[]> scratch_;
};

class CortexmLinear : public Runner {
 public:
  explicit CortexmLinear(std::shared_ptr<const LayerData> data) : d_(std::move(data)) {
    const LayerShape& s = d_->shape;
    p_.batches = s.n;
    p_.input_features = s.c_in;
    p_.output_features = s.c_out;
    p_.input_offset = -d_->input_zero_point;
    p_.filter_offset = 0;
    p_.output_offset = d_->output_zero_point;
    p_.multipliers = d_->multipliers.data();
    p_.shifts = d_->shifts.data();
    p_.num_multipliers = static_cast<int32_t>(d_->multipliers.size());
    p_.host_variant = cortexm::host_variant();  // packed for and timed on this one
    check(cortexm::quantized_linear_prepare(p_), "quantized_linear");
    scratch_ = make_scratch(cortexm::quantized_linear_scratch_size(p_, kHostIsa));
    output_.assign(static_cast<size_t>(s.n) * s.c_out, 0);
    p_.host_packed = host_packed(packed_, cortexm::quantized_linear_host_packed_size(p_), [this](void* at) {
      cortexm::quantized_linear_host_pack(p_, d_->weights.data(), d_->bias.data(), at);
    });
  }
  void run() override {
    cortexm::quantized_linear(p_, d_->input.data(), d_->weights.data(), d_->bias.data(),
                              output_.data(), scratch_.get());
  }

 private:
  std::shared_ptr<const LayerData> d_;
  cortexm::LinearParams p_;
  std::unique_ptr<int8_t[]> scratch_;
  std::vector<uint8_t> packed_;
};

}  // namespace

std::shared_ptr<const LayerData> make_layer_data(const LayerShape& s, uint32_t seed) {
  auto d = std::make_shared<LayerData>();
  d->shape = s;
  std::mt19937 rng(seed);
  int64_t weight_count = 0, depth = 0;  // depth: taps summed into one output
  switch (s.kind) {
    case LayerKind::kConv:
      depth = int64_t{s.kh} * s.kw * (s.c_in / s.groups);
      weight_count = depth * s.c_out;
      break;
    case LayerKind::kDepthwise:
      depth = int64_t{s.kh} * s.kw;
      weight_count = depth * s.c_out;
      break;
    case LayerKind::kLinear:
      depth = s.c_in;
      weight_count = depth * s.c_out;
      break;
  }
  d->input = random_int8s(rng, int64_t{s.n} * s.h * s.w * s.c_in, -128, 127);
  d->weights = random_int8s(rng, weight_count, -127, 127);
  d->input_zero_point = -3;
  d->output_zero_point = 5;
  d->input_scale = 0.05f;
  // Uniform int8 has a standard deviation of ~74, so an accumulator's is ~74 * 74 * sqrt(depth).
  // Scale the output so that it spreads over about +-32 (a few saturate, most do not).
  const float kernel_scale = 0.004f;
  const double acc_std = 74.0 * 74.0 * std::sqrt(static_cast<double>(depth));
  d->output_scale = static_cast<float>(d->input_scale * kernel_scale * acc_std / 32.0);
  const int32_t scales = s.kind == LayerKind::kLinear ? 1 : s.c_out;
  std::uniform_real_distribution<float> spread(0.75f, 1.25f);
  const int32_t bias_range = static_cast<int32_t>(acc_std / 4);
  std::uniform_int_distribution<int32_t> bias(-bias_range, bias_range);
  d->bias.resize(s.c_out);
  for (auto& b : d->bias) b = bias(rng);
  for (int32_t c = 0; c < scales; ++c) {
    const float k = kernel_scale * spread(rng);
    d->kernel_scales.push_back(k);
    const float requant = d->input_scale * k / d->output_scale;  // XNNPACK's float arithmetic
    const cortexm::QuantizedMultiplier q = cortexm::quantize_multiplier(requant);
    d->multipliers.push_back(q.multiplier);
    d->shifts.push_back(q.shift);
  }
  return d;
}

std::unique_ptr<Runner> make_cortexm_runner(std::shared_ptr<const LayerData> data) {
  switch (data->shape.kind) {
    case LayerKind::kConv: return std::make_unique<CortexmConv>(std::move(data));
    case LayerKind::kDepthwise: return std::make_unique<CortexmDepthwise>(std::move(data));
    case LayerKind::kLinear: return std::make_unique<CortexmLinear>(std::move(data));
  }
  return nullptr;
}

}  // namespace cortexm_bench
