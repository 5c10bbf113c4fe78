// Errors as values: a prepare step names the argument, the offending value and the rule it breaks.
// Freestanding: static strings only; the host formats the sentence (src/core/error_message.h).
#pragma once

#include <cstdint>

namespace cortexm {

struct Error {
  const char* argument = nullptr;  // nullptr means no error
  int64_t index = -1;              // element index within argument, -1 when the argument is scalar
  int64_t value = 0;
  const char* requirement = nullptr;  // e.g. "must be in [-31, 30]"

  constexpr bool ok() const { return argument == nullptr; }
};

constexpr Error kOk{};

constexpr Error invalid(const char* argument, int64_t value, const char* requirement,
                        int64_t index = -1) {
  return Error{argument, index, value, requirement};
}

#define CORTEXM_RETURN_IF_ERROR(expr)   \
  do {                                  \
    const ::cortexm::Error err_ = (expr); \
    if (!err_.ok()) return err_;        \
  } while (0)

}  // namespace cortexm
