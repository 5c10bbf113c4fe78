// Typed node attributes: int, float, bool, string, int list, float list, dtype, or None.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "graph/dtype.h"

namespace cortexm {

struct NoneAttr {
  bool operator==(const NoneAttr&) const { return true; }
};

using AttrValue = std::variant<NoneAttr, int64_t, double, bool, std::string, std::vector<int64_t>,
                               std::vector<double>, DType>;

enum class AttrKind : uint8_t { kInt, kFloat, kBool, kString, kInts, kFloats, kDType };

// Attributes of one node, in the order its schema declares them.
using Attrs = std::vector<std::pair<std::string, AttrValue>>;

const char* attr_kind_name(AttrKind kind);
std::string attr_to_string(const AttrValue& value);
bool attr_is_none(const AttrValue& value);

}  // namespace cortexm
