#include "cortexm/portable/copy.h"

#include <string.h>

namespace cortexm::portable {

Error copy_prepare(const CopyParams& p) {
  CORTEXM_RETURN_IF_ERROR(check_element_size(p.element_size));
  if (p.numel < 0) return invalid("numel", p.numel, "must be >= 0");
  return kOk;
}

void copy(const CopyParams& p, const void* input, void* output) {
  if (input == output || p.numel == 0) return;
  memcpy(output, input, static_cast<size_t>(p.numel * p.element_size));
}

}  // namespace cortexm::portable
