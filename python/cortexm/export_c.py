"""Program.export_c: a program as C sources to drop into firmware.

``program.export_c(dir, name)`` writes into dir:

- ``<name>_program.c``: the program file as ``const uint8_t <name>_program[]``, 16-byte aligned, in
  section ``.rodata.cortexm_program`` (define CORTEXM_PROGRAM_SECTION to map it elsewhere);
- ``<name>_program.h``: its declaration and the sizes: program bytes, arena bytes, the inputs' and
  outputs' count, names, dtypes, shapes and bytes, the number of bundled cases;
- ``<name>_ops.cc``: ``<name>_ops()``, the runtime's OpResolver for exactly the kernels the program
  runs: firmware that loads the program with it links no other kernel;
- ``main.cc``: a minimal main that loads the program, runs it on each bundled case (once on zero
  inputs when there is none) and compares the expected outputs (PASS / FAIL, nonzero on failure);
  built for QEMU it also prints the stack it used;
- ``cortexm.cmake``: ``cortexm_add_<name>(target)`` adds the program to a target and links the
  cortexm runtime and kernels, built from CORTEXM_ROOT (the cortexm source tree);
- ``CMakeLists.txt``: a project that builds main.cc on the host, or for a QEMU machine with
  cortexm's startup code and linker script (CORTEXM_QEMU_MACHINE).

The six files change together: they are written into a new directory that replaces dir in one step.
"""

from __future__ import annotations

import os
import re

import numpy as np

from .atomic_write import write_directory_atomically
from .escape import c_comment, c_string

__all__ = ["IDENTIFIER", "default_name", "export_c"]

#: a valid program name (a C identifier without a leading underscore)
IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
#: the names of the files export_c writes, whatever the program's name
EXPORTED_FILE = re.compile(r"(main\.cc|cortexm\.cmake|CMakeLists\.txt|[A-Za-z][A-Za-z0-9_]*_(program\.[ch]|ops\.cc))\Z")
_BYTES_PER_LINE = 16
_BYTE_TEXT = [f"0x{b:02x}," for b in range(256)]


