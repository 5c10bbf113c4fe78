#include "graph/serialize.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "graph/errors.h"

namespace cortexm {

namespace {

using json = nlohmann::json;

constexpr char kMagic[8] = {'C', 'M', 'X', 'G', 'R', 'A', 'P', 'H'};
constexpr size_t kPrefix = 20;  // magic, version, header length
constexpr size_t kAlign = 64;

uint32_t crc32(const uint8_t* data, size_t n) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= data[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// JSON nesting a graph header may have: real headers open 6 levels (header.nodes[i].attrs.name.ints).
// The parser refuses deeper input before it builds it, so nothing below meets untrusted depth.
constexpr int kMaxJsonDepth = 64;
// Characters of a bad value an error message shows.
constexpr size_t kExcerptChars = 80;

// Appends `v` as JSON (strings escaped to ASCII) and stops once `out` reaches `limit` characters.
// Each level of nesting writes a bracket before it recurses, so the recursion is at most `limit`
// deep, however deep `v` is.
void append_excerpt(const json& v, std::string& out, size_t limit) {
  const auto escaped = [](const std::string& s) {
    return json(s).dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace);
  };
  if (out.size() >= limit) return;
  if (v.is_array() || v.is_object()) {
    out += v.is_array() ? '[' : '{';
    bool first = true;
    for (auto it = v.begin(); it != v.end() && out.size() < limit; ++it, first = false) {
      if (!first) out += ", ";
      if (v.is_object()) out += escaped(it.key().substr(0, limit)) + ": ";
      append_excerpt(it.value(), out, limit);
    }
    out += v.is_array() ? ']' : '}';
  } else if (v.is_string()) {
    out += escaped(v.get_ref<const std::string&>().substr(0, limit - out.size() + 1));
  } else {
    out += v.dump();
  }
}

// A bad value as an error message shows it: at most kExcerptChars characters, "..." when cut.
std::string excerpt(const json& v) {
  std::string out;
  append_excerpt(v, out, kExcerptChars);
  if (out.size() > kExcerptChars) {
    out.resize(kExcerptChars);
    out += "...";
  }
  return out;
}

// Arbitrary bytes (a JSON parser's message quoting the file) as printable ASCII, cut to `limit`.
std::string printable(const std::string& s, size_t limit) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size() && out.size() < limit; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (out.size() >= limit) out += "...";
  return out;
}

json attr_to_json(const AttrValue& v) {
  struct Visitor {
    json operator()(const NoneAttr&) { return json{{"none", nullptr}}; }
    json operator()(int64_t x) { return json{{"int", x}}; }
    json operator()(double x) { return json{{"float", x}}; }
    json operator()(bool x) { return json{{"bool", x}}; }
    json operator()(const std::string& x) { return json{{"str", x}}; }
    json operator()(const std::vector<int64_t>& x) { return json{{"ints", x}}; }
    json operator()(const std::vector<double>& x) { return json{{"floats", x}}; }
    json operator()(DType x) { return json{{"dtype", dtype_name(x)}}; }
  };
  return std::visit(Visitor{}, v);
}

json info_to_json(const TensorInfo& info) {
  json j;
  j["dtype"] = dtype_name(info.dtype);
  j["shape"] = info.shape;
  j["dim_order"] = info.dim_order;
  if (info.qparams) {
    const QuantParams& q = *info.qparams;
    j["qparams"] = {{"scales", q.scales}, {"zero_points", q.zero_points}, {"axis", q.axis},
                    {"quant_min", q.quant_min}, {"quant_max", q.quant_max}};
  } else {
    j["qparams"] = nullptr;
  }
  return j;
}

// Reading, with errors that say where in the file the problem is.
class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw GraphError(origin_ + ": " + where + ": " + what);
  }

  const json& field(const json& obj, const char* key, const std::string& where) const {
    if (!obj.is_object()) fail(where, "must be an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(where, std::string("missing field '") + key + "'");
    return *it;
  }

  template <typename T>
  T get(const json& obj, const char* key, const std::string& where) const {
    const json& v = field(obj, key, where);
    const std::string at = where + "." + key;
    if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) {
      return integer<T>(v, at);
    } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      return integers(v, at);
    } else {
      try {
        return v.get<T>();
      } catch (const json::exception&) {
        fail(at, "has the wrong type: " + excerpt(v));
      }
    }
  }

  // An integer field: JSON floats (2.7, 1e300) are errors, not truncated or cast out of range.
  template <typename T>
  T integer(const json& v, const std::string& where) const {
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) fail(where, excerpt(v) + " is out of range");
      return static_cast<T>(u);
    }
    if (v.is_number_integer()) {
      const int64_t i = v.get<int64_t>();
      if (i < 0 && std::is_unsigned_v<T>) fail(where, excerpt(v) + " must not be negative");
      return static_cast<T>(i);
    }
    fail(where, "must be an integer, got " + excerpt(v));
  }

  std::vector<int64_t> integers(const json& v, const std::string& where) const {
    if (!v.is_array()) fail(where, "must be a list of integers, got " + excerpt(v));
    std::vector<int64_t> out;
    for (size_t i = 0; i < v.size(); ++i) out.push_back(integer<int64_t>(v[i], where + "[" + std::to_string(i) + "]"));
    return out;
  }

  AttrValue attr(const json& j, const std::string& where) const {
    if (!j.is_object() || j.size() != 1) fail(where, "must be an object with one type tag, got " + excerpt(j));
    const std::string tag = j.begin().key();
    const json& v = j.begin().value();
    if (tag == "int") return integer<int64_t>(v, where);
    if (tag == "ints") return integers(v, where);
    try {
      if (tag == "none") return NoneAttr{};
      if (tag == "float") return v.get<double>();
      if (tag == "bool") return v.get<bool>();
      if (tag == "str") return v.get<std::string>();
      if (tag == "floats") return v.get<std::vector<double>>();
      if (tag == "dtype") return parse_dtype(v.get<std::string>());
    } catch (const json::exception&) {
      fail(where, "value " + excerpt(v) + " is not a valid " + tag);
    } catch (const GraphError& e) {
      fail(where, e.what());
    }
    fail(where, "unknown attribute type tag '" + tag + "'");
  }

  TensorInfo info(const json& j, const std::string& where) const {
    TensorInfo info;
    try {
      info.dtype = parse_dtype(get<std::string>(j, "dtype", where));
    } catch (const GraphError& e) {
      fail(where + ".dtype", e.what());
    }
    info.shape = get<std::vector<int64_t>>(j, "shape", where);
    for (int64_t d : info.shape)
      if (d < 0) fail(where + ".shape", "has a negative dim " + shape_to_string(info.shape));
    try {
      info.nbytes();
    } catch (const GraphError& e) {
      fail(where + ".shape", e.what());
    }
    info.dim_order = get<std::vector<int64_t>>(j, "dim_order", where);
    if (!info.dim_order.empty()) {
      std::vector<int64_t> sorted = info.dim_order;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < sorted.size(); ++i)
        if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != info.shape.size())
          fail(where + ".dim_order", shape_to_string(info.dim_order) + " is not a permutation of " +
                                         std::to_string(info.shape.size()) + " dims");
    }
    const json& q = field(j, "qparams", where);
    if (!q.is_null()) {
      QuantParams p;
      const std::string qw = where + ".qparams";
      p.scales = get<std::vector<double>>(q, "scales", qw);
      p.zero_points = get<std::vector<int64_t>>(q, "zero_points", qw);
      p.axis = get<int64_t>(q, "axis", qw);
      p.quant_min = get<int64_t>(q, "quant_min", qw);
      p.quant_max = get<int64_t>(q, "quant_max", qw);
      if (p.scales.empty() || p.scales.size() != p.zero_points.size())
        fail(qw, "needs as many zero points as scales, and at least one");
      for (double s : p.scales)
        if (!(s > 0.0) || !std::isfinite(s)) fail(qw, "scale " + std::to_string(s) + " must be finite and > 0");
      if (p.axis < -1 || p.axis >= static_cast<int64_t>(info.shape.size()))
        fail(qw, "axis " + std::to_string(p.axis) + " is out of range");
      if (p.quant_min > p.quant_max) fail(qw, "quant_min > quant_max");
      info.qparams = p;
    }
    return info;
  }

 private:
  std::string origin_;
};

