#include "graph/op_schema.h"

#include "graph/errors.h"

namespace cortexm {

const AttrValue& OpArgs::attr(const std::string& name) const {
  for (const auto& [key, value] : attrs_)
    if (key == name) return value;
  fail("has no attribute '" + name + "'");
}

namespace {

template <typename T>
const T& get_as(const OpArgs& args, const std::string& name, const char* kind) {
  const AttrValue& v = args.attr(name);
  if (const T* p = std::get_if<T>(&v)) return *p;
  args.fail("attribute '" + name + "' = " + attr_to_string(v) + " is not " + kind);
}

}  // namespace

int64_t OpArgs::i(const std::string& name) const { return get_as<int64_t>(*this, name, "an int"); }
double OpArgs::f(const std::string& name) const { return get_as<double>(*this, name, "a float"); }
bool OpArgs::b(const std::string& name) const { return get_as<bool>(*this, name, "a bool"); }
const std::string& OpArgs::s(const std::string& name) const {
  return get_as<std::string>(*this, name, "a string");
}
const std::vector<int64_t>& OpArgs::ints(const std::string& name) const {
  return get_as<std::vector<int64_t>>(*this, name, "an int list");
}
const std::vector<double>& OpArgs::floats(const std::string& name) const {
  return get_as<std::vector<double>>(*this, name, "a float list");
}
DType OpArgs::dtype(const std::string& name) const { return get_as<DType>(*this, name, "a dtype"); }

void OpArgs::fail(const std::string& message) const {
  throw GraphError("node '" + node_ + "' (" + op_ + "): " + message);
}

const TensorInfo& InferContext::input(size_t i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is missing");
  return *inputs[i];
}

bool OpSchema::has_attr(const std::string& attr) const {
  for (const AttrSpec& a : attrs)
    if (a.name == attr) return true;
  return false;
}

size_t OpSchema::planned_scratch(const NodeContext& node, Isa isa) const {
  return scratch ? scratch(node, isa) : 0;
}

bool OpSchema::has_activation_range() const {
  return has_attr("activation_min") && has_attr("activation_max");
}

void OpRegistry::add(OpSchema schema) {
  if (schemas_.count(schema.name)) throw GraphError("op '" + schema.name + "' registered twice");
  std::string name = schema.name;
  schemas_.emplace(std::move(name), std::move(schema));
}

const OpSchema* OpRegistry::find(const std::string& name) const {
  auto it = schemas_.find(name);
  return it == schemas_.end() ? nullptr : &it->second;
}

const OpSchema& OpRegistry::get(const std::string& name) const {
  if (const OpSchema* s = find(name)) return *s;
  throw UnsupportedError("unknown op '" + name + "': cortexm has no schema for it");
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, schema] : schemas_) out.push_back(name);
  return out;
}

}  // namespace cortexm
