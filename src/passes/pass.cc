#include "passes/pass.h"

#include "graph/errors.h"

namespace cortexm {

const std::vector<PassInfo>& registered_passes() {
  static const std::vector<PassInfo> passes = {
#define CORTEXM_PASS(name, fn, summary) {#name, fn, summary},
#include "passes/passes.def"
#undef CORTEXM_PASS
  };
  return passes;
}

const std::vector<std::string>& default_pass_order() {
  static const std::vector<std::string> order = {
#define CORTEXM_PASS(name, fn, summary) #name,
#define CORTEXM_PASS_AGAIN(name) #name,
#include "passes/passes.def"
#undef CORTEXM_PASS
  };
  return order;
}

const PassInfo& find_pass(const std::string& name) {
  std::string known;
  for (const PassInfo& p : registered_passes()) {
    if (name == p.name) return p;
    known += (known.empty() ? "" : ", ") + std::string(p.name);
  }
  throw GraphError("unknown pass '" + name + "' (known: " + known + ")");
}

}  // namespace cortexm
