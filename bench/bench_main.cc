// kernel_bench: cortexm's int8 conv, depthwise and linear kernels against XNNPACK's qs8 operators
// on real layer shapes (bench/shapes/*.txt), both single-threaded, in the same run. After the
// benchmarks it prints, per model, each layer's MAC/s for both, the ratio cortexm / XNNPACK, its
// geometric mean, and the largest output difference between the two (in LSB).
//
// Benchmarks are named <model>/<layer>/<cortexm|xnnpack>; --benchmark_filter selects among them.
// The default --benchmark_min_time is 0.05 s; passing the flag overrides it.
// CORTEXM_BENCH_SHAPES_DIR in the environment overrides the built-in shapes directory.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench_layer.h"
#include "bench_shapes.h"

namespace cortexm_bench {
namespace {

enum Impl { kCortexm = 0, kXnnpack = 1, kNumImpls = 2 };
const char* const kImplNames[kNumImpls] = {"cortexm", "xnnpack"};

struct LayerResult {
  std::vector<double> rates[kNumImpls];  // MAC/s of each reported run
  std::vector<int8_t> outputs[kNumImpls];
};

struct BenchKey {
  size_t model, layer;
  Impl impl;
};

std::vector<ModelShapes> g_models;
std::vector<std::vector<LayerResult>> g_results;  // [model][layer]
std::map<std::string, BenchKey> g_keys;           // benchmark name -> what it runs

uint32_t fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

// A layer's benchmarks run back to back, so one cached layer keeps memory small.
std::shared_ptr<const LayerData> layer_data(size_t model, size_t layer) {
  static size_t cached_model = SIZE_MAX, cached_layer = SIZE_MAX;
  static std::shared_ptr<const LayerData> cached;
  if (model != cached_model || layer != cached_layer) {
    cached.reset();
    const LayerShape& shape = g_models[model].layers[layer];
    cached = make_layer_data(shape, fnv1a(g_models[model].model + "/" + shape.name));
    cached_model = model, cached_layer = layer;
  }
  return cached;
}

void bench_layer(benchmark::State& state, BenchKey key) {
  const LayerShape& shape = g_models[key.model].layers[key.layer];
  std::unique_ptr<Runner> runner;
  try {
    auto data = layer_data(key.model, key.layer);
    runner = key.impl == kCortexm ? make_cortexm_runner(data) : make_xnnpack_runner(data);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) {
    runner->run();
    benchmark::ClobberMemory();
  }
  const double macs = static_cast<double>(shape.macs());
  state.counters["MACs"] = macs;
  state.counters["MAC/s"] = benchmark::Counter(macs, benchmark::Counter::kIsIterationInvariantRate);
  g_results[key.model][key.layer].outputs[key.impl] = runner->output();
}

// The console output, plus each run's MAC/s kept for the tables.
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  CollectingReporter()
      : ConsoleReporter(isatty(fileno(stdout)) ? OO_ColorTabular : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration) continue;  // skipped runs carry no MAC/s
      const auto key = g_keys.find(run.run_name.function_name);
      const auto rate = run.counters.find("MAC/s");
      if (key == g_keys.end() || rate == run.counters.end()) continue;
      g_results[key->second.model][key->second.layer].rates[key->second.impl].push_back(
          rate->second.value);
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string si(double v) {  // 1234567 -> "1.23M"
  const char* const units[] = {"", "k", "M", "G", "T"};
  int u = 0;
  while (v >= 999.5 && u < 4) v /= 1000.0, ++u;  // 999.6 prints as "1k", not "1e+03"
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%s", v, units[u]);
  return buf;
}

struct GeoMean {
  double log_sum = 0;
  int count = 0;
  void add(double x) { log_sum += std::log(x), ++count; }
  std::string str() const {
    if (count == 0) return "-";
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3g (n=%d)", std::exp(log_sum / count), count);
    return buf;
  }
};

void print_tables(bool with_peer) {
  bool any_over_one_lsb = false;
  for (size_t m = 0; m < g_models.size(); ++m) {
    const ModelShapes& model = g_models[m];
    size_t width = 5;
    bool any = false;
    for (size_t l = 0; l < model.layers.size(); ++l) {
      if (g_results[m][l].rates[kCortexm].empty() && g_results[m][l].rates[kXnnpack].empty())
        continue;
      any = true;
      width = std::max(width, model.layers[l].name.size());
    }
    if (!any) continue;
    const int w = static_cast<int>(width);
    std::printf("\n%s: %s, single-threaded, MAC/s measured in this run\n", model.model.c_str(),
                with_peer ? "cortexm vs XNNPACK" : "cortexm only (no XNNPACK peer)");
    std::printf("%-*s  %-9s  %8s  %10s  %10s  %8s  %9s\n", w, "layer", "kind", "MACs",
                "cortexm", "XNNPACK", "ratio", "max|diff|");
    GeoMean all, by_kind[3];
    for (size_t l = 0; l < model.layers.size(); ++l) {
      const LayerShape& s = model.layers[l];
      const LayerResult& r = g_results[m][l];
      if (r.rates[kCortexm].empty() && r.rates[kXnnpack].empty()) continue;
      const double ours = r.rates[kCortexm].empty() ? 0 : median(r.rates[kCortexm]);
      const double peer = r.rates[kXnnpack].empty() ? 0 : median(r.rates[kXnnpack]);
      std::string ratio = "-", diff = "-";
      if (ours > 0 && peer > 0) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3g", ours / peer);
        ratio = buf;
        all.add(ours / peer);
        by_kind[static_cast<int>(s.kind)].add(ours / peer);
      }
      const auto& a = r.outputs[kCortexm];
      const auto& b = r.outputs[kXnnpack];
      if (!a.empty() && a.size() == b.size()) {
        int max_diff = 0;
        for (size_t i = 0; i < a.size(); ++i)
          max_diff = std::max(max_diff, std::abs(int{a[i]} - int{b[i]}));
        diff = std::to_string(max_diff);
        if (max_diff > 1) diff += " !", any_over_one_lsb = true;
      }
      std::printf("%-*s  %-9s  %8s  %10s  %10s  %8s  %9s\n", w, s.name.c_str(), kind_name(s.kind),
                  si(static_cast<double>(s.macs())).c_str(), ours > 0 ? si(ours).c_str() : "-",
                  peer > 0 ? si(peer).c_str() : "-", ratio.c_str(), diff.c_str());
    }
    if (with_peer) {
      std::printf("geomean ratio cortexm/XNNPACK: %s", all.str().c_str());
      for (int k = 0; k < 3; ++k)
        if (by_kind[k].count > 0)
          std::printf("; %s %s", kind_name(static_cast<LayerKind>(k)), by_kind[k].str().c_str());
      std::printf("\n");
    }
  }
  if (any_over_one_lsb)
    std::printf("\n'!': cortexm and XNNPACK differ by more than 1 LSB on that layer.\n");
}

}  // namespace
}  // namespace cortexm_bench

