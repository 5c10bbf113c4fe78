#include "graph/graph.h"

#include <algorithm>
#include <iomanip>
#include <set>
#include <sstream>

#include "graph/errors.h"
#include "graph/quantized_form.h"

namespace cortexm {

namespace {

std::string short_op_name(const std::string& op) {
  // "aten.convolution.default" -> "convolution"; "cortex_m.quantized_conv2d.default" -> ...
  const size_t first = op.find('.');
  if (first == std::string::npos) return op;
  const size_t second = op.find('.', first + 1);
  return op.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1);
}

bool kind_accepts(AttrKind kind, AttrValue& value) {
  switch (kind) {
    case AttrKind::kInt:
      if (auto* b = std::get_if<bool>(&value)) { value = int64_t{*b}; return true; }
      return std::holds_alternative<int64_t>(value);
    case AttrKind::kFloat:
      if (auto* i = std::get_if<int64_t>(&value)) { value = static_cast<double>(*i); return true; }
      return std::holds_alternative<double>(value);
    case AttrKind::kBool:
      return std::holds_alternative<bool>(value);
    case AttrKind::kString:
      return std::holds_alternative<std::string>(value);
    case AttrKind::kInts:
      if (auto* i = std::get_if<int64_t>(&value)) { value = std::vector<int64_t>{*i}; return true; }
      return std::holds_alternative<std::vector<int64_t>>(value);
    case AttrKind::kFloats:
      if (auto* l = std::get_if<std::vector<int64_t>>(&value)) {
        value = std::vector<double>(l->begin(), l->end());
        return true;
      }
      if (auto* d = std::get_if<double>(&value)) { value = std::vector<double>{*d}; return true; }
      return std::holds_alternative<std::vector<double>>(value);
    case AttrKind::kDType:
      if (auto* s = std::get_if<std::string>(&value)) { value = parse_dtype(*s); return true; }
      return std::holds_alternative<DType>(value);
  }
  return false;
}

}  // namespace