void put_u32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void put_u64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
uint64_t get_le(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
  return v;
}

}  // namespace

std::string serialize_graph(const Graph& graph) {
  json header;
  header["format"] = "cortexm-graph";
  header["version"] = kGraphFormatVersion;
  json values = json::array();
  std::string blob;
  auto value_json = [&](const Value& v, const char* kind) {
    json j = info_to_json(v.info);
    j["name"] = v.name;
    j["kind"] = kind;
    if (v.kind == ValueKind::kConstant) {
      blob.resize(align_up(blob.size()), '\0');
      j["offset"] = blob.size();
      j["nbytes"] = v.data.nbytes();
      blob.append(static_cast<const char*>(v.data.raw()), v.data.nbytes());
    }
    return j;
  };
  for (ValueId id : graph.inputs()) values.push_back(value_json(graph.value(id), "input"));
  for (ValueId id : graph.constants()) values.push_back(value_json(graph.value(id), "constant"));
  json nodes = json::array();
  for (NodeId id : graph.order()) {
    const Node& n = graph.node(id);
    json jn;
    jn["name"] = n.name;
    jn["op"] = n.op;
    json ins = json::array();
    for (ValueId in : n.inputs) ins.push_back(in == kNoValue ? json(nullptr) : json(graph.value(in).name));
    jn["inputs"] = ins;
    json attrs = json::object();
    for (const auto& [key, value] : n.attrs) attrs[key] = attr_to_json(value);
    jn["attrs"] = attrs;
    json outs = json::array();
    for (ValueId out : n.outputs) {
      outs.push_back(graph.value(out).name);
      values.push_back(value_json(graph.value(out), "node_output"));
    }
    jn["outputs"] = outs;
    jn["source"] = n.source;
    jn["meta"] = n.meta;
    nodes.push_back(jn);
  }
  header["values"] = values;
  header["nodes"] = nodes;
  json inputs = json::array(), outputs = json::array();
  for (ValueId id : graph.inputs()) inputs.push_back(graph.value(id).name);
  for (ValueId id : graph.outputs()) outputs.push_back(graph.value(id).name);
  header["inputs"] = inputs;
  header["outputs"] = outputs;

  const std::string text = header.dump(1);
  std::string out(kMagic, sizeof(kMagic));
  put_u32(out, kGraphFormatVersion);
  put_u64(out, text.size());
  out += text;
  out.resize(align_up(out.size()), '\0');
  out += blob;
  put_u32(out, crc32(reinterpret_cast<const uint8_t*>(blob.data()), blob.size()));
  return out;
}

