#include "bench_shapes.h"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace cortexm_bench {

namespace {

int32_t window_out(int32_t in, int32_t k, int32_t stride, int32_t dilation, int32_t before,
                   int32_t after) {
  const int64_t span = int64_t{in} + before + after - int64_t{dilation} * (k - 1) - 1;
  return span < 0 ? 0 : static_cast<int32_t>(span / stride + 1);
}

const char* const kRequired[] = {"name",     "kind",     "N",        "H",       "W",
                                 "C_in",     "C_out",    "KH",       "KW",      "stride_h",
                                 "stride_w", "pad_top",  "pad_left", "pad_bottom", "pad_right"};
const char* const kOptional[] = {"groups", "dilation_h", "dilation_w"};

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::runtime_error(where + ": " + what);
}

bool is_column(const std::string& name) {
  for (const char* c : kRequired)
    if (name == c) return true;
  for (const char* c : kOptional)
    if (name == c) return true;
  return false;
}

void check_shape(const LayerShape& s, const std::string& where) {
  for (int32_t v : {s.n, s.h, s.w, s.c_in, s.c_out, s.kh, s.kw, s.stride_h, s.stride_w, s.groups,
                    s.dilation_h, s.dilation_w})
    if (v < 1) fail(where, "sizes, strides, groups and dilations must be >= 1");
  for (int32_t v : {s.pad_top, s.pad_left, s.pad_bottom, s.pad_right})
    if (v < 0) fail(where, "pads must be >= 0");
  if (s.kind == LayerKind::kDepthwise && s.c_out % s.c_in != 0)
    fail(where, "depthwise C_out must be a multiple of C_in");
  if (s.kind == LayerKind::kConv && (s.c_in % s.groups != 0 || s.c_out % s.groups != 0))
    fail(where, "conv C_in and C_out must be multiples of groups");
  if (s.kind == LayerKind::kLinear &&
      (s.h != 1 || s.w != 1 || s.kh != 1 || s.kw != 1 || s.stride_h != 1 || s.stride_w != 1 ||
       s.groups != 1 || s.dilation_h != 1 || s.dilation_w != 1 ||
       s.pad_top + s.pad_left + s.pad_bottom + s.pad_right != 0))
    fail(where, "linear uses N, C_in and C_out only");
  if (s.out_h() < 1 || s.out_w() < 1) fail(where, "the kernel does not fit the padded input");
}

}  // namespace

const char* kind_name(LayerKind kind) {
  switch (kind) {
    case LayerKind::kConv: return "conv";
    case LayerKind::kDepthwise: return "depthwise";
    case LayerKind::kLinear: return "linear";
  }
  return "?";
}

int32_t LayerShape::out_h() const {
  return window_out(h, kh, stride_h, dilation_h, pad_top, pad_bottom);
}

int32_t LayerShape::out_w() const {
  return window_out(w, kw, stride_w, dilation_w, pad_left, pad_right);
}

int64_t LayerShape::macs() const {
  if (kind == LayerKind::kLinear) return int64_t{n} * c_in * c_out;
  const int64_t taps = int64_t{kh} * kw * (kind == LayerKind::kDepthwise ? 1 : c_in / groups);
  return output_elements() * taps;
}

ModelShapes read_shapes(const std::string& path) {
  std::ifstream file(path);
  if (!file) fail(path, "cannot open");
  ModelShapes model;
  model.model = std::filesystem::path(path).stem().string();
  std::vector<std::string> columns;
  std::string line;
  for (int line_no = 1; std::getline(file, line); ++line_no) {
    const std::string where = path + ":" + std::to_string(line_no);
    std::istringstream in(line);
    std::vector<std::string> fields;
    for (std::string f; in >> f;) fields.push_back(f);
    if (fields.empty() || fields[0][0] == '#') continue;
    if (columns.empty()) {
      columns = fields;
      for (const char* c : kRequired)
        if (std::find(columns.begin(), columns.end(), c) == columns.end())
          fail(where, std::string("header lacks column ") + c);
      for (const std::string& c : columns)
        if (!is_column(c)) fail(where, "unknown column " + c);
      continue;
    }
    if (fields.size() != columns.size())
      fail(where, std::to_string(fields.size()) + " fields, header has " +
                      std::to_string(columns.size()));
    std::map<std::string, int32_t> v;
    LayerShape s;
    bool target_only = false;
    for (size_t i = 0; i < columns.size(); ++i) {
      if (columns[i] == "name") {
        s.name = fields[i];
      } else if (columns[i] == "kind") {
        if (fields[i] == "conv") {
          s.kind = LayerKind::kConv;
        } else if (fields[i] == "depthwise") {
          s.kind = LayerKind::kDepthwise;
        } else if (fields[i] == "linear") {
          s.kind = LayerKind::kLinear;
        } else if (fields[i] == "avgpool" || fields[i] == "add" || fields[i] == "mul") {
          target_only = true;
        } else {
          fail(where, "kind " + fields[i] + " is not conv, depthwise, linear, avgpool, add or mul");
        }
      } else {
        size_t used = 0;
        long long x = 0;
        try {
          x = std::stoll(fields[i], &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != fields[i].size() || x < INT32_MIN || x > INT32_MAX)
          fail(where, columns[i] + " = " + fields[i] + " is not a 32-bit integer");
        v[columns[i]] = static_cast<int32_t>(x);
      }
    }
    if (target_only) continue;
    auto get = [&](const char* c, int32_t fallback) {
      const auto it = v.find(c);
      return it == v.end() ? fallback : it->second;
    };
    s.n = get("N", 1), s.h = get("H", 1), s.w = get("W", 1);
    s.c_in = get("C_in", 1), s.c_out = get("C_out", 1), s.kh = get("KH", 1), s.kw = get("KW", 1);
    s.stride_h = get("stride_h", 1), s.stride_w = get("stride_w", 1);
    s.pad_top = get("pad_top", 0), s.pad_left = get("pad_left", 0);
    s.pad_bottom = get("pad_bottom", 0), s.pad_right = get("pad_right", 0);
    s.groups = get("groups", 1), s.dilation_h = get("dilation_h", 1);
    s.dilation_w = get("dilation_w", 1);
    check_shape(s, where);
    for (const LayerShape& other : model.layers)
      if (other.name == s.name) fail(where, "duplicate layer name " + s.name);
    model.layers.push_back(s);
  }
  if (columns.empty()) fail(path, "no header line");
  return model;
}

std::vector<ModelShapes> read_shapes_dir(const std::string& dir) {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".txt")
      paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<ModelShapes> models;
  for (const std::string& p : paths) models.push_back(read_shapes(p));
  return models;
}

}  // namespace cortexm_bench