// A dim_order is empty (contiguous) or a permutation of the value's dims.
void check_dim_order(const std::string& what, const TensorInfo& info) {
  if (info.dim_order.empty()) return;
  std::vector<int64_t> sorted = info.dim_order;
  std::sort(sorted.begin(), sorted.end());
  bool ok = sorted.size() == info.shape.size();
  for (size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == static_cast<int64_t>(i);
  if (!ok)
    throw GraphError(what + " dim_order " + shape_to_string(info.dim_order) +
                     " is not a permutation of its " + std::to_string(info.shape.size()) + " dims");
}

Attrs normalize_attrs(const OpSchema& schema, const std::string& node_name, Attrs attrs) {
  auto fail = [&](const std::string& msg) {
    throw GraphError("node '" + node_name + "' (" + schema.name + "): " + msg);
  };
  for (const auto& [key, value] : attrs) {
    bool known = false;
    for (const auto& spec : schema.attrs) known = known || spec.name == key;
    if (!known) {
      std::string allowed;
      for (const auto& spec : schema.attrs) allowed += (allowed.empty() ? "" : ", ") + spec.name;
      fail("unknown attribute '" + key + "' (expected " + (allowed.empty() ? "none" : allowed) + ")");
    }
  }
  Attrs out;
  for (const auto& spec : schema.attrs) {
    auto it = std::find_if(attrs.begin(), attrs.end(), [&](auto& kv) { return kv.first == spec.name; });
    if (std::count_if(attrs.begin(), attrs.end(), [&](auto& kv) { return kv.first == spec.name; }) > 1)
      fail("attribute '" + spec.name + "' given twice");
    AttrValue value;
    if (it != attrs.end()) {
      value = it->second;
    } else if (spec.default_value) {
      value = *spec.default_value;
    } else {
      fail("missing attribute '" + spec.name + "' (" + attr_kind_name(spec.kind) + ")");
    }
    if (attr_is_none(value)) {
      if (!spec.nullable) fail("attribute '" + spec.name + "' must not be None");
    } else {
      AttrValue converted = value;
      bool ok = false;
      try {
        ok = kind_accepts(spec.kind, converted);
      } catch (const GraphError& e) {
        fail("attribute '" + spec.name + "': " + e.what());
      }
      if (!ok)
        fail("attribute '" + spec.name + "' = " + attr_to_string(value) + " must be " +
             attr_kind_name(spec.kind));
      value = converted;
    }
    out.emplace_back(spec.name, std::move(value));
  }
  return out;
}

std::string Graph::unique_name(const std::string& base) {
  std::string name = base.empty() ? "v" : base;
  if (!names_.count(name)) return name;
  int64_t& n = name_counts_[name];
  std::string candidate;
  do {
    candidate = name + "_" + std::to_string(++n);
  } while (names_.count(candidate));
  return candidate;
}

void Graph::check_value(ValueId id, const char* what) const {
  if (id < 0 || static_cast<size_t>(id) >= values_.size() || !values_[id].alive)
    throw GraphError(std::string(what) + ": value id " + std::to_string(id) + " does not exist");
}

ValueId Graph::add_input(const std::string& name, TensorInfo info) {
  Value v;
  v.id = static_cast<ValueId>(values_.size());
  v.name = unique_name(name.empty() ? "input" : name);
  v.kind = ValueKind::kInput;
  v.info = std::move(info);
  for (int64_t d : v.info.shape)
    if (d < 0) throw GraphError("input '" + v.name + "' has a negative dim " + shape_to_string(v.info.shape));
  check_dim_order("input '" + v.name + "'", v.info);
  names_[v.name] = v.id;
  values_.push_back(std::move(v));
  inputs_.push_back(values_.back().id);
  return values_.back().id;
}

ValueId Graph::add_constant(const std::string& name, Tensor data) {
  if (!data.defined()) throw GraphError("constant '" + name + "' has no data");
  Value v;
  v.id = static_cast<ValueId>(values_.size());
  v.name = unique_name(name.empty() ? "const" : name);
  v.kind = ValueKind::kConstant;
  v.info = data.info();
  check_dim_order("constant '" + v.name + "'", v.info);
  v.data = std::move(data);
  names_[v.name] = v.id;
  values_.push_back(std::move(v));
  return values_.back().id;
}

std::vector<ValueId> Graph::call(const std::string& op, std::vector<ValueId> inputs, Attrs attrs,
                                 NodeId before, const std::string& name,
                                 const std::string& source) {
  const OpSchema& schema = OpRegistry::global().get(op);
  const std::string node_name = unique_name(name.empty() ? short_op_name(op) : name);
  auto fail = [&](const std::string& msg) {
    throw GraphError("node '" + node_name + "' (" + op + "): " + msg);
  };
  // Arity.
  const bool variadic = !schema.inputs.empty() && schema.inputs.back().variadic;
  size_t required = 0;
  for (const auto& spec : schema.inputs) required += spec.optional ? 0 : 1;
  if (inputs.size() < required || (!variadic && inputs.size() > schema.inputs.size())) {
    std::string names;
    for (const auto& spec : schema.inputs)
      names += (names.empty() ? "" : ", ") + spec.name + (spec.optional ? "?" : "") +
               (spec.variadic ? "..." : "");
    fail("got " + std::to_string(inputs.size()) + " inputs, expected (" + names + ")");
  }
  std::vector<const TensorInfo*> infos;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputSpec& spec = schema.inputs[std::min(i, schema.inputs.size() - 1)];
    if (inputs[i] == kNoValue) {
      if (!spec.optional) fail("input '" + spec.name + "' is required");
      infos.push_back(nullptr);
      continue;
    }
    if (inputs[i] < 0 || static_cast<size_t>(inputs[i]) >= values_.size() || !values_[inputs[i]].alive)
      fail("input '" + spec.name + "' refers to value id " + std::to_string(inputs[i]) +
           ", which does not exist");
    infos.push_back(&values_[inputs[i]].info);
  }
  Attrs normalized = normalize_attrs(schema, node_name, std::move(attrs));
  std::vector<TensorInfo> out_infos = infer_node(schema, InferContext(op, node_name, normalized, infos), {});

  // Insert.
  Node node;
  node.id = static_cast<NodeId>(nodes_.size());
  node.op = op;
  node.name = node_name;
  node.inputs = std::move(inputs);
  node.attrs = std::move(normalized);
  node.source = source;
  names_[node_name] = kNoValue;
  for (size_t k = 0; k < out_infos.size(); ++k) {
    Value v;
    v.id = static_cast<ValueId>(values_.size());
    v.name = out_infos.size() == 1 ? node_name : unique_name(node_name + "_" + std::to_string(k));
    v.info = std::move(out_infos[k]);
    v.kind = ValueKind::kNodeOutput;
    v.producer = node.id;
    v.output_index = static_cast<int32_t>(k);
    names_[v.name] = v.id;
    node.outputs.push_back(v.id);
    values_.push_back(std::move(v));
  }
  if (before == kNoNode) {
    order_.push_back(node.id);
  } else {
    auto it = std::find(order_.begin(), order_.end(), before);
    if (it == order_.end()) fail("insertion point node " + std::to_string(before) + " is not in the graph");
    order_.insert(it, node.id);
  }
  nodes_.push_back(std::move(node));
  return nodes_.back().outputs;
}