int main(int argc, char** argv) {
  using namespace cortexm_bench;
  // A default first, so that a --benchmark_min_time given on the command line wins.
  static char default_min_time[] = "--benchmark_min_time=0.05";
  std::vector<char*> args(argv, argv + argc);
  args.insert(args.begin() + 1, default_min_time);
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;

  const char* env_dir = std::getenv("CORTEXM_BENCH_SHAPES_DIR");
  const std::string dir = env_dir != nullptr ? env_dir : CORTEXM_BENCH_SHAPES_DIR;
  try {
    g_models = read_shapes_dir(dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernel_bench: %s\n", e.what());
    return 1;
  }
  if (g_models.empty()) {
    std::fprintf(stderr, "kernel_bench: no *.txt shape files in %s\n", dir.c_str());
    return 1;
  }

  std::string why_not;
  const bool with_peer = xnnpack_init(&why_not);
  if (!with_peer) std::fprintf(stderr, "kernel_bench: no XNNPACK peer: %s\n", why_not.c_str());

  g_results.resize(g_models.size());
  for (size_t m = 0; m < g_models.size(); ++m) {
    g_results[m].resize(g_models[m].layers.size());
    for (size_t l = 0; l < g_models[m].layers.size(); ++l) {
      for (int impl = 0; impl < (with_peer ? kNumImpls : 1); ++impl) {
        const BenchKey key{m, l, static_cast<Impl>(impl)};
        const std::string name =
            g_models[m].model + "/" + g_models[m].layers[l].name + "/" + kImplNames[impl];
        g_keys[name] = key;
        benchmark::RegisterBenchmark(name.c_str(), bench_layer, key)
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }

  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_tables(with_peer);
  benchmark::Shutdown();
  return 0;
}
