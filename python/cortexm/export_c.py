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
Their text is in the package's templates/*.in (shipped with the wheel like every file of the
package), rendered by _render with explicit values: the program's strings escaped by escape.py.
"""

from __future__ import annotations

import os
import re
from importlib import resources

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
#: a template's placeholders: @KEY@ inline, or alone on its line for a block of lines
_PLACEHOLDER = re.compile(r"@([A-Z][A-Z0-9_]*)@")
_BLOCK_PLACEHOLDER = re.compile(r"^@([A-Z][A-Z0-9_]*)@\n", re.M)


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


def _render(template: str, values: dict) -> str:
    """The template file templates/<template> with each @KEY@ replaced by values[KEY]. A str value is
    placed inline and may not hold a line break (strings from the program come escaped, see
    escape.py); a list of lines replaces a line that holds only its placeholder (no line when the
    list is empty). Every placeholder must have a value and every value a placeholder."""
    text = (resources.files(__package__) / "templates" / template).read_text(encoding="utf-8")
    used = set()

    def block(match):
        key = match.group(1)
        lines = values[key]
        if not isinstance(lines, list):
            raise ValueError(f"{template}: @{key}@ takes a list of lines")
        used.add(key)
        return "".join(line + "\n" for line in lines)

    def inline(match):
        key = match.group(1)
        value = values[key]
        if not isinstance(value, str) or "\n" in value or "\r" in value:
            raise ValueError(f"{template}: @{key}@ takes a one-line string, got {value!r:.80}")
        used.add(key)
        return value

    text = _PLACEHOLDER.sub(inline, _BLOCK_PLACEHOLDER.sub(block, text))
    if used != set(values):
        raise ValueError(f"{template}: no placeholder for {sorted(set(values) - used)}")
    return text


def _header(program, name: str) -> str:
    return _render("program.h.in", {
        "NAME": name,
        "PREFIX": name.upper(),
        "TARGET_COMMENT": c_comment(program.target),
        "PROGRAM_SIZE": str(len(program.data)),
        "ARENA_SIZE": str(program.arena_size),
        "SCALAR_ARENA_SIZE": str(program.scalar_arena_size),
        "OP_STATE_SIZE": str(program.op_state_size),
        "NUM_OPS": str(program.num_ops),
        "NUM_INPUTS": str(len(program.inputs)),
        "NUM_OUTPUTS": str(len(program.outputs)),
        "INPUT_BYTES": str(sum(_nbytes(s) for s in program.inputs)),
        "OUTPUT_BYTES": str(sum(_nbytes(s) for s in program.outputs)),
        "NUM_BUNDLED_CASES": str(len(program.bundled())),
        "NUM_KERNELS": str(len(kernels(program))),
        "KERNELS": ", ".join(kernels(program)),
        "INPUT_MACROS": _io_macros(name.upper(), "input", program.inputs),
        "OUTPUT_MACROS": _io_macros(name.upper(), "output", program.outputs),
    })


def _source(program, name: str) -> str:
    data = program.data
    rows = ["  " + "".join(_BYTE_TEXT[b] for b in data[i:i + _BYTES_PER_LINE])
            for i in range(0, len(data), _BYTES_PER_LINE)]
    return _render("program.c.in", {"NAME": name, "PREFIX": name.upper(), "PROGRAM_BYTES": rows})


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
    entries = [f"    CORTEXM_OP_PATHS({kernel}, {paths[kernel]:#x})," if kernel in paths else f"    CORTEXM_OP({kernel}),"
               for kernel in kernels(program)]
    return _render("ops.cc.in", {"NAME": name, "OP_ENTRIES": entries})


def _main(name: str) -> str:
    return _render("main.cc.in", {"NAME": name, "PREFIX": name.upper()})


def _cmake_snippet(name: str) -> str:
    return _render("cortexm.cmake.in", {"NAME": name})


def _cmakelists(name: str) -> str:
    return _render("CMakeLists.txt.in", {"NAME": name})


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
        "main": ("main.cc", _main(name)),
        "cmake": ("cortexm.cmake", _cmake_snippet(name)),
        "cmakelists": ("CMakeLists.txt", _cmakelists(name)),
    }
    try:
        write_directory_atomically(directory, {filename: text.encode("utf-8") for filename, text in files.values()},
                                   owned=EXPORTED_FILE.match)
    except ValueError as e:
        raise ValueError(f"export_c: dir {directory!r}: {e}") from None
    return {kind: os.path.join(directory, filename) for kind, (filename, _) in files.items()}