def default_name(stem: str) -> str:
    """A program name from a file stem ("ds-cnn.v2" -> "ds_cnn_v2"): characters that cannot be in a
    C identifier become '_'; "model_" goes in front when it does not start with a letter."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", stem)
    return name if IDENTIFIER.match(name) else "model_" + name.lstrip("_") if name.strip("_") else "model"


def _check_name(name) -> str:
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        raise ValueError(f"export_c: name {name!r} must be a C identifier: a letter, then letters, digits or '_'")
    return name


def _check_dir(path) -> str:
    try:
        path = os.fspath(path)
    except TypeError:
        raise ValueError(f"export_c: dir must be a path, got {type(path).__name__}") from None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not path:
        raise ValueError("export_c: dir is empty")
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"export_c: dir {path!r} exists and is not a directory")
    return path


def _nbytes(spec) -> int:
    return int(np.prod(spec["shape"], dtype=np.int64)) * np.dtype(spec["dtype"]).itemsize


def _io_macros(prefix: str, kind: str, specs) -> list[str]:
    lines = []
    for i, spec in enumerate(specs):
        shape = [int(d) for d in spec["shape"]]
        tag = f"{prefix}_{kind.upper()}{i}"
        lines.append(f"// {kind} {i}: '{c_comment(spec['name'])}', {spec['dtype']}{shape}")
        lines.append(f"#define {tag}_NAME {c_string(spec['name'])}")
        lines.append(f"#define {tag}_DTYPE {c_string(spec['dtype'])}")
        lines.append(f"#define {tag}_ELEMENT_SIZE {np.dtype(spec['dtype']).itemsize}u")
        lines.append(f"#define {tag}_RANK {len(shape)}")
        if shape:  # a scalar has no shape initializer ({} is not C before C23)
            lines.append(f"#define {tag}_SHAPE {{{', '.join(str(d) for d in shape)}}}")
        lines.append(f"#define {tag}_BYTES {_nbytes(spec)}u")
        if spec.get("scale") is not None:  # quantized: real = (q - zero point) * scale
            lines.append(f"#define {tag}_SCALE {float(spec['scale'])!r}")
            lines.append(f"#define {tag}_ZERO_POINT {int(spec['zero_point'])}")
    return lines


def kernels(program) -> list[str]:
    """The kernel ids (ops.def names) the program runs, in the order of their first op."""
    return list(dict.fromkeys(op["kernel"] for op in program.ops()))


def _header(program, name: str) -> str:
    prefix = name.upper()
    guard = f"{prefix}_PROGRAM_H_"
    input_bytes = sum(_nbytes(s) for s in program.inputs)
    output_bytes = sum(_nbytes(s) for s in program.outputs)
    lines = [
        f"// The cortexm program {name!r} ({c_comment(program.target)}, {program.num_ops} ops) as C data, written by",
        "// cortexm's Program.export_c. Load it with",
        f"//   cortexm::runtime::Program::load({name}_program, {prefix}_PROGRAM_SIZE, &program)",
        f"// and run it on an arena of {prefix}_ARENA_SIZE bytes, 16-byte aligned (main.cc shows how);",
        f"// {prefix}_SCALAR_ARENA_SIZE with the portable scalar kernels (a host build, a core without",
        "// DSP or MVE), whose scratch may be larger than the target's.",
        "// Inputs and outputs have their logical (PyTorch) shapes; *_BYTES counts contiguous bytes.",
        "// A quantized one has *_SCALE and *_ZERO_POINT: real value = (q - ZERO_POINT) * SCALE.",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stdint.h>",
        "",
        f"#define {prefix}_PROGRAM_SIZE {len(program.data)}u",
        f"#define {prefix}_ARENA_SIZE {program.arena_size}u",
        f"#define {prefix}_SCALAR_ARENA_SIZE {program.scalar_arena_size}u",
        f"#define {prefix}_ALIGNMENT 16u  // of the program bytes and the arena",
        f"#define {prefix}_NUM_OPS {program.num_ops}",
        f"#define {prefix}_NUM_INPUTS {len(program.inputs)}",
        f"#define {prefix}_NUM_OUTPUTS {len(program.outputs)}",
        f"#define {prefix}_INPUT_BYTES {input_bytes}u",
        f"#define {prefix}_OUTPUT_BYTES {output_bytes}u",
        f"#define {prefix}_NUM_BUNDLED_CASES {len(program.bundled())}",
        f"// The kernels the program runs, registered by {name}_ops() ({name}_ops.cc)",
        f"#define {prefix}_NUM_KERNELS {len(kernels(program))}  // {', '.join(kernels(program))}",
        "",
        *_io_macros(prefix, "input", program.inputs),
        "",
        *_io_macros(prefix, "output", program.outputs),
        "",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
        "// The program file (section CORTEXM_PROGRAM_SECTION, by default .rodata.cortexm_program).",
        f"extern const uint8_t {name}_program[{prefix}_PROGRAM_SIZE];",
        "",
        "#ifdef __cplusplus",
        "}",
        "",
        "namespace cortexm::runtime {",
        "class OpResolver;",
        "}  // namespace cortexm::runtime",
        "",
        f"// The kernels of this program and no other ({name}_ops.cc): Program::load({name}_program, ..., {name}_ops()).",
        f"const cortexm::runtime::OpResolver& {name}_ops();",
        "#endif",
        "",
        f"#endif  // {guard}",
        "",
    ]
    return "\n".join(lines)


def _source(program, name: str) -> str:
    data = program.data
    rows = ["  " + "".join(_BYTE_TEXT[b] for b in data[i:i + _BYTES_PER_LINE])
            for i in range(0, len(data), _BYTES_PER_LINE)]
    head = f"""// The cortexm program {name!r} as C data, written by cortexm's Program.export_c (do not edit).
#include "{name}_program.h"

// The section of the program bytes: define CORTEXM_PROGRAM_SECTION (e.g. -DCORTEXM_PROGRAM_SECTION=\\".flash_models\\")
// to map them to a region of your linker script. The runtime reads them in place, they are never written.
#ifndef CORTEXM_PROGRAM_SECTION
#define CORTEXM_PROGRAM_SECTION ".rodata.cortexm_program"
#endif

