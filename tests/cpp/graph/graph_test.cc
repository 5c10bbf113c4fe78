#include "graph/graph.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "graph/errors.h"
#include "graph/interpreter.h"
#include "graph/serialize.h"

namespace cortexm {
namespace {

TensorInfo f32(std::vector<int64_t> shape) {
  TensorInfo info;
  info.shape = std::move(shape);
  return info;
}

Tensor filled(std::vector<int64_t> shape, float start, float step) {
  Tensor t(f32(std::move(shape)));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + step * static_cast<float>(i);
  return t;
}

const Attrs kConvAttrs = {{"stride", std::vector<int64_t>{1, 1}},
                          {"padding", std::vector<int64_t>{1, 1}},
                          {"dilation", std::vector<int64_t>{1, 1}}};

// x -> conv -> relu -> view, the building block most tests edit.
struct SmallGraph {
  Graph g;
  ValueId x, w, conv, relu, view;
  SmallGraph() {
    x = g.add_input("x", f32({1, 2, 5, 5}));
    w = g.add_constant("w", filled({3, 2, 3, 3}, -0.5f, 0.01f));
    conv = g.call("aten.convolution.default", {x, w, kNoValue}, kConvAttrs)[0];
    relu = g.call("aten.relu.default", {conv}, {})[0];
    view = g.call("aten.view_copy.default", {relu}, {{"size", std::vector<int64_t>{1, -1}}})[0];
    g.set_outputs({view});
  }
};

TEST(Graph, BuildsAndInfersShapes) {
  SmallGraph s;
  EXPECT_EQ(s.g.value(s.conv).info.shape, (std::vector<int64_t>{1, 3, 5, 5}));
  EXPECT_EQ(s.g.value(s.view).info.shape, (std::vector<int64_t>{1, 75}));
  EXPECT_EQ(s.g.num_nodes(), 3u);
  EXPECT_EQ(s.g.op_counts().at("aten.relu.default"), 1);
  EXPECT_NO_THROW(s.g.verify());
  // Defaults are filled in, in schema order.
  const Node& conv = s.g.node(s.g.producer(s.conv));
  EXPECT_EQ(conv.attrs.size(), 6u);
  EXPECT_EQ(conv.attrs[5].first, "groups");
  EXPECT_EQ(std::get<int64_t>(conv.attrs[5].second), 1);
}

TEST(Graph, UnknownOpIsUnsupported) {
  Graph g;
  const ValueId x = g.add_input("x", f32({2}));
  EXPECT_THROW(g.call("aten.erfinv.default", {x}, {}), UnsupportedError);
}

TEST(Graph, WrongArityAndAttributesAreErrors) {
  SmallGraph s;
  EXPECT_THROW(s.g.call("aten.relu.default", {s.x, s.x}, {}), GraphError);
  EXPECT_THROW(s.g.call("aten.relu.default", {}, {}), GraphError);
  EXPECT_THROW(s.g.call("aten.convolution.default", {s.x, s.w}, {}), GraphError);  // no stride
  EXPECT_THROW(s.g.call("aten.hardtanh.default", {s.x}, {{"low", 0.0}}), GraphError);
  EXPECT_THROW(s.g.call("aten.hardtanh.default", {s.x}, {{"min_val", std::string("a")}}), GraphError);
  try {
    s.g.call("aten.view_copy.default", {s.x}, {{"size", std::vector<int64_t>{7, -1}}}, kNoNode, "bad_view");
    FAIL();
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("bad_view"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("aten.view_copy.default"), std::string::npos) << e.what();
  }
}

TEST(Graph, ShapeInferenceRejectsMismatchedConvolution) {
  Graph g;
  const ValueId x = g.add_input("x", f32({1, 4, 5, 5}));
  const ValueId w = g.add_constant("w", filled({3, 3, 3, 3}, 0, 1));  // 3 in-channels, not 4
  EXPECT_THROW(g.call("aten.convolution.default", {x, w, kNoValue}, kConvAttrs), GraphError);
}

TEST(Graph, IntegersAreAcceptedForFloatAttributes) {
  SmallGraph s;
  const ValueId h = s.g.call("aten.hardtanh.default", {s.x}, {{"min_val", int64_t{0}}, {"max_val", int64_t{6}}})[0];
  EXPECT_EQ(std::get<double>(s.g.node(s.g.producer(h)).attrs[1].second), 6.0);
}

TEST(Graph, InsertBeforeAndReplaceAllUses) {
  SmallGraph s;
  const NodeId relu = s.g.producer(s.relu);
  const ValueId clamp =
      s.g.call("aten.hardtanh.default", {s.conv}, {{"min_val", 0.0}, {"max_val", 6.0}}, relu)[0];
  s.g.replace_input(relu, 0, clamp);
  EXPECT_EQ(s.g.order()[1], s.g.producer(clamp));
  EXPECT_NO_THROW(s.g.verify());
  s.g.replace_all_uses(s.relu, clamp);
  EXPECT_TRUE(s.g.users(s.relu).empty());
  s.g.erase_node(relu);
  EXPECT_EQ(s.g.num_nodes(), 3u);
  EXPECT_NO_THROW(s.g.verify());
}

TEST(Graph, EraseRefusesUsedNodes) {
  SmallGraph s;
  EXPECT_THROW(s.g.erase_node(s.g.producer(s.conv)), GraphError);
  EXPECT_THROW(s.g.erase_node(s.g.producer(s.view)), GraphError);  // graph output
}

TEST(Graph, DeadCodeEliminationRemovesUnusedChainsAndConstants) {
  SmallGraph s;
  const ValueId unused_w = s.g.add_constant("unused_w", filled({3, 2, 3, 3}, 0, 1));
  const ValueId dead = s.g.call("aten.convolution.default", {s.x, unused_w, kNoValue}, kConvAttrs)[0];
  s.g.call("aten.relu.default", {dead}, {});
  EXPECT_EQ(s.g.num_nodes(), 5u);
  EXPECT_EQ(s.g.dead_code_elimination(), 2);
  EXPECT_EQ(s.g.num_nodes(), 3u);
  EXPECT_EQ(s.g.constants().size(), 1u);
  EXPECT_NO_THROW(s.g.verify());
  EXPECT_EQ(s.g.dead_code_elimination(), 0);
}

TEST(Graph, TopologicalSortRepairsOrder) {
  SmallGraph s;
  // Insert a consumer of relu before conv: out of order until sorted.
  const ValueId early = s.g.call("aten.relu.default", {s.relu}, {}, s.g.producer(s.conv))[0];
  s.g.set_outputs({s.view, early});
  EXPECT_THROW(s.g.verify(), GraphError);
  s.g.topological_sort();
  EXPECT_NO_THROW(s.g.verify());
  // Stable: each node moves only as far as its inputs require.
  const std::vector<NodeId> expected = {s.g.producer(s.conv), s.g.producer(s.relu), s.g.producer(early),
                                        s.g.producer(s.view)};
  EXPECT_EQ(s.g.order(), expected);
}

TEST(Graph, VerifyCatchesStaleShapes) {
  SmallGraph s;
  s.g.mutable_value(s.relu).info.shape = {1, 3, 5, 4};
  EXPECT_THROW(s.g.verify(), GraphError);
}

TEST(Graph, ReinferKeepsQparamsAndDimOrder) {
  SmallGraph s;
  QuantParams q;
  q.scales = {0.5};
  q.zero_points = {3};
  s.g.mutable_value(s.relu).info.qparams = q;
  s.g.mutable_value(s.relu).info.dim_order = {0, 2, 3, 1};
  s.g.reinfer(s.g.producer(s.relu));
  EXPECT_EQ(s.g.value(s.relu).info.qparams, q);
  EXPECT_EQ(s.g.value(s.relu).info.dim_order, (std::vector<int64_t>{0, 2, 3, 1}));
}

TEST(Interpreter, RunsAndChecksInputs) {
  SmallGraph s;
  Tensor x = filled({1, 2, 5, 5}, -1.0f, 0.04f);
  const auto out = run_graph(s.g, {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{1, 75}));
  // Centre pixel of output channel 0, by hand.
  const float* w = s.g.value(s.w).data.data<float>();
  double acc = 0;
  for (int c = 0; c < 2; ++c)
    for (int ky = 0; ky < 3; ++ky)
      for (int kx = 0; kx < 3; ++kx)
        acc += w[((0 * 2 + c) * 3 + ky) * 3 + kx] * x.data<float>()[(c * 5 + 1 + ky) * 5 + 1 + kx];
  EXPECT_NEAR(out[0].data<float>()[2 * 5 + 2], acc > 0 ? acc : 0, 1e-5);
  EXPECT_THROW(run_graph(s.g, {filled({1, 2, 5, 4}, 0, 1)}), GraphError);
  EXPECT_THROW(run_graph(s.g, {}), GraphError);
}

TEST(Serialize, RoundTripsExactly) {
  SmallGraph s;
  QuantParams q;
  q.scales = {0.1, 0.2, 0.3};
  q.zero_points = {0, 0, 0};
  q.axis = 0;
  s.g.mutable_value(s.w).info.qparams = q;
  s.g.mutable_node(s.g.producer(s.conv)).meta["note"] = "kept";
  const std::string bytes = serialize_graph(s.g);
  Graph back = deserialize_graph(bytes);
  EXPECT_EQ(serialize_graph(back), bytes);
  EXPECT_EQ(back.to_string(), s.g.to_string());
  const Tensor x = filled({1, 2, 5, 5}, -1.0f, 0.04f);
  const auto a = run_graph(s.g, {x}), b = run_graph(back, {x});
  EXPECT_EQ(std::memcmp(a[0].raw(), b[0].raw(), a[0].nbytes()), 0);
}

TEST(Serialize, DamagedFilesAreErrors) {
  SmallGraph s;
  const std::string bytes = serialize_graph(s.g);
  EXPECT_THROW(deserialize_graph(bytes.substr(0, bytes.size() / 2)), GraphError);
  EXPECT_THROW(deserialize_graph(""), GraphError);
  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  EXPECT_THROW(deserialize_graph(bad_magic), GraphError);
  std::string bad_version = bytes;
  bad_version[8] = 9;
  EXPECT_THROW(deserialize_graph(bad_version), GraphError);
  std::string flipped = bytes;
  flipped[flipped.size() - 20] ^= 0x40;  // constant data
  EXPECT_THROW(deserialize_graph(flipped), GraphError);
}

TEST(Serialize, HandEditedHeadersAreErrors) {
  SmallGraph s;
  const std::string bytes = serialize_graph(s.g);
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string b = bytes;
    const size_t at = b.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    b.replace(at, from.size(), to);
    // Keep the header length field consistent with the edit.
    const uint64_t len = b.size() - bytes.size() + [&] {
      uint64_t v = 0;
      for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(bytes[12 + i])} << (8 * i);
      return v;
    }();
    for (int i = 0; i < 8; ++i) b[12 + i] = static_cast<char>((len >> (8 * i)) & 0xFF);
    return b;
  };
  // Same-length edits keep the blob where it was.
  EXPECT_THROW(deserialize_graph(edit("aten.relu.default", "aten.relx.default")), GraphError);
  EXPECT_THROW(deserialize_graph(edit("\"size\"", "\"sizx\"")), GraphError);
  EXPECT_THROW(deserialize_graph(edit("\"float32\"", "\"float33\"")), GraphError);
  EXPECT_THROW(deserialize_graph(edit("\"inputs\"", "\"inpuxs\"")), GraphError);
}

