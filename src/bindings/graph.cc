// Python view of the C++ graph: cortexm.Graph with Value and Node handles.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <sstream>

#include "bindings/paths.h"
#include "bindings/tensor_convert.h"
#include "graph/errors.h"
#include "graph/graph.h"
#include "graph/interpreter.h"
#include "graph/serialize.h"

namespace cortexm::bindings {

namespace {

using GraphPtr = std::shared_ptr<Graph>;

struct ValueRef {
  GraphPtr graph;
  ValueId id;
  const Value& get() const { return graph->value(id); }
};

struct NodeRef {
  GraphPtr graph;
  NodeId id;
  const Node& get() const { return graph->node(id); }
};

py::object attr_to_python(const AttrValue& v) {
  struct Visitor {
    py::object operator()(const NoneAttr&) { return py::none(); }
    py::object operator()(int64_t x) { return py::int_(x); }
    py::object operator()(double x) { return py::float_(x); }
    py::object operator()(bool x) { return py::bool_(x); }
    py::object operator()(const std::string& x) { return py::str(x); }
    py::object operator()(const std::vector<int64_t>& x) { return py::cast(x); }
    py::object operator()(const std::vector<double>& x) { return py::cast(x); }
    py::object operator()(DType x) { return py::str(dtype_name(x)); }
  };
  return std::visit(Visitor{}, v);
}

bool is_int_object(const py::handle& obj) {
  return (PyLong_Check(obj.ptr()) && !PyBool_Check(obj.ptr())) ||
         py::isinstance(obj, py::module_::import("numpy").attr("integer"));
}

// A Python int or numpy integer that fits int64 (not bool or float); else GraphError naming what.
int64_t int_from_python(const std::string& what, const py::handle& obj) {
  if (!is_int_object(obj))
    throw GraphError(what + " = " + std::string(py::repr(obj)) + " must be an int");
  try {
    return obj.cast<int64_t>();
  } catch (const py::cast_error&) {
    throw GraphError(what + " = " + std::string(py::repr(obj)) + " does not fit in int64");
  }
}

// A list, tuple or 1-D integer array of ints.
std::vector<int64_t> ints_from_python(const std::string& what, const py::handle& obj) {
  if (!(py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj) ||
        (py::isinstance<py::array>(obj) && py::reinterpret_borrow<py::array>(obj).ndim() == 1)))
    throw GraphError(what + " = " + std::string(py::repr(obj)) + " must be a list of ints");
  std::vector<int64_t> out;
  for (auto item : obj) {
    if (!is_int_object(item))
      throw GraphError(what + " = " + std::string(py::repr(obj)) + " must be a list of ints");
    out.push_back(int_from_python(what + "[" + std::to_string(out.size()) + "]", item));
  }
  return out;
}

AttrValue attr_from_python(const std::string& name, const py::handle& obj) {
  if (obj.is_none()) return NoneAttr{};
  if (py::isinstance<py::bool_>(obj)) return obj.cast<bool>();
  py::module_ np = py::module_::import("numpy");
  if (py::isinstance(obj, np.attr("bool_"))) return obj.cast<bool>();
  if (py::isinstance<py::int_>(obj) || py::isinstance(obj, np.attr("integer")))
    return int_from_python("attribute '" + name + "'", obj);
  if (py::isinstance<py::float_>(obj) || py::isinstance(obj, np.attr("floating"))) return obj.cast<double>();
  if (py::isinstance<py::str>(obj)) return obj.cast<std::string>();
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj) || py::isinstance<py::array>(obj)) {
    bool all_int = true;
    std::vector<double> floats;
    std::vector<int64_t> ints;
    for (auto item : obj) {
      if (py::isinstance<py::bool_>(item) ||
          !(py::isinstance<py::int_>(item) || py::isinstance(item, np.attr("integer"))))
        all_int = false;
      if (all_int)
        ints.push_back(int_from_python(
            "attribute '" + name + "'[" + std::to_string(ints.size()) + "]", item));
      try {
        floats.push_back(item.cast<double>());
      } catch (const py::cast_error&) {
        throw GraphError("attribute '" + name + "': list element " + std::string(py::repr(item)) +
                         " is not a number");
      }
    }
    if (all_int) return ints;
    return floats;
  }
  const std::string type_name = py::str(py::type::of(obj).attr("__name__"));
  if (type_name == "dtype" || py::isinstance<py::type>(obj)) return dtype_from_python(obj);
  throw GraphError("attribute '" + name + "' has unsupported type " + type_name);
}

