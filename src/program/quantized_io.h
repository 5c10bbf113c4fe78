// to_program(io="int8"): the program takes and gives the int8 tensors its boundary quantize and
// dequantize ops made and read, instead of float.
#pragma once

#include "graph/graph.h"

namespace cortexm::program {

// Each float input that only cortex_m quantize_per_tensor ops (to int8, all at the same qparams)
// read becomes the int8 tensor they made, with its qparams, and keeps its name and place; each output
// a cortex_m dequantize_per_tensor op made from int8 becomes that int8 tensor. The quantize and
// dequantize nodes nothing else reads go. Inputs and outputs already int8 with per-tensor qparams
// stay. Throws GraphError naming an input or output that is neither.
void make_io_int8(Graph& graph);

// to_program(io="int16"): the same for int16 boundaries, and int8 ones (a .tflite's own integer
// types: 16x8 models, an int16 state beside int8 inputs and outputs).
void make_io_int16(Graph& graph);

}  // namespace cortexm::program