void Graph::set_outputs(std::vector<ValueId> outputs) {
  for (ValueId id : outputs) check_value(id, "graph output");
  outputs_ = std::move(outputs);
}

std::vector<ValueId> Graph::constants() const {
  std::vector<ValueId> out;
  for (const auto& v : values_)
    if (v.alive && v.kind == ValueKind::kConstant) out.push_back(v.id);
  return out;
}

const Value& Graph::value(ValueId id) const {
  check_value(id, "value");
  return values_[id];
}

Value& Graph::mutable_value(ValueId id) {
  check_value(id, "value");
  return values_[id];
}

const Node& Graph::node(NodeId id) const {
  if (id < 0 || static_cast<size_t>(id) >= nodes_.size() || !nodes_[id].alive)
    throw GraphError("node id " + std::to_string(id) + " does not exist");
  return nodes_[id];
}

Node& Graph::mutable_node(NodeId id) { return const_cast<Node&>(static_cast<const Graph*>(this)->node(id)); }

NodeId Graph::producer(ValueId id) const { return value(id).producer; }

std::vector<NodeId> Graph::users(ValueId id) const {
  std::vector<NodeId> out;
  for (NodeId n : order_) {
    const Node& node = nodes_[n];
    if (std::find(node.inputs.begin(), node.inputs.end(), id) != node.inputs.end()) out.push_back(n);
  }
  return out;
}

bool Graph::is_graph_output(ValueId id) const {
  return std::find(outputs_.begin(), outputs_.end(), id) != outputs_.end();
}

ValueId Graph::find_value(const std::string& name) const {
  auto it = names_.find(name);
  if (it == names_.end() || it->second == kNoValue || !values_[it->second].alive) return kNoValue;
  return it->second;
}

void Graph::replace_all_uses(ValueId from, ValueId to) {
  check_value(from, "replace_all_uses");
  check_value(to, "replace_all_uses");
  for (NodeId n : order_)
    for (ValueId& in : nodes_[n].inputs)
      if (in == from) in = to;
  for (ValueId& out : outputs_)
    if (out == from) out = to;
}

void Graph::replace_input(NodeId id, size_t index, ValueId to) {
  Node& n = mutable_node(id);
  if (index >= n.inputs.size())
    throw GraphError("node '" + n.name + "' has no input " + std::to_string(index));
  if (to != kNoValue) check_value(to, "replace_input");
  n.inputs[index] = to;
}

void Graph::erase_node(NodeId id) {
  Node& n = mutable_node(id);
  for (ValueId out : n.outputs) {
    if (!users(out).empty() || is_graph_output(out))
      throw GraphError("cannot erase node '" + n.name + "': its output '" + values_[out].name +
                       "' is still used");
  }
  for (ValueId out : n.outputs) {
    values_[out].alive = false;
    names_.erase(values_[out].name);
  }
  names_.erase(n.name);
  n.alive = false;
  order_.erase(std::find(order_.begin(), order_.end(), id));
}

void Graph::set_attr(NodeId id, const std::string& name, AttrValue value) {
  Node& n = mutable_node(id);
  Attrs attrs = n.attrs;
  bool found = false;
  for (auto& [key, v] : attrs)
    if (key == name) { v = value; found = true; }
  if (!found) attrs.emplace_back(name, std::move(value));
  n.attrs = normalize_attrs(OpRegistry::global().get(n.op), n.name, std::move(attrs));
}

void Graph::rename_value(ValueId id, const std::string& name) {
  Value& v = mutable_value(id);
  if (v.name == name) return;
  auto it = names_.find(name);
  if (it != names_.end() && !(v.kind == ValueKind::kNodeOutput && it->second == kNoValue &&
                              nodes_[v.producer].name == name))
    throw GraphError("cannot rename '" + v.name + "' to '" + name + "': the name is taken");
  names_.erase(v.name);
  v.name = name;
  names_[name] = id;
}

