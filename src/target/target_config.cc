#include "target/target_config.h"

#include <algorithm>
#include <cctype>

#include "graph/errors.h"

namespace cortexm {

namespace {

struct CpuEntry {
  Cpu cpu;
  const char* name;
};

constexpr CpuEntry kCpus[] = {
    {Cpu::kM0, "cortex-m0"},   {Cpu::kM0Plus, "cortex-m0plus"}, {Cpu::kM3, "cortex-m3"},
    {Cpu::kM4, "cortex-m4"},   {Cpu::kM7, "cortex-m7"},         {Cpu::kM23, "cortex-m23"},
    {Cpu::kM33, "cortex-m33"}, {Cpu::kM35P, "cortex-m35p"},     {Cpu::kM55, "cortex-m55"},
    {Cpu::kM85, "cortex-m85"}};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : ", ") + item;
  return s;
}

}  // namespace

const char* cpu_name(Cpu cpu) {
  for (const auto& e : kCpus)
    if (e.cpu == cpu) return e.name;
  return "?";
}

std::vector<std::string> cpu_names() {
  std::vector<std::string> names;
  for (const auto& e : kCpus) names.push_back(e.name);
  return names;
}

std::vector<Isa> supported_isas(Cpu cpu) {
  switch (cpu) {
    case Cpu::kM0:
    case Cpu::kM0Plus:
    case Cpu::kM3:
    case Cpu::kM23:
      return {Isa::kScalar};
    case Cpu::kM4:
    case Cpu::kM7:
    case Cpu::kM33:
    case Cpu::kM35P:
      return {Isa::kScalar, Isa::kDsp};
    case Cpu::kM55:
    case Cpu::kM85:
      return {Isa::kScalar, Isa::kDsp, Isa::kMve};
  }
  return {Isa::kScalar};
}

Isa default_isa(Cpu cpu) { return supported_isas(cpu).back(); }

TargetConfig make_target(const std::string& cpu, const std::string& isa) {
  std::string name = lower(cpu);
  if (name.rfind("cortex-", 0) != 0) name = "cortex-" + name;
  if (name == "cortex-m0+") name = "cortex-m0plus";
  TargetConfig t;
  bool found = false;
  for (const auto& e : kCpus)
    if (name == e.name) {
      t.cpu = e.cpu;
      found = true;
    }
  if (!found)
    throw GraphError("cpu '" + cpu + "' is not a supported Cortex-M core (" + join(cpu_names()) + ")");
  t.isa = default_isa(t.cpu);
  if (!isa.empty()) {
    const std::string wanted = lower(isa);
    std::vector<std::string> allowed;
    bool ok = false;
    for (Isa candidate : supported_isas(t.cpu)) {
      allowed.push_back(isa_name(candidate));
      if (wanted == lower(isa_name(candidate))) {
        t.isa = candidate;
        ok = true;
      }
    }
    if (!ok)
      throw GraphError("isa '" + isa + "' is not available on " + cpu_name(t.cpu) + " (it supports " +
                       join(allowed) + ")");
  }
  return t;
}

TargetConfig parse_target(const std::string& target) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t plus = target.find('+', start);
    parts.push_back(target.substr(start, plus == std::string::npos ? std::string::npos : plus - start));
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
  std::string isa;
  bool int8 = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string p = lower(parts[i]);
    if (p == "int8") {
      int8 = true;
    } else if (p == "scalar" || p == "dsp" || p == "mve") {
      isa = p;
    } else {
      throw GraphError("target '" + target + "': unknown feature '" + parts[i] +
                       "' (expected int8, scalar, dsp or mve)");
    }
  }
  const TargetConfig config = make_target(parts[0], isa);  // names the supported cores
  if (!int8)
    throw GraphError("target '" + target + "' must say +int8: cortexm lowers to int8 kernels; did you mean '" +
                     target_string(config) + "'? (targets are <core>+int8, optionally +scalar, +dsp or +mve; "
                     "cores: " + join(cpu_names()) + ")");
  return config;
}

std::string target_string(const TargetConfig& target) {
  std::string s = std::string(cpu_name(target.cpu)) + "+int8";
  if (target.isa != default_isa(target.cpu)) s += "+" + lower(isa_name(target.isa));
  return s;
}

}  // namespace cortexm
