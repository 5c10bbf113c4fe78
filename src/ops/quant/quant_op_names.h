// The quant family's op names, for the generic passes that insert or match quantize / dequantize
// nodes (the quantizer's quantized_decomposed ops and the cortex_m ops a program runs).
#pragma once

namespace cortexm {

constexpr const char* kQuantize = "quantized_decomposed.quantize_per_tensor.default";
constexpr const char* kDequantize = "quantized_decomposed.dequantize_per_tensor.default";
constexpr const char* kDequantizePerChannel = "quantized_decomposed.dequantize_per_channel.default";
constexpr const char* kCortexMQuantize = "cortex_m.quantize_per_tensor.default";
constexpr const char* kCortexMDequantize = "cortex_m.dequantize_per_tensor.default";

}  // namespace cortexm