TEST(TensorInfo, SizesThatOverflowInt64AreErrors) {
  TensorInfo info = f32({int64_t{1} << 61, 8});
  info.dtype = DType::kInt8;
  EXPECT_THROW(info.numel(), GraphError);  // 2^64 elements
  EXPECT_THROW(Tensor{info}, GraphError);
  info.shape = {int64_t{1} << 62};
  EXPECT_EQ(info.numel(), int64_t{1} << 62);
  EXPECT_EQ(info.nbytes(), size_t{1} << 62);
  info.dtype = DType::kFloat32;
  EXPECT_THROW(info.nbytes(), GraphError);  // 2^64 bytes
  // A zero dim makes numel 0, but the other dims must still fit (strides are computed from them).
  info.shape = {0, int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_THROW(info.numel(), GraphError);
  info.shape = {0, 1 << 20, 1 << 20};
  EXPECT_EQ(info.numel(), 0);
}

TEST(Serialize, FileErrorsCarryTheErrno) {
  try {
    load_graph("/nonexistent-dir/g.cmg");
    FAIL() << "loaded a missing file";
  } catch (const FileError& e) {
    EXPECT_EQ(e.error_number(), ENOENT);
    EXPECT_EQ(e.path(), "/nonexistent-dir/g.cmg");
  }
  try {
    write_file_atomically("/nonexistent-dir/g.cmg", "x");
    FAIL() << "wrote into a missing directory";
  } catch (const FileError& e) {
    EXPECT_EQ(e.error_number(), ENOENT);
  }
}

// A graph file with `header` as its JSON and no constants.
std::string graph_file(const std::string& header) {
  std::string out = "CMXGRAPH";
  for (uint64_t v = 1, i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  for (uint64_t i = 0; i < 8; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xFF));
  out += header;
  out.resize((out.size() + 63) / 64 * 64, '\0');
  return out + std::string(4, '\0');  // the CRC-32 of an empty blob
}

std::string one_input_header(const std::string& shape, const std::string& extra_field) {
  return R"({"values": [{"name": "x", "kind": "input", "dtype": "float32", "shape": )" + shape +
         R"(, "dim_order": [], "qparams": null)" + extra_field +
         R"(}], "inputs": ["x"], "outputs": ["x"], "nodes": []})";
}

std::string load_error(const std::string& bytes) {
  try {
    deserialize_graph(bytes);
  } catch (const GraphError& e) {
    return e.what();
  }
  return "loaded";
}

TEST(Serialize, DeeplyNestedHeadersAreErrors) {
  // Issue 35: these overflowed the stack (a recursive dump of the shape in the error message, a
  // recursive copy of the value).
  const auto nested = [](size_t depth, const std::string& inner) {
    return std::string(depth, '[') + inner + std::string(depth, ']');
  };
  for (const std::string& header : {one_input_header("[" + nested(200000, "1") + "]", ""),
                                    one_input_header("[1]", ", \"unknown\": " + nested(1000000, ""))}) {
    const std::string error = load_error(graph_file(header));
    EXPECT_NE(error.find("nested deeper than kMaxJsonDepth = 64 levels"), std::string::npos) << error.substr(0, 500);
    EXPECT_LT(error.size(), 300u);
  }
  // Nesting within the bound is only as wrong as its content.
  const std::string error = load_error(graph_file(one_input_header("[" + nested(50, "1") + "]", "")));
  EXPECT_NE(error.find("values[0].shape[0]: must be an integer, got [[[["), std::string::npos) << error;
}

TEST(Serialize, BadValuesAreShownAsShortExcerpts) {
  std::string ints = "[0";
  for (int i = 1; i < 100000; ++i) ints += ", " + std::to_string(i);
  ints += "]";
  std::string error = load_error(graph_file(one_input_header("[" + ints + "]", "")));
  EXPECT_NE(error.find("must be an integer, got [0, 1, 2, 3, "), std::string::npos) << error.substr(0, 500);
  EXPECT_LT(error.size(), 300u);
  EXPECT_EQ(error.substr(error.size() - 3), "...");
  // Strings are escaped to ASCII: control characters, non-ASCII characters.
  error = load_error(graph_file(one_input_header(R"(["a\u0001\u00e9\n"])", "")));
  EXPECT_NE(error.find(R"(must be an integer, got "a\u0001\u00e9\n")"), std::string::npos) << error;
  // A JSON syntax error quotes the file printably and briefly.
  error = load_error(graph_file("{\"values\": \"" + std::string(100000, 'a') + "\xff\""));
  EXPECT_NE(error.find("invalid JSON"), std::string::npos) << error.substr(0, 500);
  EXPECT_LT(error.size(), 300u);
  for (char c : error) EXPECT_TRUE(c >= 0x20 && c < 0x7F) << static_cast<int>(c);
}

TEST(Serialize, OnlyRegularFilesWithinTheLimitAreRead) {
  const auto errno_of = [](const std::string& path, uint64_t max_bytes) {
    try {
      read_file(path, max_bytes, "test file");
    } catch (const FileError& e) {
      EXPECT_EQ(e.path(), path);
      return e.error_number();
    }
    return 0;
  };
  EXPECT_EQ(errno_of("/dev/zero", 1 << 20), EINVAL);
  EXPECT_EQ(errno_of("/", 1 << 20), EISDIR);
  const std::string dir = ::testing::TempDir();
  const std::string fifo = dir + "/graph_test_fifo_" + std::to_string(::getpid());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(errno_of(fifo, 1 << 20), EINVAL);  // at once: a FIFO is never opened
  ::unlink(fifo.c_str());
  const std::string file = dir + "/graph_test_file_" + std::to_string(::getpid());
  write_file_atomically(file, "0123456789");
  EXPECT_EQ(read_file(file, 10, "test file"), "0123456789");
  EXPECT_EQ(errno_of(file, 9), EFBIG);
  ::unlink(file.c_str());
  EXPECT_THROW(read_file(file + std::string(1, '\0') + "x", 10, "test file"), GraphError);
  EXPECT_THROW(write_file_atomically(file + std::string(1, '\0') + "x", "data"), GraphError);
  EXPECT_NE(::access(file.c_str(), F_OK), 0);  // nothing written under the truncated name
}

}  // namespace
}  // namespace cortexm
