// Errors of the runtime as values: which part of the program (section and index), which field, the
// offending value and the rule it breaks. Static strings only; the host formats the sentence.
#pragma once

#include <cstdint>

#include "cortexm/kernels/status.h"

namespace cortexm::runtime {

enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidProgram,   // the file is malformed, inconsistent or out of bounds
  kUnsupported,      // well-formed, but this runtime cannot run it (version, layout)
  kInvalidArgument,  // a caller argument (arena) is wrong
};

struct Status {
  StatusCode code = StatusCode::kOk;
  const char* section = nullptr;  // "program", "tensors", "ops", "constants", "inputs", ...
  int64_t section_index = -1;     // index within the section, -1 for the section as a whole
  Error detail;                   // field, element index, value, requirement

  constexpr bool ok() const { return code == StatusCode::kOk; }
};

constexpr Status kStatusOk{};

constexpr Status program_error(const char* section, int64_t section_index, const char* field,
                               int64_t value, const char* requirement, int64_t index = -1,
                               StatusCode code = StatusCode::kInvalidProgram) {
  return Status{code, section, section_index, Error{field, index, value, requirement}};
}

#define CORTEXM_RETURN_IF_STATUS(expr)       \
  do {                                       \
    const ::cortexm::runtime::Status st_ = (expr); \
    if (!st_.ok()) return st_;               \
  } while (0)

}  // namespace cortexm::runtime
