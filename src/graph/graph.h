// cortexm's graph: ordered nodes in PyTorch's op vocabulary over typed values; constants owned
// by the graph. Passes edit it in C++; Python sees and edits it through the bindings.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/attr.h"
#include "graph/op_schema.h"
#include "graph/tensor.h"

namespace cortexm {

using ValueId = int32_t;
using NodeId = int32_t;
constexpr ValueId kNoValue = -1;
constexpr NodeId kNoNode = -1;

enum class ValueKind : uint8_t { kInput, kConstant, kNodeOutput };

struct Value {
  ValueId id = kNoValue;
  std::string name;
  TensorInfo info;
  ValueKind kind = ValueKind::kNodeOutput;
  NodeId producer = kNoNode;  // node outputs only
  int32_t output_index = 0;
  Tensor data;                // constants only
  bool alive = true;
};

struct Node {
  NodeId id = kNoNode;
  std::string op;
  std::string name;
  std::vector<ValueId> inputs;  // kNoValue for an absent optional input
  Attrs attrs;
  std::vector<ValueId> outputs;
  std::string source;  // where it came from, e.g. the torch module path
  std::map<std::string, std::string> meta;  // free-form notes of passes (e.g. quantization)
  bool alive = true;
};

class Graph {
 public:
  // --- building ---
  ValueId add_input(const std::string& name, TensorInfo info);
  ValueId add_constant(const std::string& name, Tensor data);
  // Checks the op's schema (arity, attribute names and kinds; defaults filled in), infers the
  // outputs and inserts the node before `before` (kNoNode: at the end). Returns its outputs.
  std::vector<ValueId> call(const std::string& op, std::vector<ValueId> inputs, Attrs attrs,
                            NodeId before = kNoNode, const std::string& name = "",
                            const std::string& source = "");
  void set_outputs(std::vector<ValueId> outputs);

  // --- reading ---
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  const std::vector<NodeId>& order() const { return order_; }  // execution order, live nodes
  std::vector<ValueId> constants() const;
  const Value& value(ValueId id) const;
  const Node& node(NodeId id) const;
  Value& mutable_value(ValueId id);
  Node& mutable_node(NodeId id);
  NodeId producer(ValueId id) const;               // kNoNode for inputs and constants
  std::vector<NodeId> users(ValueId id) const;     // live nodes reading id, in order
  bool is_graph_output(ValueId id) const;
  ValueId find_value(const std::string& name) const;  // kNoValue if none
  size_t num_nodes() const { return order_.size(); }
  size_t num_values() const { return values_.size(); }  // including dead slots

  // --- editing ---
  void replace_all_uses(ValueId from, ValueId to);  // node inputs and graph outputs
  void replace_input(NodeId node, size_t index, ValueId to);
  void erase_node(NodeId id);                       // its outputs must be unused
  void set_attr(NodeId node, const std::string& name, AttrValue value);
  void rename_value(ValueId id, const std::string& name);  // name must be unused
  // Re-runs inference for a node (after its inputs or attributes changed); keeps qparams and
  // dim orders the node's outputs already had unless the new inference sets them.
  void reinfer(NodeId node);
  int dead_code_elimination();  // returns how many nodes it removed; also drops unused constants
  void topological_sort();      // stable: keeps the current order where dependencies allow
  void verify() const;          // throws GraphError naming the first problem

  // --- summaries ---
  std::map<std::string, int64_t> op_counts() const;
  std::string to_string() const;  // a readable table
  std::string summary() const;
  size_t constant_bytes() const;

 private:
  std::string unique_name(const std::string& base);
  void check_value(ValueId id, const char* what) const;

  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<NodeId> order_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::map<std::string, int64_t> name_counts_;
  std::map<std::string, ValueId> names_;
};

// Normalizes attrs against a schema: kinds checked (ints accepted for floats), defaults filled,
// unknown names rejected, order made the schema's. Throws GraphError naming node, op and attr.
Attrs normalize_attrs(const OpSchema& schema, const std::string& node_name, Attrs attrs);

// Throws GraphError naming `what` unless info.dim_order is empty or a permutation of its dims.
void check_dim_order(const std::string& what, const TensorInfo& info);

// Node `id` with its attributes and its inputs' and outputs' infos (for its op's descriptor).
NodeContext node_context(const Graph& graph, NodeId id);

}  // namespace cortexm
