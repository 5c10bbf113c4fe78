#include "core/error_message.h"

namespace cortexm {

std::string error_message(const char* op, const Error& error) {
  std::string s = op;
  s += ": ";
  s += error.argument ? error.argument : "?";
  if (error.index >= 0) s += "[" + std::to_string(error.index) + "]";
  s += " = " + std::to_string(error.value) + " ";
  s += error.requirement ? error.requirement : "is invalid";
  return s;
}

}  // namespace cortexm