py::object qparams_to_python(const std::optional<QuantParams>& q) {
  if (!q) return py::none();
  py::dict d;
  d["scales"] = q->scales;
  d["zero_points"] = q->zero_points;
  d["axis"] = q->axis;
  d["quant_min"] = q->quant_min;
  d["quant_max"] = q->quant_max;
  return std::move(d);
}

std::optional<QuantParams> qparams_from_python(const py::handle& obj) {
  if (obj.is_none()) return std::nullopt;
  if (!py::isinstance<py::dict>(obj)) throw GraphError("qparams must be a dict or None");
  auto d = py::reinterpret_borrow<py::dict>(obj);
  QuantParams q;
  auto need = [&](const char* key) -> py::object {
    if (!d.contains(key)) throw GraphError(std::string("qparams needs '") + key + "'");
    return d[key];
  };
  py::object scales = need("scales");
  py::object zps = need("zero_points");
  q.scales = py::isinstance<py::float_>(scales) || py::isinstance<py::int_>(scales)
                 ? std::vector<double>{scales.cast<double>()}
                 : scales.cast<std::vector<double>>();
  q.zero_points = is_int_object(zps)
                      ? std::vector<int64_t>{int_from_python("qparams zero_points", zps)}
                      : ints_from_python("qparams zero_points", zps);
  q.axis = d.contains("axis") ? int_from_python("qparams axis", d["axis"]) : -1;
  q.quant_min = d.contains("quant_min") ? int_from_python("qparams quant_min", d["quant_min"]) : -128;
  q.quant_max = d.contains("quant_max") ? int_from_python("qparams quant_max", d["quant_max"]) : 127;
  if (q.scales.size() != q.zero_points.size() || q.scales.empty())
    throw GraphError("qparams need as many zero_points as scales, and at least one");
  return q;
}

std::vector<int64_t> optional_ints(const std::string& what, const py::handle& obj) {
  if (obj.is_none()) return {};
  return ints_from_python(what, obj);
}

py::object outputs_to_python(const GraphPtr& g, const std::vector<ValueId>& outs) {
  if (outs.size() == 1) return py::cast(ValueRef{g, outs[0]});
  py::tuple t(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) t[i] = py::cast(ValueRef{g, outs[i]});
  return std::move(t);
}

ValueId value_id(const GraphPtr& g, const py::handle& obj, const std::string& what) {
  if (obj.is_none()) return kNoValue;
  if (py::isinstance<ValueRef>(obj)) {
    const auto& ref = obj.cast<const ValueRef&>();
    if (ref.graph != g) throw GraphError(what + " belongs to another graph");
    return ref.id;
  }
  if (py::isinstance<py::str>(obj)) {
    const ValueId id = g->find_value(obj.cast<std::string>());
    if (id == kNoValue) throw GraphError(what + ": no value named '" + obj.cast<std::string>() + "'");
    return id;
  }
  throw GraphError(what + " must be a Value, a value name or None, got " +
                   std::string(py::str(py::type::of(obj).attr("__name__"))));
}

Attrs attrs_from_dict(const py::handle& obj) {
  Attrs attrs;
  if (obj.is_none()) return attrs;
  for (auto item : py::reinterpret_borrow<py::dict>(obj)) {
    const std::string key = py::str(item.first);
    attrs.emplace_back(key, attr_from_python(key, item.second));
  }
  return attrs;
}

py::object run(const GraphPtr& g, py::args args, const py::object& observe) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < args.size(); ++i)
    inputs.push_back(tensor_from_python(args[i], "input " + std::to_string(i)));
  NodeObserver observer;
  if (!observe.is_none()) {
    observer = [&](const Node& node, const std::vector<Tensor>& outs) {
      py::list arrays;
      for (const Tensor& t : outs) arrays.append(tensor_to_numpy(t));
      observe(NodeRef{g, node.id}, arrays);
    };
  }
  std::vector<Tensor> outs = run_graph(*g, inputs, observer);
  if (outs.size() == 1) return tensor_to_numpy(outs[0]);
  py::tuple t(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) t[i] = tensor_to_numpy(outs[i]);
  return std::move(t);
}

