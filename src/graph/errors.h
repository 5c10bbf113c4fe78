// Exceptions of the host core. GraphError becomes ValueError in Python, UnsupportedError becomes
// NotImplementedError. (The runtime core and the kernels never throw.)
#pragma once

#include <stdexcept>
#include <string>

namespace cortexm {

class GraphError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class UnsupportedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace cortexm