void Graph::reinfer(NodeId id) {
  Node& n = mutable_node(id);
  const OpSchema& schema = OpRegistry::global().get(n.op);
  std::vector<const TensorInfo*> infos;
  for (ValueId in : n.inputs) infos.push_back(in == kNoValue ? nullptr : &value(in).info);
  std::vector<const TensorInfo*> current;
  for (ValueId o : n.outputs) current.push_back(&value(o).info);
  std::vector<TensorInfo> out = infer_node(schema, InferContext(n.op, n.name, n.attrs, infos), current);
  if (out.size() != n.outputs.size())
    throw GraphError("node '" + n.name + "' (" + n.op + "): inference now gives " +
                     std::to_string(out.size()) + " outputs instead of " +
                     std::to_string(n.outputs.size()));
  for (size_t k = 0; k < out.size(); ++k) {
    TensorInfo& info = values_[n.outputs[k]].info;
    if (!out[k].qparams) out[k].qparams = info.qparams;
    if (out[k].dim_order.empty()) out[k].dim_order = info.dim_order;
    info = std::move(out[k]);
  }
}

int Graph::dead_code_elimination() {
  std::map<ValueId, int64_t> uses;
  for (NodeId n : order_)
    for (ValueId in : nodes_[n].inputs)
      if (in != kNoValue) ++uses[in];
  for (ValueId out : outputs_) ++uses[out];
  int removed = 0;
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    Node& n = nodes_[*it];
    bool used = false;
    for (ValueId out : n.outputs) used = used || uses[out] > 0;
    if (used) continue;
    for (ValueId in : n.inputs)
      if (in != kNoValue) --uses[in];
    for (ValueId out : n.outputs) {
      values_[out].alive = false;
      names_.erase(values_[out].name);
    }
    names_.erase(n.name);
    n.alive = false;
    ++removed;
  }
  order_.erase(std::remove_if(order_.begin(), order_.end(), [&](NodeId n) { return !nodes_[n].alive; }),
               order_.end());
  for (Value& v : values_) {
    if (v.alive && v.kind == ValueKind::kConstant && uses[v.id] == 0) {
      v.alive = false;
      v.data = Tensor();
      names_.erase(v.name);
    }
  }
  return removed;
}

void Graph::topological_sort() {
  std::set<ValueId> ready;
  for (const Value& v : values_)
    if (v.alive && v.kind != ValueKind::kNodeOutput) ready.insert(v.id);
  std::vector<NodeId> pending = order_, sorted;
  while (!pending.empty()) {
    auto it = std::find_if(pending.begin(), pending.end(), [&](NodeId n) {
      for (ValueId in : nodes_[n].inputs)
        if (in != kNoValue && !ready.count(in)) return false;
      return true;
    });
    if (it == pending.end())
      throw GraphError("graph has a cycle through node '" + nodes_[pending.front()].name + "'");
    for (ValueId out : nodes_[*it].outputs) ready.insert(out);
    sorted.push_back(*it);
    pending.erase(it);
  }
  order_ = std::move(sorted);
}

