// The Cortex-M core a graph is lowered for, and the kernel ISA it uses.
#pragma once

#include <string>
#include <vector>

#include "cortexm/kernels/isa.h"

namespace cortexm {

enum class Cpu { kM0, kM0Plus, kM3, kM4, kM7, kM23, kM33, kM35P, kM55, kM85 };

struct TargetConfig {
  Cpu cpu = Cpu::kM55;
  Isa isa = Isa::kMve;
};

const char* cpu_name(Cpu cpu);  // "cortex-m55"
std::vector<std::string> cpu_names();
// What a core can run: SCALAR everywhere, DSP on M4/M7/M33/M35P/M55/M85, MVE on M55/M85.
std::vector<Isa> supported_isas(Cpu cpu);
Isa default_isa(Cpu cpu);  // the richest supported

// cpu as "cortex-m55", "m55" or "M55" (case-insensitive); isa as "SCALAR" | "DSP" | "MVE" or empty
// for the default. Throws GraphError naming the value and what is allowed.
TargetConfig make_target(const std::string& cpu, const std::string& isa = "");
// "cortex-m55+int8", "cortex-m4+int8", optionally "+dsp" / "+scalar" / "+mve" to pick the isa.
TargetConfig parse_target(const std::string& target);
std::string target_string(const TargetConfig& target);

}  // namespace cortexm
