// Element types of graph values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cortexm {

enum class DType : uint8_t { kFloat32 = 0, kInt8, kInt16, kInt32, kInt64, kBool, kUInt8 };

size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);  // "float32", "int8", ...
// Accepts the names above and torch's ("torch.float32", "float", "char", ...); throws GraphError.
DType parse_dtype(const std::string& name);
bool is_integer(DType dtype);

}  // namespace cortexm