void Graph::verify() const {
  std::set<ValueId> defined;
  for (const Value& v : values_) {
    if (!v.alive) continue;
    if (v.kind == ValueKind::kInput || v.kind == ValueKind::kConstant) defined.insert(v.id);
    if (v.kind == ValueKind::kConstant && (!v.data.defined() || v.data.info().shape != v.info.shape ||
                                           v.data.dtype() != v.info.dtype))
      throw GraphError("constant '" + v.name + "' data does not match its info " + info_to_string(v.info));
  }
  for (ValueId in : inputs_)
    if (!values_[in].alive || values_[in].kind != ValueKind::kInput)
      throw GraphError("graph input " + std::to_string(in) + " is not a live input value");
  for (NodeId id : order_) {
    const Node& n = nodes_[id];
    if (!n.alive) throw GraphError("erased node '" + n.name + "' is still in the execution order");
    const OpSchema& schema = OpRegistry::global().get(n.op);
    std::vector<const TensorInfo*> infos;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const ValueId in = n.inputs[i];
      if (in == kNoValue) {
        infos.push_back(nullptr);
        continue;
      }
      if (in < 0 || static_cast<size_t>(in) >= values_.size() || !values_[in].alive)
        throw GraphError("node '" + n.name + "' reads value " + std::to_string(in) + ", which does not exist");
      if (!defined.count(in))
        throw GraphError("node '" + n.name + "' reads '" + values_[in].name + "' before it is defined");
      infos.push_back(&values_[in].info);
    }
    const Attrs normalized = normalize_attrs(schema, n.name, n.attrs);
    std::vector<const TensorInfo*> current;
    for (ValueId o : n.outputs)
      current.push_back(o >= 0 && static_cast<size_t>(o) < values_.size() ? &values_[o].info : nullptr);
    const std::vector<TensorInfo> expected =
        infer_node(schema, InferContext(n.op, n.name, normalized, infos), current);
    if (expected.size() != n.outputs.size())
      throw GraphError("node '" + n.name + "' (" + n.op + ") has " + std::to_string(n.outputs.size()) +
                       " outputs, inference gives " + std::to_string(expected.size()));
    for (size_t k = 0; k < expected.size(); ++k) {
      const Value& out = values_[n.outputs[k]];
      if (!out.alive || out.producer != id || out.output_index != static_cast<int32_t>(k))
        throw GraphError("node '" + n.name + "' output " + std::to_string(k) + " is not defined by it");
      if (defined.count(out.id)) throw GraphError("value '" + out.name + "' is defined twice");
      if (out.info.shape != expected[k].shape || out.info.dtype != expected[k].dtype)
        throw GraphError("node '" + n.name + "' (" + n.op + ") output '" + out.name + "' is " +
                         info_to_string(out.info) + " but its inputs give " +
                         info_to_string(expected[k]));
      defined.insert(out.id);
    }
  }
  for (ValueId out : outputs_)
    if (!defined.count(out))
      throw GraphError("graph output " + std::to_string(out) + " is not defined");
}

std::map<std::string, int64_t> Graph::op_counts() const {
  std::map<std::string, int64_t> counts;
  for (NodeId n : order_) ++counts[nodes_[n].op];
  return counts;
}

size_t Graph::constant_bytes() const {
  size_t bytes = 0;
  for (const Value& v : values_)
    if (v.alive && v.kind == ValueKind::kConstant) bytes += v.info.nbytes();
  return bytes;
}

std::string Graph::summary() const {
  std::ostringstream os;
  os << "Graph: " << inputs_.size() << " inputs, " << outputs_.size() << " outputs, "
     << order_.size() << " nodes, " << constants().size() << " constants ("
     << constant_bytes() << " bytes)\n";
  for (const auto& [op, count] : op_counts()) os << "  " << std::setw(5) << count << "  " << op << "\n";
  return os.str();
}

std::string Graph::to_string() const {
  std::ostringstream os;
  auto names = [&](const std::vector<ValueId>& ids) {
    std::string s;
    for (ValueId id : ids) s += (s.empty() ? "" : ", ") + (id == kNoValue ? std::string("None") : values_[id].name);
    return s;
  };
  os << "Graph(" << order_.size() << " nodes)\n";
  for (ValueId in : inputs_) os << "  input    " << values_[in].name << ": " << info_to_string(values_[in].info) << "\n";
  size_t name_width = 4, op_width = 2;
  for (NodeId n : order_) {
    name_width = std::max(name_width, nodes_[n].name.size());
    op_width = std::max(op_width, nodes_[n].op.size());
  }
  os << "  " << std::left << std::setw(4) << "#" << std::setw(name_width + 2) << "name"
     << std::setw(op_width + 2) << "op" << "inputs -> output\n";
  int64_t index = 0;
  for (NodeId n : order_) {
    const Node& node = nodes_[n];
    std::string outs;
    for (ValueId out : node.outputs) outs += (outs.empty() ? "" : "; ") + info_to_string(values_[out].info);
    os << "  " << std::left << std::setw(4) << index++ << std::setw(name_width + 2) << node.name
       << std::setw(op_width + 2) << node.op << names(node.inputs) << " -> " << outs << "\n";
  }
  os << "  outputs  " << names(outputs_) << "\n";
  return os.str();
}

NodeContext node_context(const Graph& graph, NodeId id) {
  const Node& n = graph.node(id);
  std::vector<const TensorInfo*> ins, outs;
  for (ValueId v : n.inputs) ins.push_back(v == kNoValue ? nullptr : &graph.value(v).info);
  for (ValueId v : n.outputs) outs.push_back(&graph.value(v).info);
  return NodeContext(n.op, n.name, n.attrs, std::move(ins), std::move(outs));
}

}  // namespace cortexm
