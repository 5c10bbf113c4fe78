// libFuzzer target: the graph file reader (deserialize_graph) on arbitrary bytes. A bad file must
// end in GraphError or UnsupportedError (ValueError / NotImplementedError in Python); anything
// else (a crash, a sanitizer report, std::bad_alloc, another exception) is a finding.
#include <cstdint>
#include <string>

#include "graph/errors.h"
#include "graph/serialize.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    cortexm::deserialize_graph(std::string(reinterpret_cast<const char*>(data), size), "fuzz input");
  } catch (const cortexm::GraphError&) {
  } catch (const cortexm::UnsupportedError&) {
  }
  return 0;
}