Graph deserialize_graph(const std::string& bytes, const std::string& origin) {
  Reader r(origin);
  if (bytes.size() < kPrefix || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    r.fail("header", "not a cortexm graph file (bad magic)");
  const uint32_t version = static_cast<uint32_t>(get_le(bytes, 8, 4));
  if (version != kGraphFormatVersion)
    r.fail("header", "format version " + std::to_string(version) + " is not supported (this cortexm reads version " +
                         std::to_string(kGraphFormatVersion) + ")");
  const uint64_t header_len = get_le(bytes, 12, 8);
  if (header_len > bytes.size() - kPrefix) r.fail("header", "truncated (header length " + std::to_string(header_len) + ")");
  const size_t blob_begin = align_up(kPrefix + header_len);
  if (bytes.size() < blob_begin + 4) r.fail("blob", "truncated: no constant data or checksum");
  const size_t blob_size = bytes.size() - blob_begin - 4;
  const auto* blob = reinterpret_cast<const uint8_t*>(bytes.data() + blob_begin);
  const uint32_t stored_crc = static_cast<uint32_t>(get_le(bytes, bytes.size() - 4, 4));
  if (crc32(blob, blob_size) != stored_crc)
    r.fail("blob", "checksum mismatch: the constant data is damaged or truncated");

  json header;
  const auto refuse_deep_nesting = [&](int depth, json::parse_event_t event, json&) {
    const bool opens = event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
    if (opens && depth >= kMaxJsonDepth)
      r.fail("header", "JSON nested deeper than kMaxJsonDepth = " + std::to_string(kMaxJsonDepth) +
                           " levels (a graph header has 6)");
    return true;
  };
  try {
    header = json::parse(bytes.begin() + kPrefix, bytes.begin() + kPrefix + header_len, refuse_deep_nesting);
  } catch (const json::exception& e) {
    r.fail("header", "invalid JSON: " + printable(e.what(), 200));
  }

  Graph graph;
  std::map<std::string, ValueId> by_name;
  std::map<std::string, TensorInfo> stored_info;
  const json& values = r.field(header, "values", "header");
  if (!values.is_array()) r.fail("values", "must be a list");
  auto lookup = [&](const std::string& name, const std::string& where) {
    auto it = by_name.find(name);
    if (it == by_name.end()) r.fail(where, "refers to unknown value '" + name + "'");
    return it->second;
  };
  std::map<std::string, const json*> value_json;
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string where = "values[" + std::to_string(i) + "]";
    const std::string name = r.get<std::string>(values[i], "name", where);
    if (value_json.count(name)) r.fail(where, "value '" + name + "' is defined twice");
    value_json[name] = &values[i];
    stored_info[name] = r.info(values[i], where);
  }
  for (const auto& name : r.get<std::vector<std::string>>(header, "inputs", "header")) {
    if (!value_json.count(name)) r.fail("inputs", "unknown value '" + name + "'");
    if (r.get<std::string>(*value_json[name], "kind", name) != "input") r.fail("inputs", "'" + name + "' is not an input");
    by_name[name] = graph.add_input(name, stored_info[name]);
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string where = "values[" + std::to_string(i) + "]";
    const std::string kind = r.get<std::string>(values[i], "kind", where);
    if (kind != "input" && kind != "constant" && kind != "node_output")
      r.fail(where, "unknown kind '" + kind + "'");
    if (kind != "constant") continue;
    const std::string name = r.get<std::string>(values[i], "name", where);
    const uint64_t offset = r.get<uint64_t>(values[i], "offset", where);
    const uint64_t nbytes = r.get<uint64_t>(values[i], "nbytes", where);
    // Both checks come before the allocation: the file cannot make us allocate more than it holds.
    const TensorInfo& info = stored_info[name];
    if (nbytes != info.nbytes())
      r.fail(where, "constant '" + name + "' nbytes " + std::to_string(nbytes) + " does not match " +
                        info_to_string(info) + " (" + std::to_string(info.nbytes()) + " bytes)");
    if (offset > blob_size || nbytes > blob_size - offset)
      r.fail(where, "constant '" + name + "' data [" + std::to_string(offset) + ", +" + std::to_string(nbytes) +
                        ") lies outside the blob of " + std::to_string(blob_size) + " bytes");
    Tensor data(info);
    if (nbytes) std::memcpy(data.raw(), blob + offset, nbytes);
    by_name[name] = graph.add_constant(name, std::move(data));
  }
  const json& nodes = r.field(header, "nodes", "header");
  if (!nodes.is_array()) r.fail("nodes", "must be a list");
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string where = "nodes[" + std::to_string(i) + "]";
    const json& jn = nodes[i];
    const std::string name = r.get<std::string>(jn, "name", where);
    const std::string op = r.get<std::string>(jn, "op", where);
    std::vector<ValueId> inputs;
    const json& ins = r.field(jn, "inputs", where);
    if (!ins.is_array()) r.fail(where + ".inputs", "must be a list");
    for (const json& in : ins) {
      if (in.is_null()) {
        inputs.push_back(kNoValue);
      } else if (in.is_string()) {
        inputs.push_back(lookup(in.get<std::string>(), where + ".inputs"));
      } else {
        r.fail(where + ".inputs", "entries must be value names or null");
      }
    }
    Attrs attrs;
    const json& ja = r.field(jn, "attrs", where);
    if (!ja.is_object()) r.fail(where + ".attrs", "must be an object");
    for (auto it = ja.begin(); it != ja.end(); ++it)
      attrs.emplace_back(it.key(), r.attr(it.value(), where + ".attrs." + it.key()));
    std::vector<ValueId> outs;
    try {
      outs = graph.call(op, inputs, attrs, kNoNode, name, r.get<std::string>(jn, "source", where));
    } catch (const GraphError& e) {
      r.fail(where, e.what());
    } catch (const UnsupportedError& e) {
      r.fail(where, e.what());
    }
    Node& node = graph.mutable_node(graph.producer(outs[0]));
    if (node.name != name) r.fail(where, "node name '" + name + "' is used twice");
    node.meta = r.get<std::map<std::string, std::string>>(jn, "meta", where);
    const auto out_names = r.get<std::vector<std::string>>(jn, "outputs", where);
    if (out_names.size() != outs.size())
      r.fail(where, "lists " + std::to_string(out_names.size()) + " outputs, op " + op + " gives " +
                        std::to_string(outs.size()));
    for (size_t k = 0; k < outs.size(); ++k) {
      const std::string& out_name = out_names[k];
      if (!stored_info.count(out_name)) r.fail(where + ".outputs", "value '" + out_name + "' has no entry in values");
      if (by_name.count(out_name)) r.fail(where + ".outputs", "value '" + out_name + "' is defined twice");
      Value& v = graph.mutable_value(outs[k]);
      const TensorInfo& stored = stored_info[out_name];
      if (stored.shape != v.info.shape || stored.dtype != v.info.dtype)
        r.fail(where, "output '" + out_name + "' is recorded as " + info_to_string(stored) +
                          " but its inputs give " + info_to_string(v.info));
      graph.rename_value(outs[k], out_name);
      v.info = stored;
      by_name[out_name] = outs[k];
    }
  }
  std::vector<ValueId> outputs;
  for (const auto& name : r.get<std::vector<std::string>>(header, "outputs", "header"))
    outputs.push_back(lookup(name, "outputs"));
  graph.set_outputs(outputs);
  try {
    graph.verify();
  } catch (const GraphError& e) {
    r.fail("graph", e.what());
  }
  return graph;
}