#if defined(__ELF__)
__attribute__((section(CORTEXM_PROGRAM_SECTION)))
#endif
__attribute__((aligned(16))) const uint8_t {name}_program[{name.upper()}_PROGRAM_SIZE] = {{
"""
    return head + "\n".join(rows) + "\n};\n"


def kernel_paths(program) -> dict:
    """{kernel id: the code paths (bits) its ops take} for the kernels whose paths firmware can link
    separately (runtime/ops/op_paths.h), in the order of their first op."""
    paths = {}
    for op in program.ops():
        if op["paths"]:
            paths[op["kernel"]] = paths.get(op["kernel"], 0) | op["paths"]
    return paths


def _ops_source(program, name: str) -> str:
    paths = kernel_paths(program)
    entries = "".join(f"    CORTEXM_OP_PATHS({kernel}, {paths[kernel]:#x}),\n" if kernel in paths
                      else f"    CORTEXM_OP({kernel}),\n" for kernel in kernels(program))
    return f"""// The kernels the cortexm program {name!r} runs, written by cortexm's Program.export_c (do not
// edit): the OpResolver to load it with. Only the kernels listed here are linked into the firmware,
// the conv kernels with only the code paths the program's ops take (CORTEXM_OP_PATHS).
#include "{name}_program.h"
#include "runtime/op_resolver.h"
#include "runtime/ops/op_paths.h"

const cortexm::runtime::OpResolver& {name}_ops() {{
  static constexpr cortexm::runtime::OpEntry entries[] = {{
{entries}  }};
  static constexpr cortexm::runtime::OpResolver resolver(entries, sizeof entries / sizeof entries[0]);
  return resolver;
}}
"""


def _main(program, name: str) -> str:
    prefix = name.upper()
    return f"""// A minimal main for the cortexm program {name!r}, written by cortexm's Program.export_c: loads
// the program and runs it on each bundled case (once on zero inputs when it bundles none), printing
// each output's size and FNV-1a checksum. With bundled cases it compares every output with the
// expected one bit for bit: prints PASS and returns 0, or prints FAIL and returns 1. Built with
// CORTEXM_MEASURE_STACK (the QEMU build) it prints the most stack the run used.
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "{name}_program.h"
#include "cortexm/kernels/kernel_isa.h"
#include "program/program_generated.h"
#include "runtime/op_resolver.h"
#include "runtime/program.h"

#ifdef CORTEXM_MEASURE_STACK
// The stack's bounds, from cortexm's linker script (firmware/ld/common.ld).
extern "C" uint32_t __stack_limit[], __stack_top[];
#endif

namespace {{

using cortexm::runtime::Program;
using cortexm::runtime::Status;
using cortexm::runtime::TensorView;

// The program's working memory (activations and scratch), 16-byte aligned; the scalar kernels' own
// size when this build runs them (Program::required_arena_size says what this build needs).
constexpr size_t kArenaBytes = CORTEXM_BUILT_ISA == 0 ? {prefix}_SCALAR_ARENA_SIZE : {prefix}_ARENA_SIZE;
alignas(16) uint8_t arena[kArenaBytes > 0 ? kArenaBytes : 1];
// The outputs, copied out of the arena one after the other as contiguous bytes.
alignas(16) uint8_t outputs[{prefix}_OUTPUT_BYTES > 0 ? {prefix}_OUTPUT_BYTES : 1];

// Console output straight through write(2): printf and stdio's buffers would take more flash
// than some programs' kernels.
void put(const char* text) {{
  if (write(1, text, std::strlen(text)) < 0) return;
}}

void put_dec(long value) {{
  char digits[24];
  char* p = digits + sizeof digits;
  *--p = '\\0';
  unsigned long magnitude = value < 0 ? 0ul - static_cast<unsigned long>(value) : static_cast<unsigned long>(value);
  do *--p = static_cast<char>('0' + magnitude % 10); while (magnitude /= 10);
  if (value < 0) *--p = '-';
  put(p);
}}

void put_hex(uint32_t value) {{  // 8 digits
  char digits[9] = {{}};
  for (int i = 7; i >= 0; --i, value >>= 4) digits[i] = "0123456789abcdef"[value & 15];
  put(digits);
}}

// A view of contiguous bytes with the shape and dtype of `like` (arena tensors may be channels-last).
TensorView contiguous(const TensorView& like, const uint8_t* data) {{
  TensorView view = like;
  view.data = const_cast<uint8_t*>(data);  // only read when it is a copy's source
  cortexm::runtime::strides_for(view.shape, view.rank, nullptr, view.strides);
  return view;
}}

uint32_t fnv1a(const uint8_t* data, size_t size) {{
  uint32_t hash = 2166136261u;
  for (size_t i = 0; i < size; ++i) hash = (hash ^ data[i]) * 16777619u;
  return hash;
}}

// Whether a and b hold the same string (the C library's strcmp would link 442 bytes on the M55).
bool same(const char* a, const char* b) {{
  while (*a != '\\0' && *a == *b) {{
    ++a;
    ++b;
  }}
  return *a == *b;
}}

// "FAIL: <what>: <section> <index>: <field> = <value> [(<kernel>)] <requirement>"
int fail(const char* what, const Status& status) {{
  const char* field = status.detail.argument ? status.detail.argument : "?";
  put("FAIL: ");
  put(what);
  put(": ");
  put(status.section ? status.section : "?");
  put(" ");
  put_dec(static_cast<long>(status.section_index));
  put(": ");
  put(field);
  put(" = ");
  put_dec(static_cast<long>(status.detail.value));
  if (same(field, "kernel")) {{
    put(" (");
    put(cortexm::runtime::kernel_name(static_cast<uint8_t>(status.detail.value)));
    put(")");
  }}
  put(" ");
  put(status.detail.requirement ? status.detail.requirement : "");
  put("\\n");
  return 1;
}}

#ifdef CORTEXM_MEASURE_STACK
constexpr uint32_t kStackPaint = 0x5aa5c33cu;

// Fills the free stack, up to 256 bytes below this frame, with kStackPaint.
__attribute__((noinline)) void paint_stack() {{
  uint32_t here = 0;
  volatile uint32_t* end = reinterpret_cast<volatile uint32_t*>(&here) - 64;
  for (volatile uint32_t* p = __stack_limit; p < end; ++p) *p = kStackPaint;
}}

// The bytes between the stack's top and the deepest word written since paint_stack.
long stack_used() {{
  const uint32_t* p = __stack_limit;
  while (p < __stack_top && *p == kStackPaint) ++p;
  return static_cast<long>(__stack_top - p) * 4;
}}
#endif

}}  // namespace

int main() {{
#ifdef CORTEXM_MEASURE_STACK
  paint_stack();
#endif
  Program program;
  const Status loaded = Program::load({name}_program, {prefix}_PROGRAM_SIZE, &program, {name}_ops());
  if (!loaded.ok()) return fail("loading {name}", loaded);
  const auto* cases = program.fb().bundled();
  const long num_cases = cases ? static_cast<long>(cases->size()) : 0;

  int differing = 0;
  for (long c = 0; c < (num_cases > 0 ? num_cases : 1); ++c) {{
    const cortexm::fb::BundledCase* bundled = num_cases > 0 ? cases->Get(static_cast<uint32_t>(c)) : nullptr;
    std::memset(arena, 0, sizeof arena);  // zero inputs when no case is bundled
    for (int32_t i = 0; i < program.num_inputs(); ++i) {{
      const TensorView input = program.tensor(program.input_tensor(i), arena);
      // Firmware writes its own input here, before every run (a run may write over its inputs):
      // copy_logical(contiguous(input, bytes), input).
      if (bundled) cortexm::runtime::copy_logical(contiguous(input, bundled->inputs()->Get(i)->data()->data()), input);
    }}

    cortexm::runtime::RunStats stats;
    const Status ran = cortexm::runtime::execute(program, arena, sizeof arena, nullptr, &stats);
    if (!ran.ok()) return fail("running {name}", ran);
    put("{name} case ");
    put_dec(c);
    put(": ");
    put_dec(stats.ops);
    put(" ops run\\n");

    uint8_t* out = outputs;
    for (int32_t i = 0; i < program.num_outputs(); ++i) {{
      const TensorView output = program.tensor(program.output_tensor(i), arena);
      cortexm::runtime::copy_logical(output, contiguous(output, out));
      const size_t size = output.nbytes();
      put("case ");
      put_dec(c);
      put(" output ");
      put_dec(i);
      put(": ");
      put_dec(static_cast<long>(size));
      put(" bytes, fnv1a 0x");
      put_hex(fnv1a(out, size));
      put("\\n");
      if (bundled) {{
        const uint8_t* expected = bundled->expected_outputs()->Get(i)->data()->data();
        size_t first = 0;
        while (first < size && out[first] == expected[first]) ++first;
        if (first < size) {{
          put("case ");
          put_dec(c);
          put(" output ");
          put_dec(i);
          put(" differs from the expected output from byte ");
          put_dec(static_cast<long>(first));
          put("\\n");
          ++differing;
        }}
      }}
      out += size;
    }}
  }}
#ifdef CORTEXM_MEASURE_STACK
  put("stack: ");
  put_dec(stack_used());
  put(" bytes used of ");
  put_dec(static_cast<long>(__stack_top - __stack_limit) * 4);
  put("\\n");
#endif
  if (num_cases == 0) {{
    put("DONE: no expected outputs bundled to compare\\n");
    return 0;
  }}
  put(differing ? "FAIL\\n" : "PASS\\n");
  return differing ? 1 : 0;
}}
"""


def _cmake_snippet(name: str) -> str:
    return f"""# The cortexm program {name!r} for your firmware, written by cortexm's Program.export_c.
#
#   set(CORTEXM_ROOT /path/to/cortexm)          # the cortexm source tree (else $ENV{{CORTEXM_ROOT}})
#   include(/path/to/this/directory/cortexm.cmake)
#   cortexm_add_{name}(my_firmware)             # adds {name}_program.c, {name}_ops.cc, links cortexm_runtime
#
# The runtime and the kernels are built from CORTEXM_ROOT with your toolchain (C++17, no heap, no
# exceptions); building them needs flatc and the flatbuffers headers. Programs exported into other
# directories can be included next to this one: the runtime is added once. Load each program with
# its {name}_ops() resolver: only the kernels the programs register are linked (with the
# toolchain's -ffunction-sections -fdata-sections -Wl,--gc-sections, as cmake/arm-none-eabi.cmake).
if(CMAKE_VERSION VERSION_LESS 3.20)
  message(FATAL_ERROR "cortexm.cmake needs CMake 3.20 or newer, this is ${{CMAKE_VERSION}}")
endif()
if(NOT CORTEXM_ROOT AND DEFINED ENV{{CORTEXM_ROOT}})
  set(CORTEXM_ROOT $ENV{{CORTEXM_ROOT}})
endif()
if(NOT CORTEXM_ROOT OR NOT EXISTS "${{CORTEXM_ROOT}}/src/runtime/CMakeLists.txt"
   OR NOT EXISTS "${{CORTEXM_ROOT}}/kernels/CMakeLists.txt")
  message(FATAL_ERROR "cortexm.cmake: set CORTEXM_ROOT to the cortexm source tree (with src/runtime and "
                      "kernels), got '${{CORTEXM_ROOT}}'")
endif()
set(CORTEXM_KERNEL_OPTIMIZATION "" CACHE STRING
    "Optimization flag for the kernels, e.g. -Os for the least flash (empty: the build type's, -O3 in Release)")
if(NOT TARGET cortexm_runtime)
  add_subdirectory(${{CORTEXM_ROOT}}/kernels ${{CMAKE_BINARY_DIR}}/cortexm/kernels EXCLUDE_FROM_ALL)
  add_subdirectory(${{CORTEXM_ROOT}}/src/runtime ${{CMAKE_BINARY_DIR}}/cortexm/runtime EXCLUDE_FROM_ALL)
  target_compile_features(cortexm_kernels PUBLIC cxx_std_17)
  # The runtime verifies the program once and hands each op to its kernel: built for size it takes
  # half the flash and runs as fast (docs/program.md, "Flash and RAM").
  target_compile_options(cortexm_runtime PRIVATE -Os)
  if(CORTEXM_KERNEL_OPTIMIZATION)
    target_compile_options(cortexm_kernels PRIVATE ${{CORTEXM_KERNEL_OPTIMIZATION}})
  endif()
endif()

function(cortexm_add_{name} target)
  target_sources(${{target}} PRIVATE ${{CMAKE_CURRENT_FUNCTION_LIST_DIR}}/{name}_program.c
                 ${{CMAKE_CURRENT_FUNCTION_LIST_DIR}}/{name}_ops.cc)
  target_include_directories(${{target}} PRIVATE ${{CMAKE_CURRENT_FUNCTION_LIST_DIR}})
  target_link_libraries(${{target}} PRIVATE cortexm_runtime)
endfunction()
"""


def _cmakelists(name: str) -> str:
    return f"""# Builds {name}_main from main.cc, the program {name!r} and the cortexm runtime (cortexm.cmake).
# Written by cortexm's Program.export_c.
#
# Host:
#   cmake -S . -B build -G Ninja -DCORTEXM_ROOT=/path/to/cortexm
#   cmake --build build && build/{name}_main
# Cortex-M55 on QEMU's mps3-an547, with cortexm's startup code, semihosting and linker script:
#   cmake -S . -B build-m55 -G Ninja -DCORTEXM_ROOT=/path/to/cortexm \\
#     -DCMAKE_TOOLCHAIN_FILE=/path/to/cortexm/cmake/arm-none-eabi.cmake -DCORTEXM_CPU=cortex-m55 \\
#     -DCORTEXM_QEMU_MACHINE=mps3-an547
#   cmake --build build-m55
#   qemu-system-arm -M mps3-an547 -nographic -monitor none -serial none \\
#     -semihosting-config enable=on,target=native -kernel build-m55/{name}_main.elf
cmake_minimum_required(VERSION 3.24)
project({name}_cortexm LANGUAGES C CXX)

set(CORTEXM_ROOT "" CACHE PATH "The cortexm source tree")
set(CORTEXM_QEMU_MACHINE "" CACHE STRING
    "Link for this QEMU machine with cortexm's firmware (mps2-an385, mps2-an386, mps2-an500, mps2-an505, mps3-an547)")
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release)
endif()
include(${{CMAKE_CURRENT_SOURCE_DIR}}/cortexm.cmake)

add_executable({name}_main main.cc)
target_compile_options({name}_main PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti>)
cortexm_add_{name}({name}_main)

if(CORTEXM_QEMU_MACHINE)
  if(NOT CMAKE_CROSSCOMPILING)
    message(FATAL_ERROR "CORTEXM_QEMU_MACHINE needs the arm-none-eabi toolchain "
                        "(-DCMAKE_TOOLCHAIN_FILE=${{CORTEXM_ROOT}}/cmake/arm-none-eabi.cmake)")
  endif()
  set(_firmware ${{CORTEXM_ROOT}}/firmware)
  # Programs larger than the machine's code memory: the -large script where there is one (code and
  # constants in DDR: ${{_firmware}}/ld/mps3-an547-large.ld).
  set(CORTEXM_LINKER_SCRIPT ${{_firmware}}/ld/${{CORTEXM_QEMU_MACHINE}}.ld CACHE FILEPATH
      "Linker script for CORTEXM_QEMU_MACHINE")
  if(NOT EXISTS ${{CORTEXM_LINKER_SCRIPT}})
    message(FATAL_ERROR "CORTEXM_QEMU_MACHINE=${{CORTEXM_QEMU_MACHINE}}: no linker script ${{CORTEXM_LINKER_SCRIPT}}")
  endif()
  # Objects, not an archive: the C library's printf needs syscalls.c's _write after libc is scanned.
  add_library({name}_qemu_startup OBJECT ${{_firmware}}/startup/startup.c ${{_firmware}}/startup/semihosting.c
              ${{_firmware}}/startup/syscalls.c)
  target_include_directories({name}_qemu_startup PUBLIC ${{_firmware}}/startup)
  set_target_properties({name}_main PROPERTIES SUFFIX .elf)
  target_link_libraries({name}_main PRIVATE {name}_qemu_startup)
  set_target_properties({name}_main PROPERTIES LINK_DEPENDS ${{CORTEXM_LINKER_SCRIPT}})
  target_link_options({name}_main PRIVATE -nostartfiles -T${{CORTEXM_LINKER_SCRIPT}} -L${{_firmware}}/ld)
  target_compile_definitions({name}_main PRIVATE CORTEXM_MEASURE_STACK=1)  # the script's __stack_limit
endif()
"""


def export_c(program, directory, name: str | None = None) -> dict:
    """Writes the program's C source, header, op table, main.cc, cortexm.cmake and CMakeLists.txt
    into directory as one set (atomic_write.write_directory_atomically: all the old files or all the
    new ones, never a mix; the directory's other entries, such as a build directory, are kept).
    name (default "model") prefixes every symbol, macro and file. Returns {kind: path} for
    "source", "header", "ops", "main", "cmake", "cmakelists". Raises ValueError for a name that is
    not a C identifier, a path that is not a directory, or the current directory."""
    name = _check_name("model" if name is None else name)
    directory = _check_dir(directory)
    files = {
        "source": (f"{name}_program.c", _source(program, name)),
        "header": (f"{name}_program.h", _header(program, name)),
        "ops": (f"{name}_ops.cc", _ops_source(program, name)),
        "main": ("main.cc", _main(program, name)),
        "cmake": ("cortexm.cmake", _cmake_snippet(name)),
        "cmakelists": ("CMakeLists.txt", _cmakelists(name)),
    }
    try:
        write_directory_atomically(directory, {filename: text.encode("utf-8") for filename, text in files.values()},
                                   owned=EXPORTED_FILE.match)
    except ValueError as e:
        raise ValueError(f"export_c: dir {directory!r}: {e}") from None
    return {kind: os.path.join(directory, filename) for kind, (filename, _) in files.items()}
