// Writes the graph fuzzer's regression inputs that are too large to keep in the corpus (issue 35):
// graph files whose JSON nests a list 200,000 deep where a shape int belongs (400 KB) and an
// unknown field 1,000,000 deep (2 MB); both overflowed the stack. Usage: deep_graph_inputs DIR
#include <cstdint>
#include <cstdio>
#include <string>

namespace {

// A graph file with `header` as its JSON and no constants.
std::string graph_file(const std::string& header) {
  std::string out = "CMXGRAPH";
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(i == 0 ? 1 : 0));  // version 1
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((uint64_t{header.size()} >> (8 * i)) & 0xFF));
  out += header;
  out.resize((out.size() + 63) / 64 * 64, '\0');
  return out + std::string(4, '\0');  // the CRC-32 of an empty blob
}

std::string one_input_header(const std::string& shape, const std::string& extra_field) {
  return R"({"values": [{"name": "x", "kind": "input", "dtype": "float32", "shape": )" + shape +
         R"(, "dim_order": [], "qparams": null)" + extra_field +
         R"(}], "inputs": ["x"], "outputs": ["x"], "nodes": []})";
}

std::string nested(size_t depth, const std::string& inner) {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

bool write(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const bool ok =
      write(dir + "/shape_list_200000_deep.cmg", graph_file(one_input_header("[" + nested(200000, "1") + "]", ""))) &&
      write(dir + "/unknown_field_1000000_deep.cmg",
            graph_file(one_input_header("[1]", ", \"unknown\": " + nested(1000000, ""))));
  if (!ok) std::perror(dir.c_str());
  return ok ? 0 : 1;
}
