#include "program/status_message.h"

#include <sstream>

#include "program/program_generated.h"

namespace cortexm::program {

std::string status_message(const runtime::Status& status, const void* buffer, size_t size,
                           const std::string& origin) {
  if (status.ok()) return origin + ": ok";
  std::string where = status.section ? status.section : "program";
  if (status.section_index >= 0) where += "[" + std::to_string(status.section_index) + "]";
  // Sections after the structural check name what they point at.
  const Error& e = status.detail;
  std::string field = e.argument ? e.argument : "?";
  if (e.index >= 0) field += "[" + std::to_string(e.index) + "]";
  std::string value = std::to_string(e.value);
  const auto* bytes = static_cast<const uint8_t*>(buffer);
  const bool structured = std::string(status.section ? status.section : "") != "program" && bytes &&
                          size >= 12 && fb::SizePrefixedProgramBufferHasIdentifier(bytes);
  // A name the loader refused is not printed (it may hold control characters).
  const bool bad_name = field.rfind("name", 0) == 0;
  if (structured && status.section_index >= 0 && !bad_name) {
    flatbuffers::Verifier verifier(bytes, size);
    if (fb::VerifySizePrefixedProgramBuffer(verifier)) {
      const fb::Program* p = fb::GetSizePrefixedProgram(bytes);
      const std::string section = status.section;
      if (section == "ops" && p->ops() && status.section_index < p->ops()->size()) {
        const fb::Op* op = p->ops()->Get(static_cast<uint32_t>(status.section_index));
        where += " ('" + std::string(op->name() ? op->name()->c_str() : "") + "', " +
                 runtime::kernel_name(op->kernel()) + ")";
        // ConstantPad's value is a double too.
        if (field == "params.value" && op->params_as_ConstantPadParams()) {
          std::ostringstream os;
          os << op->params_as_ConstantPadParams()->value();
          value = os.str();
        }
      } else if (section == "tensors" && p->tensors() &&
                 status.section_index < p->tensors()->size()) {
        const fb::Tensor* t = p->tensors()->Get(static_cast<uint32_t>(status.section_index));
        where += " ('" + std::string(t->name() ? t->name()->c_str() : "") + "')";
        // A scale is a double the Status cannot carry (NaN, inf): show it as the file has it.
        const auto* scales = t->qparams() ? t->qparams()->scales() : nullptr;
        if (field.rfind("qparams.scales[", 0) == 0 && scales && e.index >= 0 && static_cast<uint64_t>(e.index) < scales->size()) {
          std::ostringstream os;
          os << scales->Get(static_cast<uint32_t>(e.index));
          value = os.str();
        }
      }
    }
  }
  return origin + ": " + where + ": " + field + " = " + value + ": " +
         (e.requirement ? e.requirement : "is invalid");
}

}  // namespace cortexm::program