namespace {

[[noreturn]] void file_error(int err, const std::string& what, const std::string& path) {
  throw FileError(err, what + ": " + std::strerror(err), path);
}

// write() until every byte is written, retrying on EINTR; false with errno set otherwise.
bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// A writer's temporary name: `.<name>.cortexm-<pid>-<n>.tmp` beside the destination. The writer holds
// an flock on it from creation until it is renamed, so a temporary that can be locked is the
// leftover of a killed writer.
std::string temporary_prefix(const std::string& name) { return "." + name + ".cortexm-"; }

// Removes the temporaries of writers of `name` in `dir` that were killed between creating their
// temporary and renaming it (kill -9 cannot be caught; the next write to the path cleans up).
void remove_abandoned_temporaries(const std::string& dir, const std::string& name) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  const std::string prefix = temporary_prefix(name);
  while (const dirent* e = ::readdir(d)) {
    const std::string entry = e->d_name;
    if (entry.size() <= prefix.size() + 4 || entry.compare(0, prefix.size(), prefix) != 0 ||
        entry.compare(entry.size() - 4, 4, ".tmp") != 0)
      continue;
    const std::string tmp = dir + "/" + entry;
    const int fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) continue;
    struct stat locked, named;
    // Unlocked and still the same file under that name: its writer is gone.
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::fstat(fd, &locked) == 0 &&
        ::lstat(tmp.c_str(), &named) == 0 && locked.st_dev == named.st_dev && locked.st_ino == named.st_ino)
      ::unlink(tmp.c_str());
    ::close(fd);
  }
  ::closedir(d);
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& bytes) {
  check_path(path);
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  // A replaced file keeps its mode; a new one gets open()'s 0666 minus the umask (applied by the
  // kernel: reading the umask would mean setting it, which races with other threads).
  struct stat st;
  const bool replacing = ::stat(path.c_str(), &st) == 0;
  // The bytes go to an unnamed file in the destination's directory (O_TMPFILE) that gets a name
  // only once complete and fsynced. Where the file system has no O_TMPFILE, a named temporary
  // takes its place.
  std::string tmp;
  int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  const bool unnamed = fd >= 0;
  if (!unnamed && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    for (unsigned attempt = 0; fd < 0 && attempt < 100; ++attempt) {
      tmp = dir + "/" + temporary_prefix(name) + std::to_string(::getpid()) + "-" + std::to_string(attempt) + ".tmp";
      fd = ::open(tmp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
      if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) tmp.clear();
  }
  if (fd < 0) file_error(errno, "cannot create a temporary file next to it", path);
  const auto fail = [&](const char* what) {
    const int err = errno;
    if (!tmp.empty()) ::unlink(tmp.c_str());
    ::close(fd);
    file_error(err, what, path);
  };
  if (::flock(fd, LOCK_EX) != 0) fail("cannot lock the temporary file");
  if (replacing && ::fchmod(fd, st.st_mode & 07777) != 0) fail("cannot set the mode of the temporary file");
  if (!write_all(fd, bytes.data(), bytes.size())) fail("write failed");
  if (::fsync(fd) != 0) fail("fsync failed");
  remove_abandoned_temporaries(dir, name);
  bool in_place = false;
  if (unnamed) {
    const std::string self = "/proc/self/fd/" + std::to_string(fd);
    // A new file is linked at its destination directly; a replacement needs a name to rename.
    in_place = !replacing && ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) == 0;
    for (unsigned attempt = 0; !in_place; ++attempt) {
      tmp = dir + "/" + temporary_prefix(name) + std::to_string(::getpid()) + "-" + std::to_string(attempt) + ".tmp";
      if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW) == 0) break;
      if (errno != EEXIST || attempt == 100) {
        tmp.clear();
        fail("cannot link the temporary file");
      }
    }
  }
  if (!in_place && ::rename(tmp.c_str(), path.c_str()) != 0) fail("rename failed");
  // The lock is held until the temporary's name is gone.
  if (::close(fd) != 0 && errno != EINTR) file_error(errno, "close failed", path);
  // Make the new name itself durable.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) file_error(errno, "cannot open its directory to fsync it", path);
  if (::fsync(dfd) != 0 && errno != EINVAL) {
    const int err = errno;
    ::close(dfd);
    file_error(err, "fsync of its directory failed", path);
  }
  ::close(dfd);
}

