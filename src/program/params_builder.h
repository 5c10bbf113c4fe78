// What an op's encode function (OpSchema::encode) writes its program params table with.
#pragma once

#include <cstdint>

#include "graph/op_schema.h"
#include "program/program_generated.h"

namespace cortexm::program {

class ParamsBuilder {
 public:
  explicit ParamsBuilder(flatbuffers::FlatBufferBuilder& fbb) : fbb_(fbb) {}
  flatbuffers::FlatBufferBuilder& fbb() { return fbb_; }

 private:
  flatbuffers::FlatBufferBuilder& fbb_;
};

// The op entry for kernel `id` with params table `table` (its union type from the table's type).
template <typename Table>
EncodedOp encoded(fb::KernelId id, flatbuffers::Offset<Table> table) {
  static_assert(fb::OpParamsTraits<Table>::enum_value != fb::OpParams_NONE, "not an OpParams table");
  return {static_cast<uint8_t>(id), static_cast<uint8_t>(fb::OpParamsTraits<Table>::enum_value), table.o};
}

}  // namespace cortexm::program
