#include "graph/attr.h"

#include <sstream>

namespace cortexm {

const char* attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return "int";
    case AttrKind::kFloat: return "float";
    case AttrKind::kBool: return "bool";
    case AttrKind::kString: return "string";
    case AttrKind::kInts: return "int list";
    case AttrKind::kFloats: return "float list";
    case AttrKind::kDType: return "dtype";
  }
  return "?";
}

bool attr_is_none(const AttrValue& value) { return std::holds_alternative<NoneAttr>(value); }

std::string attr_to_string(const AttrValue& value) {
  std::ostringstream os;
  struct Printer {
    std::ostringstream& os;
    void operator()(const NoneAttr&) { os << "None"; }
    void operator()(int64_t v) { os << v; }
    void operator()(double v) { os << v; }
    void operator()(bool v) { os << (v ? "True" : "False"); }
    void operator()(const std::string& v) { os << '\'' << v << '\''; }
    void operator()(const std::vector<int64_t>& v) {
      os << '[';
      for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
      os << ']';
    }
    void operator()(const std::vector<double>& v) {
      os << '[';
      for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
      os << ']';
    }
    void operator()(DType v) { os << dtype_name(v); }
  };
  std::visit(Printer{os}, value);
  return os.str();
}

}  // namespace cortexm
