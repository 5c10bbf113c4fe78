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

// Marks a kernel's prepare step: it runs once per op when a program is loaded, so GCC builds it for
// size (the cold attribute) while the kernel's loops keep the build's optimization.
#if defined(__GNUC__)
#define CORTEXM_PREPARE_STEP __attribute__((cold))
#else
#define CORTEXM_PREPARE_STEP
#endif

constexpr Error invalid(const char* argument, int64_t value, const char* requirement,
                        int64_t index = -1) {
  return Error{argument, index, value, requirement};
}

// A fused activation range on an int8 (or int16) output: both bounds in the dtype's range, in order.
inline Error check_activation_range(int32_t activation_min, int32_t activation_max, bool int16 = false) {
  const int32_t lo = int16 ? -32768 : -128, hi = int16 ? 32767 : 127;
  const char* range = int16 ? "must be in [-32768, 32767]" : "must be in [-128, 127]";
  if (activation_min < lo || activation_min > hi) return invalid("activation_min", activation_min, range);
  if (activation_max < lo || activation_max > hi) return invalid("activation_max", activation_max, range);
  if (activation_min > activation_max)
    return invalid("activation_min", activation_min, "must be <= activation_max");
  return kOk;
}

// An int8 input offset (the negated zero point, added to the input), in [-127, 128].
inline Error check_input_offset(const char* argument, int32_t offset) {
  if (offset < -127 || offset > 128) return invalid(argument, offset, "must be in [-127, 128]");
  return kOk;
}

// An int8 output offset (the zero point, added to the output), in [-128, 127].
inline Error check_output_offset(const char* argument, int32_t offset) {
  if (offset < -128 || offset > 127) return invalid(argument, offset, "must be in [-128, 127]");
  return kOk;
}

// The zero point an input offset negates, in int64: -INT32_MIN does not fit an int32.
inline int64_t zero_point_of(int32_t input_offset) { return -int64_t{input_offset}; }

// The zero points of an int8 binary op (self, other, output) within int8; the input offsets are
// the negated zero points.
inline Error check_binary_zero_points(int32_t lhs_offset, int32_t rhs_offset, int32_t output_offset) {
  if (lhs_offset < -127 || lhs_offset > 128)
    return invalid("self_zero_point", zero_point_of(lhs_offset), "must be in [-128, 127]");
  if (rhs_offset < -127 || rhs_offset > 128)
    return invalid("other_zero_point", zero_point_of(rhs_offset), "must be in [-128, 127]");
  if (output_offset < -128 || output_offset > 127)
    return invalid("output_zero_point", output_offset, "must be in [-128, 127]");
  return kOk;
}

#define CORTEXM_RETURN_IF_ERROR(expr)   \
  do {                                  \
    const ::cortexm::Error err_ = (expr); \
    if (!err_.ok()) return err_;        \
  } while (0)

}  // namespace cortexm
