// Graph files (.cmg). Layout, version 1:
//   bytes 0..7    magic "CMXGRAPH"
//   bytes 8..11   format version (uint32, little endian)
//   bytes 12..19  header length H (uint64)
//   bytes 20..    header: UTF-8 JSON {"inputs", "outputs", "values", "nodes", "constants"}
//   then zero padding to a 64-byte boundary, then the constant blob: each constant's bytes at the
//   offset the header gives (64-byte aligned), and finally a CRC-32 of the blob (uint32).
// The JSON is readable and may be edited by hand: load() validates every field, rebuilds each node
// through its schema and runs verify(), so an inconsistent edit is an error naming what is wrong.
#pragma once

#include <string>

#include "graph/graph.h"

namespace cortexm {

constexpr uint32_t kGraphFormatVersion = 1;
// The largest graph file load_graph reads: 16 GiB, four times the 2^32 bytes a program can
// address, so the float32 weights of any graph that lowers to an int8 program fit.
constexpr uint64_t kMaxGraphFileBytes = uint64_t{1} << 34;

std::string serialize_graph(const Graph& graph);
Graph deserialize_graph(const std::string& bytes, const std::string& origin = "graph file");

// Writes atomically (temporary file in the same directory, then rename).
void save_graph(const Graph& graph, const std::string& path);
Graph load_graph(const std::string& path);

// Shared by everything cortexm writes (Python's cortexm.program.write_file_atomically too): an
// unnamed temp file next to `path` (the mode of the file it replaces, or 0666 minus the umask),
// fsync, linked at `path` when new or renamed over it, fsync of the directory; nothing is left
// behind on failure, and the next write removes a killed writer's temporary. I/O failures throw
// FileError (OSError with errno).
void write_file_atomically(const std::string& path, const std::string& bytes);
// Reads a regular file of at most max_bytes; `kind` ("graph file", ...) names it in errors. A
// directory, device, FIFO or socket is refused before it is read (a FIFO without blocking), so is
// a larger file: FileError with EISDIR, EINVAL or EFBIG.
std::string read_file(const std::string& path, uint64_t max_bytes, const std::string& kind);
// GraphError for a path the OS would truncate (one with a NUL character).
void check_path(const std::string& path);

}  // namespace cortexm