namespace {

const char* file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// A regular file of at most `max_bytes`, or a FileError naming `path`: EISDIR for a directory,
// EINVAL for another file that is not regular (a device, FIFO or socket), EFBIG for a larger file.
void check_regular(const struct stat& st, uint64_t max_bytes, const std::string& kind, const std::string& path) {
  if (S_ISDIR(st.st_mode)) file_error(EISDIR, "cannot read a " + kind + " from a directory", path);
  if (!S_ISREG(st.st_mode))
    file_error(EINVAL, std::string("cannot read a ") + kind + " from " + file_type_name(st.st_mode) +
                           ": cortexm reads only regular files", path);
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    file_error(EFBIG, "is " + std::to_string(st.st_size) + " bytes, more than the " + std::to_string(max_bytes) +
                          " a " + kind + " can hold", path);
}

}  // namespace

void check_path(const std::string& path) {
  if (path.find('\0') != std::string::npos)
    throw GraphError("path '" + printable(path, 200) + "' contains a NUL character");
}

std::string read_file(const std::string& path, uint64_t max_bytes, const std::string& kind) {
  check_path(path);
  // stat first, so a device or FIFO is refused before it is opened; the descriptor is checked
  // again (the path may have been replaced) and opened non-blocking, so a FIFO never blocks.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) file_error(errno, "cannot read", path);
  check_regular(st, max_bytes, kind, path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) file_error(errno, "cannot read", path);
  const auto fail = [&](int err, const std::string& what) {
    ::close(fd);
    file_error(err, what, path);
  };
  if (::fstat(fd, &st) != 0) fail(errno, "cannot stat");
  try {
    check_regular(st, max_bytes, kind, path);
  } catch (const FileError&) {
    ::close(fd);
    throw;
  }
  std::string bytes;
  bytes.reserve(static_cast<size_t>(st.st_size));
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(errno, "read failed");
    if (n == 0) break;
    bytes.append(chunk, static_cast<size_t>(n));
    if (bytes.size() > max_bytes)  // grew while being read
      fail(EFBIG, "grew past the " + std::to_string(max_bytes) + " bytes a " + kind + " can hold while being read");
  }
  ::close(fd);
  return bytes;
}

void save_graph(const Graph& graph, const std::string& path) {
  write_file_atomically(path, serialize_graph(graph));
}

Graph load_graph(const std::string& path) {
  return deserialize_graph(read_file(path, kMaxGraphFileBytes, "graph file"), path);
}

}  // namespace cortexm
