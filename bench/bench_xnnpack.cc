// The peer: XNNPACK's qs8 operators through its operator API (create, setup, xnn_run_operator),
// with no thread pool, i.e. single-threaded on the calling thread.
#include <stdexcept>
#include <string>

#include "bench_layer.h"

#if CORTEXM_BENCH_HAVE_XNNPACK
#include <xnnpack.h>
#endif

namespace cortexm_bench {

#if CORTEXM_BENCH_HAVE_XNNPACK

namespace {

void check(xnn_status status, const char* call) {
  if (status != xnn_status_success)
    throw std::runtime_error(std::string(call) + " failed with xnn_status " +
                             std::to_string(static_cast<int>(status)));
}

class XnnpackRunner : public Runner {
 public:
  explicit XnnpackRunner(std::shared_ptr<const LayerData> data) : d_(std::move(data)) {
    const LayerShape& s = d_->shape;
    output_.assign(static_cast<size_t>(s.output_elements()), 0);
    if (s.kind == LayerKind::kLinear) {
      // Per-tensor weights: this API's fully-connected qs8 operator has no per-channel variant.
      check(xnn_create_fully_connected_nc_qs8(
                s.c_in, s.c_out, s.c_in, s.c_out, d_->input_zero_point, d_->input_scale,
                d_->kernel_scales[0], d_->weights.data(), d_->bias.data(),
                d_->output_zero_point, d_->output_scale, -128, 127, 0, &op_),
            "xnn_create_fully_connected_nc_qs8");
      check(xnn_setup_fully_connected_nc_qs8(op_, s.n, d_->input.data(), output_.data(), nullptr),
            "xnn_setup_fully_connected_nc_qs8");
    } else {
      // Per-channel (qc8) weights. Depthwise uses the HWGo filter layout, [1, KH, KW, C_out].
      const bool depthwise = s.kind == LayerKind::kDepthwise;
      const uint32_t groups = depthwise ? s.c_in : s.groups;
      check(xnn_create_convolution2d_nhwc_qc8(
                s.pad_top, s.pad_right, s.pad_bottom, s.pad_left, s.kh, s.kw, s.stride_h,
                s.stride_w, s.dilation_h, s.dilation_w, groups, s.c_in / groups,
                s.c_out / groups, s.c_in, s.c_out, d_->input_zero_point, d_->input_scale,
                d_->kernel_scales.data(), d_->weights.data(), d_->bias.data(),
                d_->output_zero_point, d_->output_scale, -128, 127,
                depthwise ? XNN_FLAG_DEPTHWISE_CONVOLUTION : 0, &op_),
            "xnn_create_convolution2d_nhwc_qc8");
      check(xnn_setup_convolution2d_nhwc_qc8(op_, s.n, s.h, s.w, d_->input.data(),
                                             output_.data(), nullptr),
            "xnn_setup_convolution2d_nhwc_qc8");
    }
    check(xnn_run_operator(op_, nullptr), "xnn_run_operator");
  }
  ~XnnpackRunner() override {
    if (op_ != nullptr) xnn_delete_operator(op_);
  }
  void run() override { xnn_run_operator(op_, nullptr); }

 private:
  std::shared_ptr<const LayerData> d_;
  xnn_operator_t op_ = nullptr;
};

}  // namespace

bool xnnpack_init(std::string* why_not) {
  const xnn_status status = xnn_initialize(nullptr);
  if (status == xnn_status_success) return true;
  *why_not = "xnn_initialize failed with xnn_status " + std::to_string(static_cast<int>(status));
  return false;
}

std::unique_ptr<Runner> make_xnnpack_runner(std::shared_ptr<const LayerData> data) {
  return std::make_unique<XnnpackRunner>(std::move(data));
}

#else  // !CORTEXM_BENCH_HAVE_XNNPACK

bool xnnpack_init(std::string* why_not) {
  *why_not = "kernel_bench was built without XNNPACK";
  return false;
}

std::unique_ptr<Runner> make_xnnpack_runner(std::shared_ptr<const LayerData>) { return nullptr; }

#endif

}  // namespace cortexm_bench
