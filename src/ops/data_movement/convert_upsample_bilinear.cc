// ConvertToCortexM, aten.upsample_bilinear2d.default reading int8 / int16 ->
// cortex_m.quantized_upsample_bilinear2d: TFLite Micro's RESIZE_BILINEAR (10-bit source
// coordinates, half_pixel_centers = !align_corners) with the output at the input's qparams (the
// quantizer's passthrough pattern). TFLite steps by in / out: a scale whose 1 / scale torch steps
// by instead (out != in * scale) stays float. A channels-last input is made contiguous first.
#include "cortexm/portable/upsample_bilinear2d.h"
#include "core/error_message.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

void convert_upsample_bilinear(Graph& graph, NodeId id, const TargetConfig&) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  QuantParams q_out;
  const ValueId source = contiguous_passthrough_input(rw, &q_out);
  const TensorInfo in = graph.value(node.inputs[0]).info;  // a copy: the rewrite's new values may move the graph's
  const OpArgs args(node.op, node.name, node.attrs);
  const std::vector<int64_t> output_size = args.ints("output_size");
  const bool align_corners = args.b("align_corners");
  portable::UpsampleBilinear2dParams p;
  const int64_t dims[4] = {in.shape[0], in.shape[1], in.shape[2], in.shape[3]};
  if (!portable::make_shape(dims, 4, &p.input, "self").ok()) not_lowered("its input shape has no portable form");
  p.out_h = output_size[0];
  p.out_w = output_size[1];
  p.align_corners = align_corners;
  const Error error = portable::upsample_bilinear2d_prepare(p, true);
  if (!error.ok()) not_lowered("TFLite's integer kernel refuses it: " + error_message("upsample_bilinear2d", error));
  // TFLite steps by in / out; torch's half-pixel coordinate by 1 / scale when a scale is given.
  const std::vector<double>& scales = args.floats("scales");
  for (size_t d = 0; d < scales.size() && !align_corners; ++d) {
    const int64_t n_in = in.shape[d + 2], n_out = output_size[d];
    const float by_scale = portable::upsample_bilinear2d_step(n_in, n_out, false, scales[d]);
    const float by_size = portable::upsample_bilinear2d_step(n_in, n_out, false, 0.0);
    if (n_in != n_out && by_scale != by_size)
      not_lowered("torch steps by 1 / scale_factor = " + std::to_string(by_scale) + " along dim " +
                  std::to_string(d + 2) + ", TFLite's RESIZE_BILINEAR by in / out = " + std::to_string(by_size));
  }
  const Attrs attrs = {{"output_size", output_size}, {"align_corners", align_corners}};
  const ValueId y = rw.call("cortex_m.quantized_upsample_bilinear2d.default", {source}, attrs, true);
  rw.set_qparams(y, q_out);
  rw.commit(y);
}

}  // namespace

CORTEXM_CONVERTER(upsample_bilinear) {
  static const Converter converter{{"aten.upsample_bilinear2d.default"}, convert_upsample_bilinear};
  return converter;
}

}  // namespace cortexm::convert
