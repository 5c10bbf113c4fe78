#include "graph/dtype.h"

#include "graph/errors.h"

namespace cortexm {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kInt8: return 1;
    case DType::kUInt8: return 1;
    case DType::kInt16: return 2;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kBool: return 1;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kInt8: return "int8";
    case DType::kUInt8: return "uint8";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
  }
  return "?";
}

DType parse_dtype(const std::string& raw) {
  std::string name = raw.rfind("torch.", 0) == 0 ? raw.substr(6) : raw;
  if (name == "float32" || name == "float") return DType::kFloat32;
  if (name == "int8" || name == "char") return DType::kInt8;
  if (name == "uint8" || name == "byte") return DType::kUInt8;
  if (name == "int16" || name == "short") return DType::kInt16;
  if (name == "int32" || name == "int") return DType::kInt32;
  if (name == "int64" || name == "long") return DType::kInt64;
  if (name == "bool") return DType::kBool;
  throw GraphError("unknown dtype '" + raw +
                   "' (expected float32, int8, uint8, int16, int32, int64 or bool)");
}

bool is_integer(DType dtype) { return dtype != DType::kFloat32 && dtype != DType::kBool; }

}  // namespace cortexm
