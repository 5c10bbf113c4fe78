// Exceptions of the host core. GraphError becomes ValueError in Python, UnsupportedError becomes
// NotImplementedError, FileError an OSError. (The runtime core and the kernels never throw.)
#pragma once

#include <stdexcept>
#include <string>

namespace cortexm {

class GraphError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failed file operation: OSError in Python with its errno (FileNotFoundError for ENOENT, ...).
class FileError : public std::runtime_error {
 public:
  FileError(int err, const std::string& what, std::string path)
      : std::runtime_error(what), errno_(err), path_(std::move(path)) {}
  int error_number() const { return errno_; }
  const std::string& path() const { return path_; }

 private:
  int errno_;
  std::string path_;
};

class UnsupportedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace cortexm