const char* kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::kInput: return "input";
    case ValueKind::kConstant: return "constant";
    case ValueKind::kNodeOutput: return "node_output";
  }
  return "?";
}

}  // namespace

void bind_graph(py::module_& m) {
  py::class_<ValueRef>(m, "Value", "A value of a cortexm graph: an input, a constant or a node output.")
      .def_property_readonly("id", [](const ValueRef& v) { return v.id; })
      .def_property("name", [](const ValueRef& v) { return v.get().name; },
                    [](const ValueRef& v, const std::string& name) { v.graph->rename_value(v.id, name); })
      .def_property_readonly("shape", [](const ValueRef& v) { return py::tuple(py::cast(v.get().info.shape)); })
      .def_property_readonly("dtype", [](const ValueRef& v) { return std::string(dtype_name(v.get().info.dtype)); })
      .def_property("dim_order",
                    [](const ValueRef& v) { return py::tuple(py::cast(v.get().info.effective_dim_order())); },
                    [](const ValueRef& v, const py::object& order) {
                      TensorInfo info = v.get().info;
                      info.dim_order = optional_ints("value '" + v.get().name + "' dim_order", order);
                      check_dim_order("value '" + v.get().name + "'", info);
                      v.graph->mutable_value(v.id).info.dim_order = info.dim_order;
                    })
      .def_property("qparams", [](const ValueRef& v) { return qparams_to_python(v.get().info.qparams); },
                    [](const ValueRef& v, const py::object& q) {
                      v.graph->mutable_value(v.id).info.qparams = qparams_from_python(q);
                    })
      .def_property_readonly("kind", [](const ValueRef& v) { return kind_name(v.get().kind); })
      .def_property_readonly("producer", [](const ValueRef& v) -> py::object {
        const NodeId p = v.get().producer;
        return p == kNoNode ? py::none() : py::cast(NodeRef{v.graph, p});
      })
      .def_property_readonly("users", [](const ValueRef& v) {
        py::list out;
        for (NodeId n : v.graph->users(v.id)) out.append(NodeRef{v.graph, n});
        return out;
      })
      .def_property("data",
                    [](const ValueRef& v) -> py::object {
                      const Value& value = v.get();
                      if (value.kind != ValueKind::kConstant) return py::none();
                      return tensor_to_numpy(value.data);
                    },
                    [](const ValueRef& v, const py::object& data) {
                      Value& value = v.graph->mutable_value(v.id);
                      if (value.kind != ValueKind::kConstant)
                        throw GraphError("value '" + value.name + "' is not a constant");
                      Tensor t = tensor_from_python(data, "constant '" + value.name + "'");
                      if (t.dtype() != value.info.dtype || t.shape() != value.info.shape)
                        throw GraphError("new data " + info_to_string(t.info()) + " for constant '" +
                                         value.name + "' must keep " + info_to_string(value.info));
                      t.mutable_info() = value.info;
                      value.data = t;
                    })
      .def("__eq__", [](const ValueRef& a, const py::object& b) {
        return py::isinstance<ValueRef>(b) && b.cast<const ValueRef&>().graph == a.graph &&
               b.cast<const ValueRef&>().id == a.id;
      })
      .def("__hash__", [](const ValueRef& v) { return std::hash<int64_t>()(v.id); })
      .def("__repr__", [](const ValueRef& v) {
        return "<Value '" + v.get().name + "' " + info_to_string(v.get().info) + ">";
      });

  py::class_<NodeRef>(m, "Node", "A node of a cortexm graph.")
      .def_property_readonly("id", [](const NodeRef& n) { return n.id; })
      .def_property_readonly("name", [](const NodeRef& n) { return n.get().name; })
      .def_property_readonly("op", [](const NodeRef& n) { return n.get().op; })
      .def_property_readonly("source", [](const NodeRef& n) { return n.get().source; })
      .def_property_readonly("inputs", [](const NodeRef& n) {
        py::list out;
        for (ValueId in : n.get().inputs) out.append(in == kNoValue ? py::none() : py::cast(ValueRef{n.graph, in}));
        return out;
      })
      .def_property_readonly("outputs", [](const NodeRef& n) {
        py::list out;
        for (ValueId o : n.get().outputs) out.append(ValueRef{n.graph, o});
        return out;
      })
      .def_property_readonly("attrs", [](const NodeRef& n) {
        py::dict d;
        for (const auto& [key, value] : n.get().attrs) d[py::str(key)] = attr_to_python(value);
        return d;
      })
      .def_property_readonly("meta", [](const NodeRef& n) { return py::cast(n.get().meta); })
      .def("set_meta", [](const NodeRef& n, const std::string& key, const std::string& value) {
        n.graph->mutable_node(n.id).meta[key] = value;
      })
      .def("set_attr", [](const NodeRef& n, const std::string& key, const py::object& value) {
        n.graph->set_attr(n.id, key, attr_from_python(key, value));
      })
      .def("replace_input", [](const NodeRef& n, const py::object& index, const py::object& value) {
        const int64_t i = int_from_python("node '" + n.get().name + "' replace_input index", index);
        if (i < 0)
          throw GraphError("node '" + n.get().name + "' replace_input index = " + std::to_string(i) +
                           " must be >= 0");
        n.graph->replace_input(n.id, static_cast<size_t>(i), value_id(n.graph, value, "replace_input"));
      }, py::arg("index"), py::arg("value"))
      .def("reinfer", [](const NodeRef& n) { n.graph->reinfer(n.id); })
      .def("__eq__", [](const NodeRef& a, const py::object& b) {
        return py::isinstance<NodeRef>(b) && b.cast<const NodeRef&>().graph == a.graph &&
               b.cast<const NodeRef&>().id == a.id;
      })
      .def("__hash__", [](const NodeRef& n) { return std::hash<int64_t>()(n.id); })
      .def("__repr__", [](const NodeRef& n) { return "<Node '" + n.get().name + "' " + n.get().op + ">"; });

  py::class_<Graph, GraphPtr>(m, "Graph", "A cortexm graph: nodes in PyTorch's op vocabulary over typed values.")
      .def(py::init<>())
      .def("add_input",
           [](const GraphPtr& g, const std::string& name, const py::object& shape,
              const py::object& dtype, const py::object& dim_order, const py::object& qparams) {
             TensorInfo info;
             info.dtype = dtype_from_python(dtype);
             info.shape = ints_from_python("input '" + name + "' shape", shape);
             info.dim_order = optional_ints("input '" + name + "' dim_order", dim_order);
             info.qparams = qparams_from_python(qparams);
             return ValueRef{g, g->add_input(name, info)};
           },
           py::arg("name"), py::arg("shape"), py::arg("dtype") = "float32", py::arg("dim_order") = py::none(),
           py::arg("qparams") = py::none())
      .def("add_constant",
           [](const GraphPtr& g, const std::string& name, const py::object& data, const py::object& qparams,
              const py::object& dim_order) {
             Tensor t = tensor_from_python(data, "constant '" + name + "'");
             t.mutable_info().qparams = qparams_from_python(qparams);
             t.mutable_info().dim_order = optional_ints("constant '" + name + "' dim_order", dim_order);
             return ValueRef{g, g->add_constant(name, t)};
           },
           py::arg("name"), py::arg("data"), py::arg("qparams") = py::none(), py::arg("dim_order") = py::none())
      .def("call",
           [](const GraphPtr& g, const std::string& op, const py::list& inputs, const py::object& attrs,
              const std::string& name, const std::string& source, const py::object& before) {
             std::vector<ValueId> ids;
             for (size_t i = 0; i < inputs.size(); ++i)
               ids.push_back(value_id(g, inputs[i], op + " input " + std::to_string(i)));
             NodeId at = kNoNode;
             if (!before.is_none()) at = before.cast<const NodeRef&>().id;
             return outputs_to_python(g, g->call(op, ids, attrs_from_dict(attrs), at, name, source));
           },
           py::arg("op"), py::arg("inputs"), py::arg("attrs") = py::none(), py::kw_only(),
           py::arg("name") = "", py::arg("source") = "", py::arg("before") = py::none(),
           "Adds a node (checked against the op's schema, outputs inferred); returns its output Value, "
           "or a tuple when the op has several outputs.")
      .def_property("outputs",
                    [](const GraphPtr& g) {
                      py::list out;
                      for (ValueId id : g->outputs()) out.append(ValueRef{g, id});
                      return out;
                    },
                    [](const GraphPtr& g, const py::iterable& outs) {
                      std::vector<ValueId> ids;
                      for (auto o : outs) ids.push_back(value_id(g, o, "graph output"));
                      g->set_outputs(ids);
                    })
      .def("set_outputs",
           [](const GraphPtr& g, const py::iterable& outs) {
             std::vector<ValueId> ids;
             for (auto o : outs) ids.push_back(value_id(g, o, "graph output"));
             g->set_outputs(ids);
           })
      .def_property_readonly("inputs", [](const GraphPtr& g) {
        py::list out;
        for (ValueId id : g->inputs()) out.append(ValueRef{g, id});
        return out;
      })
      .def_property_readonly("constants", [](const GraphPtr& g) {
        py::list out;
        for (ValueId id : g->constants()) out.append(ValueRef{g, id});
        return out;
      })
      .def_property_readonly("nodes", [](const GraphPtr& g) {
        py::list out;
        for (NodeId id : g->order()) out.append(NodeRef{g, id});
        return out;
      })
      .def("value", [](const GraphPtr& g, const std::string& name) {
        const ValueId id = g->find_value(name);
        if (id == kNoValue) throw GraphError("no value named '" + name + "'");
        return ValueRef{g, id};
      })
      .def("replace_all_uses", [](const GraphPtr& g, const py::object& from, const py::object& to) {
        g->replace_all_uses(value_id(g, from, "replace_all_uses"), value_id(g, to, "replace_all_uses"));
      })
      .def("erase_node", [](const GraphPtr& g, const NodeRef& n) { g->erase_node(n.id); })
      .def("dead_code_elimination", &Graph::dead_code_elimination)
      .def("topological_sort", &Graph::topological_sort)
      .def("verify", &Graph::verify)
      .def("op_counts", &Graph::op_counts)
      .def("summary", &Graph::summary)
      .def_property_readonly("constant_bytes", &Graph::constant_bytes)
      .def("copy", [](const GraphPtr& g) { return std::make_shared<Graph>(*g); },
           "A copy whose edits leave this graph alone (constant data is shared until replaced).")
      .def("__str__", &Graph::to_string)
      .def("__repr__", [](const GraphPtr& g) {
        return "<cortexm.Graph " + std::to_string(g->num_nodes()) + " nodes>";
      })
      .def("run", &run, py::arg("observe") = py::none(),
           "Runs the reference interpreter: numpy arrays in, numpy array (or tuple) out. observe, if given, "
           "is called as observe(node, outputs) after each node.")
      .def("to_bytes", [](const GraphPtr& g) { return py::bytes(serialize_graph(*g)); })
      .def_static("from_bytes", [](const py::bytes& b) {
        return std::make_shared<Graph>(deserialize_graph(std::string(b)));
      })
      .def("save", [](const GraphPtr& g, const py::object& path) {
        save_graph(*g, path_from_python(path, "Graph.save: path"));
      }, py::arg("path"), "Writes the graph file atomically; path: str or os.PathLike.")
      .def_static("load", [](const py::object& path) {
        return std::make_shared<Graph>(load_graph(path_from_python(path, "Graph.load: path")));
      }, py::arg("path"), "Reads a graph file: a regular file of at most 16 GiB (kMaxGraphFileBytes).");

  m.def("registered_ops", [] { return OpRegistry::global().names(); },
        "Names of every op the graph, the interpreter and the passes know.");
  m.def("ops_with", [](const std::string& property) {
        std::vector<std::string> out;
        for (const std::string& name : OpRegistry::global().names()) {
          const OpSchema& s = OpRegistry::global().get(name);
          bool has;
          if (property == "is_view") has = s.is_view;
          else if (property == "is_data_movement") has = s.is_data_movement;
          else if (property == "keeps_qparams") has = s.keeps_qparams;
          else if (property == "is_unary_elementwise") has = s.is_unary_elementwise;
          else if (property == "keeps_element_order") has = s.keeps_element_order;
          else if (property == "fuses_activation") has = s.fuses_activation;
          else if (property == "has_activation_range") has = s.has_activation_range();
          else if (property == "encode") has = s.encode != nullptr;
          else throw py::value_error("ops_with: property '" + property + "' is not one of is_view, "
                                     "is_data_movement, keeps_qparams, is_unary_elementwise, "
                                     "keeps_element_order, fuses_activation, has_activation_range, encode");
          if (has) out.push_back(name);
        }
        return out;
      }, py::arg("property"),
      "Names of the registered ops whose descriptor has `property` (is_view, is_data_movement, "
      "keeps_qparams, is_unary_elementwise, keeps_element_order, fuses_activation, "
      "has_activation_range, encode: a program can hold the op).");

  // The registry's schemas, read-only: Python derives its op sets (data movement, views, ops that
  // keep their input's qparams) from these flags instead of keeping lists of its own.
  py::class_<InputSpec>(m, "OpInput", "A tensor input of an op schema.")
      .def_readonly("name", &InputSpec::name)
      .def_readonly("optional", &InputSpec::optional)
      .def_readonly("variadic", &InputSpec::variadic)
      .def("__repr__", [](const InputSpec& i) { return "OpInput('" + i.name + "')"; });
  py::class_<AttrSpec>(m, "OpAttr", "An attribute of an op schema.")
      .def_readonly("name", &AttrSpec::name)
      .def_property_readonly("kind", [](const AttrSpec& a) { return attr_kind_name(a.kind); })
      .def_readonly("nullable", &AttrSpec::nullable)
      .def_property_readonly("required", [](const AttrSpec& a) { return !a.default_value; })
      .def_property_readonly("default", [](const AttrSpec& a) {
        return a.default_value ? attr_to_python(*a.default_value) : py::none();
      })
      .def("__repr__", [](const AttrSpec& a) { return "OpAttr('" + a.name + "')"; });
  py::class_<OpSchema>(m, "OpInfo", "An op's schema and properties, as the C++ registry holds them.")
      .def_readonly("name", &OpSchema::name)
      .def_readonly("inputs", &OpSchema::inputs)
      .def_readonly("attrs", &OpSchema::attrs)
      .def_readonly("is_view", &OpSchema::is_view)
      .def_readonly("is_data_movement", &OpSchema::is_data_movement)
      .def_readonly("keeps_qparams", &OpSchema::keeps_qparams)
      .def_readonly("is_unary_elementwise", &OpSchema::is_unary_elementwise,
                    "Output element i depends on input element i alone, whatever the shape.")
      .def_readonly("keeps_element_order", &OpSchema::keeps_element_order,
                    "Output holds input 0's elements in the same logical order (a reshape or a dim "
                    "order change).")
      .def_readonly("fuses_activation", &OpSchema::fuses_activation,
                    "A following relu / hardtanh / clamp folds into its activation range.")
      .def_readonly("layout_following_inputs", &OpSchema::layout_following_inputs,
                    "The inputs laid out like the output, element for element.")
      .def_readonly("in_place_input", &OpSchema::in_place_input,
                    "The input the output may overwrite when it dies at the op, or -1.")
      .def_readonly("in_place_narrowing", &OpSchema::in_place_narrowing,
                    "The kernel streams forward: its output (an element no larger) may start at "
                    "in_place_input's first byte.")
      .def_property_readonly("has_activation_range", &OpSchema::has_activation_range)
      .def_property_readonly("runnable", [](const OpSchema& s) { return s.encode != nullptr; },
                             "A program can hold the op (its descriptor encodes a kernel).")
      .def("__repr__", [](const OpSchema& s) { return "OpInfo('" + s.name + "')"; });
  m.def(
      "op_info", [](const std::string& name) { return &OpRegistry::global().get(name); },
      py::arg("name"), py::return_value_policy::reference,
      "The registry's schema of op `name` (raises UnsupportedError for an unknown op).");
}

}  // namespace cortexm::bindings
