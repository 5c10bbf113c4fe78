"""Program.export_c: the generated C source, header, main.cc and CMake files, built for real.

The exported directories are built as subprojects of one CMake project per target (the host's
C/C++ compiler; arm-none-eabi for the Cortex-M55 and M4 on QEMU's mps3-an547 and mps2-an386), in
build/export-c/<target> of the source tree: the runtime and kernels are built once, later runs
rebuild only what changed.
main.cc prints each output's FNV-1a checksum, compared here with the host runtime's outputs.
"""

import fcntl
import os
import re
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

import cortexm
from file_limits import file_size_limit
from cortexm import _core, export_c, qemu

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / "export-c"
RNG = np.random.default_rng(11)
Q = {"scales": [0.05], "zero_points": [3]}

needs_host_tools = pytest.mark.skipif(not (shutil.which("cmake") and shutil.which("ninja") and shutil.which("c++")),
                                      reason="needs cmake, ninja and a C++ compiler")
needs_qemu = pytest.mark.skipif(
    not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++") and shutil.which("ninja")),
    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")


def small_graph():
    """Three inputs (int8 cat through channels-last, a float permute), two outputs; two input cases."""
    g = cortexm.Graph()
    a = g.add_input("a", [1, 3, 4, 5], "int8", qparams=Q)
    b = g.add_input("b", [1, 2, 4, 5], "int8", qparams=Q)
    x = g.add_input("x", [2, 3, 4], "float32")
    a_cl = g.call("dim_order_ops._clone_dim_order.default", [a], {"dim_order": [0, 2, 3, 1]})
    b_cl = g.call("dim_order_ops._clone_dim_order.default", [b], {"dim_order": [0, 2, 3, 1]})
    cat = g.call("aten.cat.default", [a_cl, b_cl], {"dim": 1})
    perm = g.call("aten.permute_copy.default", [x], {"dims": [2, 0, 1]})
    g.outputs = [cat, g.call("aten.relu.default", [perm], {})]
    cases = [[RNG.integers(-128, 128, (1, 3, 4, 5)).astype(np.int8),
              RNG.integers(-128, 128, (1, 2, 4, 5)).astype(np.int8),
              (RNG.standard_normal((2, 3, 4)) * 3).astype(np.float32)] for _ in range(2)]
    return g, cases


@pytest.fixture(scope="module")
def small():
    graph, cases = small_graph()
    return graph, cases, cortexm.to_program(graph, bundle_inputs=[tuple(c) for c in cases])


def zoo_program(name, target="cortex-m55+int8"):
    pytest.importorskip("torch")
    import zoo

    _, example, _, _ = zoo.exported(name)
    inputs = [x.numpy() for x in example]
    return cortexm.to_program(zoo.lowered(name, target), target=target, bundle_inputs=tuple(inputs)), inputs


@pytest.fixture(scope="module")
def ds_cnn():
    return zoo_program("ds_cnn")


def fnv1a(data: bytes) -> int:
    h = 2166136261
    for byte in data:
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return h


def checksums(outputs) -> list:
    outputs = list(outputs) if isinstance(outputs, tuple) else [outputs]
    return [(o.nbytes, fnv1a(np.ascontiguousarray(o).tobytes())) for o in outputs]


def printed_checksums(log: str) -> list:
    """[[(bytes, checksum) per output] per case] as main.cc prints them."""
    cases = {}
    for c, n, h in re.findall(r"^case (\d+) output \d+: (\d+) bytes, fnv1a 0x([0-9a-f]{8})$", log, re.M):
        cases.setdefault(int(c), []).append((int(n), int(h, 16)))
    return [cases[c] for c in sorted(cases)]


def host_checksums(program, cases) -> list:
    return [checksums(program.run(*inputs)) for inputs in cases]


# --- the files ---------------------------------------------------------------------------------


def macros(header: str) -> dict:
    return dict(re.findall(r"^#define (\w+) (.+?)(?:\s+//.*)?$", header, re.M))


def test_files_hold_the_program_and_its_sizes(small, tmp_path):
    graph, cases, program = small
    inputs = cases[0]
    written = program.export_c(tmp_path / "out" / "nested", name="tiny")
    assert sorted(os.listdir(tmp_path / "out" / "nested")) == \
        ["CMakeLists.txt", "cortexm.cmake", "main.cc", "tiny_ops.cc", "tiny_program.c", "tiny_program.h"]
    assert written["source"] == str(tmp_path / "out" / "nested" / "tiny_program.c")
    source = Path(written["source"]).read_text()
    assert '__attribute__((aligned(16))) const uint8_t tiny_program[TINY_PROGRAM_SIZE]' in source
    assert '#define CORTEXM_PROGRAM_SECTION ".rodata.cortexm_program"' in source
    body = source[source.index("= {") + 3:source.rindex("};")]
    assert bytes(int(t, 16) for t in re.findall(r"0x([0-9a-f]{2}),", body)) == program.data

    m = macros(Path(written["header"]).read_text())
    assert m["TINY_PROGRAM_SIZE"] == f"{len(program.data)}u"
    assert m["TINY_ARENA_SIZE"] == f"{program.arena_size}u"
    assert (m["TINY_NUM_INPUTS"], m["TINY_NUM_OUTPUTS"], m["TINY_NUM_BUNDLED_CASES"]) == ("3", "2", "2")
    assert m["TINY_INPUT0_SHAPE"] == "{1, 3, 4, 5}" and m["TINY_INPUT0_DTYPE"] == '"int8"'
    assert m["TINY_INPUT2_NAME"] == '"x"' and m["TINY_INPUT2_BYTES"] == f"{2 * 3 * 4 * 4}u"
    assert m["TINY_INPUT2_ELEMENT_SIZE"] == "4u" and m["TINY_INPUT2_RANK"] == "3"
    outs = graph.run(*inputs)
    assert m["TINY_OUTPUT0_SHAPE"] == "{1, 5, 4, 5}" and m["TINY_OUTPUT0_BYTES"] == f"{outs[0].nbytes}u"
    assert m["TINY_OUTPUT1_SHAPE"] == "{4, 2, 3}" and m["TINY_OUTPUT1_DTYPE"] == '"float32"'
    assert m["TINY_OUTPUT_BYTES"] == f"{outs[0].nbytes + outs[1].nbytes}u"
    assert "cortexm_add_tiny" in Path(written["cmake"]).read_text()
    assert "add_executable(tiny_main main.cc)" in Path(written["cmakelists"]).read_text()


def test_default_name_and_names_from_file_stems(small, tmp_path):
    program = small[2]
    program.export_c(tmp_path)
    assert (tmp_path / "model_program.h").is_file()
    from cortexm.export_c import default_name

    assert default_name("ds_cnn") == "ds_cnn"
    assert default_name("ds-cnn.v2") == "ds_cnn_v2"
    assert default_name("8bit") == "model_8bit"
    assert default_name("__") == "model"


def test_tensor_names_become_c_string_literals():
    from cortexm.escape import c_string

    assert c_string("conv_1") == '"conv_1"'
    assert c_string('a"b\\c??=\n\u00e9') == '"a\\"b\\\\c\\077\\077=\\012\\303\\251"'


HOSTILE = 'cortex-m55+int8\n#include "/etc/passwd"\n#error injected */ /* ??/\n\x1b[2J\u202e\\'


@pytest.fixture()
def hostile_strings(monkeypatch):
    """Program.target and the input names as a crafted program file could hold them (the loader may
    refuse them; Python escapes them whatever it loads)."""
    inputs = cortexm.Program.inputs.fget
    monkeypatch.setattr(cortexm.Program, "target", property(lambda self: HOSTILE))
    monkeypatch.setattr(cortexm.Program, "inputs", property(
        lambda self: [dict(spec, name=HOSTILE + spec["name"]) for spec in inputs(self)]))


def test_strings_from_the_program_cannot_break_out_of_the_generated_sources(small, tmp_path, hostile_strings):
    written = small[2].export_c(tmp_path / "c", "tiny")
    for kind, path in written.items():
        text = Path(path).read_text()
        assert text.isascii() and "\x1b" not in text and "\u202e" not in text
        assert not re.search(r"^\s*#\s*(include \"/etc|error)", text, re.M), path
        comments = [line for line in text.splitlines() if line.lstrip().startswith("//")]
        assert not [c for c in comments if "*/" in c or "??" in c], path
        assert "??/" not in text, path
        if kind in ("header", "source", "ops", "main"):  # a C line ending in a backslash continues
            assert not re.search(r"\\$", text, re.M), path
    header = Path(written["header"]).read_text()
    escaped = 'cortex-m55+int8\\n#include "/etc/passwd"\\n#error injected *\\/ /* ?\\?/\\n\\x1b[2J\\u202e\\x5c'
    assert f"// The cortexm program 'tiny' ({escaped}, {small[2].num_ops} ops)" in header
    assert f"// input 0: '{escaped}a', int8[1, 3, 4, 5]" in header
    if shutil.which("cc"):  # the header compiles as C11 (trigraphs on), with no injected line
        proc = subprocess.run(["cc", "-std=c11", "-fsyntax-only", "-Werror", "-x", "c", written["header"]],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.returncode == 0, proc.stdout


def test_strings_from_the_program_are_escaped_on_the_terminal(small, hostile_strings):
    for text in (small[2].summary(), repr(small[2])):
        assert text.isprintable() and "\\n#include" in text and "\\x1b[2J\\u202e" in text


@pytest.mark.parametrize("name", ["", "9lives", "_hidden", "a-b", "x y", "ünï", 7])
def test_bad_names_are_refused(small, tmp_path, name):
    with pytest.raises(ValueError, match="must be a C identifier"):
        small[2].export_c(tmp_path, name=name)
    assert os.listdir(tmp_path) == []


def test_a_path_that_is_not_a_directory_is_refused(small, tmp_path):
    path = tmp_path / "file.txt"
    path.write_text("keep")
    with pytest.raises(ValueError, match="is not a directory"):
        small[2].export_c(path)
    with pytest.raises(ValueError, match="dir must be a path"):
        small[2].export_c(42)
    assert path.read_text() == "keep"


def test_files_are_written_atomically(small, tmp_path):
    program = small[2]
    (tmp_path / "main.cc").write_text("old main")
    with file_size_limit(1000), pytest.raises(OSError, match="write failed: File too large"):
        program.export_c(tmp_path, "tiny")
    assert os.listdir(tmp_path) == ["main.cc"]  # no partial or temporary file
    assert (tmp_path / "main.cc").read_text() == "old main"


def contents(directory: Path) -> dict:
    return {f.name: f.read_bytes() for f in directory.iterdir() if f.is_file()}


@pytest.mark.parametrize("failing", [2, 6])
def test_the_files_change_together_or_not_at_all(small, tmp_path, monkeypatch, failing):
    """A write failing in the middle (the failing-th file) leaves the previous export whole: never
    some files of the new one next to the old others, and nothing else left behind."""
    graph, cases, program = small
    out = tmp_path / "c"
    program.export_c(out, "tiny")
    before = contents(out)
    unbundled = cortexm.to_program(graph)  # other bytes, other bundled-case count
    from cortexm import atomic_write

    calls = []
    original = atomic_write.write_file_atomically

    def fails_at_the_nth(path, data):
        calls.append(path)
        if len(calls) == failing:
            raise OSError(28, "No space left on device", str(path))
        original(path, data)

    monkeypatch.setattr(atomic_write, "write_file_atomically", fails_at_the_nth)
    monkeypatch.setattr(export_c, "write_file_atomically", fails_at_the_nth, raising=False)  # main's export_c
    with pytest.raises(OSError, match="No space left on device"):
        unbundled.export_c(out, "tiny")
    assert contents(out) == before
    assert sorted(os.listdir(tmp_path)) == ["c"]
    monkeypatch.undo()
    unbundled.export_c(out, "tiny")
    after = contents(out)
    assert sorted(after) == sorted(before) and after != before
    assert "#define TINY_NUM_BUNDLED_CASES 0" in after["tiny_program.h"].decode()


def test_a_failed_swap_leaves_the_old_directory(small, tmp_path, monkeypatch):
    out = tmp_path / "c"
    small[2].export_c(out, "tiny")
    before = contents(out)
    from cortexm import atomic_write

    def refused(a, b):
        raise OSError(16, "Device or resource busy", a)

    monkeypatch.setattr(atomic_write, "_swap", refused)
    with pytest.raises(OSError, match="Device or resource busy"):
        cortexm.to_program(small[0]).export_c(out, "tiny")
    assert contents(out) == before and sorted(os.listdir(tmp_path)) == ["c"]


def test_a_new_export_keeps_the_directory_s_other_entries(small, tmp_path):
    """The directory is replaced as a whole, but what export_c did not write there (the build
    directory its CMakeLists.txt suggests, notes) is moved into the new one."""
    out = tmp_path / "c"
    small[2].export_c(out, "tiny")
    (out / "build").mkdir()
    (out / "build" / "CMakeCache.txt").write_text("cache")
    (out / "notes.txt").write_text("mine")
    out.chmod(0o750)
    cortexm.to_program(small[0]).export_c(out, "tiny")
    assert (out / "build" / "CMakeCache.txt").read_text() == "cache" and (out / "notes.txt").read_text() == "mine"
    assert "#define TINY_NUM_BUNDLED_CASES 0" in (out / "tiny_program.h").read_text()
    assert (out.stat().st_mode & 0o777) == 0o750
    assert sorted(os.listdir(tmp_path)) == ["c"]


def test_what_a_killed_export_left_is_removed_by_the_next(small, tmp_path):
    """A writer killed before its swap leaves its staging directory (export files only): the next
    export removes it once no writer holds its lock. One holding other entries (a kill while the
    user's entries moved) and a live writer's are left."""
    out = tmp_path / "c"
    abandoned, users, fresh = (tmp_path / f".c.cortexm-{n}.tmp" for n in ("1-aa", "2-bb", "3-cc"))
    for d in (abandoned, users, fresh):
        d.mkdir()
        (d / "old_program.c").write_text("x")
        (d / ".main.cc.cortexm-1-0.tmp").write_text("x")
    (users / "notes.txt").write_text("mine")
    for d in (abandoned, users):
        os.utime(d, (0, 0))
    small[2].export_c(out, "tiny")
    assert sorted(os.listdir(tmp_path)) == sorted(["c", users.name, fresh.name])
    with locked_directory(fresh):  # a live writer's
        os.utime(fresh, (0, 0))
        small[2].export_c(out, "tiny")
        assert fresh.is_dir()
    small[2].export_c(out, "tiny")
    assert sorted(os.listdir(tmp_path)) == sorted(["c", users.name])


@contextmanager
def locked_directory(path: Path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def test_the_current_directory_is_refused(small, tmp_path, monkeypatch):
    (tmp_path / "c").mkdir()
    monkeypatch.chdir(tmp_path / "c")
    for directory in (".", tmp_path):
        with pytest.raises(ValueError, match="is or holds the current directory"):
            small[2].export_c(directory, "tiny")
    assert os.listdir(tmp_path / "c") == []


# --- built and run ---------------------------------------------------------------------------


@contextmanager
def locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def sync(src: Path, dst: Path):
    """Copies the files of src that differ into dst (unchanged files keep their time stamps)."""
    dst.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        target = dst / f.name
        if not target.is_file() or target.read_bytes() != f.read_bytes():
            shutil.copyfile(f, target)


def build(kind: str, programs: dict, tmp_path: Path, edit=None) -> Path:
    """Exports programs ({name: Program}) and builds their <name>_main in the project of kind
    ("host" or a cpu); returns the build directory. edit(directory, name), when given, changes
    each exported directory before it is built."""
    top = BUILD / kind
    with locked(BUILD / f".{kind}.lock"):
        for name, program in programs.items():
            program.export_c(tmp_path / name, name)
            if edit:
                edit(tmp_path / name, name)
            sync(tmp_path / name, top / "src" / name)
        subdirs = sorted(d.name for d in (top / "src").iterdir() if (d / "CMakeLists.txt").is_file())
        text = ("cmake_minimum_required(VERSION 3.24)\nproject(cortexm_export_c_test LANGUAGES C CXX)\n"
                + "".join(f"add_subdirectory({d})\n" for d in subdirs))
        parent = top / "src" / "CMakeLists.txt"
        if not parent.is_file() or parent.read_text() != text:
            parent.write_text(text)
        out = top / "build"
        if not (out / "build.ninja").is_file():
            cmd = ["cmake", "-S", str(top / "src"), "-B", str(out), "-G", "Ninja", f"-DCORTEXM_ROOT={ROOT}"]
            if kind != "host":
                cmd += [f"-DCMAKE_TOOLCHAIN_FILE={ROOT / 'cmake' / 'arm-none-eabi.cmake'}", f"-DCORTEXM_CPU={kind}",
                        f"-DCORTEXM_QEMU_MACHINE={qemu.MACHINES[kind]}"]
            if shutil.which("ccache"):
                cmd += ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
            run_checked(cmd)
        run_checked(["cmake", "--build", str(out), "--target", *(f"{n}_main" for n in programs), "--", "-j2"])
    return out


def run_checked(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)}:\n{proc.stdout[-4000:]}"


def run_host(out: Path, name: str):
    proc = subprocess.run([str(out / name / f"{name}_main")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=300)
    return proc.returncode, proc.stdout


def wrong_expected_program(small):
    """The small program with one wrong element in case 1's output 1."""
    graph, _, program = small
    bundled = program.bundled()
    bundled[1][1][1][3, 1, 2] += 1.0
    return cortexm.Program(_core.write_program(graph, "cortex-m55+int8", None, bundled))


@needs_host_tools
def test_host_build_passes_zero_inputs_and_catches_a_wrong_output(small, tmp_path):
    graph, cases, program = small
    unbundled = cortexm.to_program(graph)
    out = build("host", {"small": program, "small_unbundled": unbundled,
                         "small_wrong": wrong_expected_program(small)}, tmp_path)

    code, log = run_host(out, "small")
    assert code == 0 and log.rstrip().endswith("PASS"), log
    assert f"small case 1: {program.num_ops} ops run" in log
    assert printed_checksums(log) == host_checksums(program, cases)

    code, log = run_host(out, "small_unbundled")
    assert code == 0 and "DONE: no expected outputs bundled" in log, log
    zeros = [np.zeros_like(x) for x in cases[0]]
    assert printed_checksums(log) == host_checksums(unbundled, [zeros])
    assert printed_checksums(log) != host_checksums(unbundled, cases[:1])

    code, log = run_host(out, "small_wrong")
    assert code == 1 and log.rstrip().endswith("FAIL"), log
    assert "case 1 output 1 differs from the expected output from byte" in log and log.count("differs") == 1
    assert "case 1 output 1 differs from the expected output from byte" in log
    assert log.count("differs") == 1
    assert printed_checksums(log) == host_checksums(program, cases)

    # the program bytes: 16-byte aligned, in their own section
    obj = next((out / "small" / "CMakeFiles").glob("small_main.dir/**/small_program.c.o"))
    sections = subprocess.run(["objdump", "-h", str(obj)], stdout=subprocess.PIPE, text=True, check=True).stdout
    assert re.search(r"\.rodata\.cortexm_program\s+\S+\s+\S+\s+\S+\s+\S+\s+2\*\*4", sections), sections


@needs_host_tools
def test_host_build_of_ds_cnn_passes(ds_cnn, tmp_path):
    program, inputs = ds_cnn
    out = build("host", {"ds_cnn": program}, tmp_path)
    code, log = run_host(out, "ds_cnn")
    assert code == 0 and log.rstrip().endswith("PASS"), log
    assert printed_checksums(log) == host_checksums(program, [inputs])


# the code memory of each machine's linker script (firmware/ld): the program array must sit in it
CODE = {"cortex-m55": (0x10000000, 512 << 10), "cortex-m4": (0x00000000, 4 << 20)}


@needs_qemu
@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4"])
def test_target_build_passes_on_qemu(small, cpu, tmp_path):
    program, inputs = zoo_program("ds_cnn", f"{cpu}+int8")
    out = build(cpu, {"small": small[2], "small_wrong": wrong_expected_program(small), "ds_cnn": program}, tmp_path)
    for name, prog, cases in [("small", small[2], small[1]), ("ds_cnn", program, [inputs])]:
        elf = out / name / f"{name}_main.elf"
        code, log = qemu.run_elf(elf, cpu, timeout=300)
        assert code == 0 and log.rstrip().endswith("PASS"), log
        assert printed_checksums(log) == host_checksums(prog, cases)
        # the program sits in the code memory, 16-byte aligned
        symbols = subprocess.run(["arm-none-eabi-nm", str(elf)], stdout=subprocess.PIPE, text=True, check=True).stdout
        address = int(re.search(rf"^([0-9a-f]+) [RrTt] {name}_program$", symbols, re.M).group(1), 16)
        start, size = CODE[cpu]
        assert address % 16 == 0 and start <= address < start + size
    code, log = qemu.run_elf(out / "small_wrong" / "small_wrong_main.elf", cpu, timeout=300)
    assert code == 1 and log.rstrip().endswith("FAIL"), log
    assert "case 1 output 1 differs from the expected output from byte" in log and log.count("differs") == 1


def drop_kernel(kernel: str):
    """An edit for build(): <name>_ops.cc without kernel, as firmware built for other programs."""
    def edit(directory: Path, name: str):
        ops = directory / f"{name}_ops.cc"
        text = ops.read_text()
        assert f"    CORTEXM_OP({kernel}),\n" in text
        ops.write_text(text.replace(f"    CORTEXM_OP({kernel}),\n", ""))
    return edit


@needs_host_tools
def test_a_kernel_the_firmware_lacks_is_a_clear_load_error(ds_cnn, tmp_path):
    program, _ = ds_cnn
    out = build("host", {"ds_cnn_no_linear": program}, tmp_path, drop_kernel("QuantizedLinear"))
    code, log = run_host(out, "ds_cnn_no_linear")
    index = next(i for i, op in enumerate(program.ops()) if op["kernel"] == "QuantizedLinear")
    assert code == 1, log
    assert log.startswith(f"FAIL: loading ds_cnn_no_linear: ops {index}: kernel = ") and \
        "(QuantizedLinear) is not registered in this runtime's OpResolver" in log, log


def runtime_ops_linked(elf: Path) -> set:
    """The runtime's per-kernel OpImpl objects (cortexm::runtime::op::<KernelId>, or
    <KernelId>OnPaths<paths> for a kernel built with some of its paths) in a firmware."""
    symbols = subprocess.run(["arm-none-eabi-nm", "-C", str(elf)], stdout=subprocess.PIPE, text=True,
                             check=True).stdout
    return set(re.findall(r" cortexm::runtime::op::(\w+?)(?:OnPaths<\w+>)?$", symbols, re.M)), symbols


def set_paths(kernel: str, paths: int):
    """An edit for build(): <name>_ops.cc registering other code paths of kernel."""
    def edit(directory: Path, name: str):
        ops = directory / f"{name}_ops.cc"
        text, count = re.subn(rf"CORTEXM_OP_PATHS\({kernel}, 0x[0-9a-f]+\)", f"CORTEXM_OP_PATHS({kernel}, {paths:#x})",
                              ops.read_text())
        assert count == 1
        ops.write_text(text)
    return edit


def test_op_table_registers_the_paths_the_ops_take(ds_cnn, tmp_path):
    program, _ = ds_cnn
    paths = export_c.kernel_paths(program)
    # ds_cnn: folded-bias convs with rows over 16 taps, 3x3 depthwise (dm 1), one small avg pool
    assert paths == {"QuantizedConv2d": 0x9, "QuantizedDepthwiseConv2d": 0x1, "QuantizedAvgPool2d": 0x1}
    text = Path(program.export_c(tmp_path, "ds_cnn")["ops"]).read_text()
    for kernel, bits in paths.items():
        assert f"    CORTEXM_OP_PATHS({kernel}, {bits:#x}),\n" in text
    assert "    CORTEXM_OP(QuantizedLinear),\n" in text


@needs_host_tools
def test_an_op_taking_a_path_the_firmware_lacks_is_a_clear_load_error(ds_cnn, tmp_path):
    program, _ = ds_cnn
    # long rows only: the convs' folded bias is not built
    out = build("host", {"ds_cnn_no_folded": program}, tmp_path, set_paths("QuantizedConv2d", 0x8))
    code, log = run_host(out, "ds_cnn_no_folded")
    index = next(i for i, op in enumerate(program.ops()) if op["kernel"] == "QuantizedConv2d")
    assert code == 1, log
    assert log.startswith(f"FAIL: loading ds_cnn_no_folded: ops {index}: kernel paths = 9") and \
        "are not all registered in this runtime's OpResolver" in log, log


@needs_qemu
def test_target_firmware_links_only_the_kernels_its_program_runs(ds_cnn, small, tmp_path):
    program, inputs = ds_cnn
    out = build("cortex-m55", {"ds_cnn": program, "small": small[2]}, tmp_path)
    elf = out / "ds_cnn" / "ds_cnn_main.elf"
    linked, symbols = runtime_ops_linked(elf)
    assert linked == {op["kernel"] for op in program.ops()}
    # nothing of the kernels it does not run: the 16x8 conv, the float ops, permute, mul
    for absent in ["cortexm::quantized_conv2d_s16(", "cortexm::runtime::run_float_binary(", "cortexm::portable::permute(",
                   "cortexm::mve::quantized_mul(", "cortexm::runtime::run_mean(",
                   # nor the paths of its kernels it does not take: unfolded bias, short rows, depthwise
                   # windows other than 3x3's, int32 pool sums
                   "short_channels<", "channels<1, false>", "pixel_m1<0, 0>", "pair_m1<0, 0>", "average_pool<false>"]:
        assert absent not in symbols, absent
    small_linked, _ = runtime_ops_linked(out / "small" / "small_main.elf")
    assert small_linked == {op["kernel"] for op in small[2].ops()} and small_linked != linked

    code, log = qemu.run_elf(elf, "cortex-m55", timeout=300)
    assert code == 0 and log.rstrip().endswith("PASS"), log
    assert printed_checksums(log) == host_checksums(program, [inputs])
    used, size = map(int, re.search(r"^stack: (\d+) bytes used of (\d+)$", log, re.M).groups())
    assert 0 < used < size == 64 << 10


@pytest.fixture(scope="module")
def ds_cnn_int8():
    """ds_cnn with int8 inputs and outputs (to_program(io="int8")), its float example bundled."""
    pytest.importorskip("torch")
    import zoo

    _, example, _, _ = zoo.exported("ds_cnn")
    program = cortexm.to_program(zoo.lowered("ds_cnn"), io="int8", bundle_inputs=tuple(x.numpy() for x in example))
    return program, program.bundled()[0][0]


def test_header_gives_each_quantized_input_and_outputs_scale_and_zero_point(ds_cnn, ds_cnn_int8, tmp_path):
    program, _ = ds_cnn_int8
    m = macros(Path(program.export_c(tmp_path / "int8", "kws")["header"]).read_text())
    for kind, spec in [("INPUT0", program.inputs[0]), ("OUTPUT0", program.outputs[0])]:
        assert m[f"KWS_{kind}_DTYPE"] == '"int8"'
        assert float(m[f"KWS_{kind}_SCALE"]) == spec["scale"] and int(m[f"KWS_{kind}_ZERO_POINT"]) == spec["zero_point"]
    assert m["KWS_INPUT0_SCALE"] == repr(program.inputs[0]["scale"])
    float_macros = macros(Path(ds_cnn[0].export_c(tmp_path / "float", "kws")["header"]).read_text())
    assert "KWS_INPUT0_BYTES" in float_macros
    assert not [k for k in float_macros if k.endswith(("_SCALE", "_ZERO_POINT"))]


@needs_qemu
def test_int8_io_firmware_passes_on_qemu_m55(ds_cnn_int8, tmp_path):
    program, inputs = ds_cnn_int8
    out = build("cortex-m55", {"ds_cnn_int8": program}, tmp_path)
    elf = out / "ds_cnn_int8" / "ds_cnn_int8_main.elf"
    linked, _ = runtime_ops_linked(elf)
    assert linked == {op["kernel"] for op in program.ops()} and not {"QuantizePerTensor", "DequantizePerTensor"} & linked
    code, log = qemu.run_elf(elf, "cortex-m55", timeout=300)
    assert code == 0 and log.rstrip().endswith("PASS"), log
    assert printed_checksums(log) == host_checksums(program, [inputs])


def test_the_firmware_sources_are_template_files_of_the_package(small, tmp_path):
    from importlib import resources

    templates = resources.files("cortexm") / "templates"
    written = small[2].export_c(tmp_path / "c", "tiny")
    main = (templates / "main.cc.in").read_text()
    assert Path(written["main"]).read_text() == main.replace("@NAME@", "tiny").replace("@PREFIX@", "TINY")
    for kind, template in (("source", "program.c.in"), ("header", "program.h.in"), ("ops", "ops.cc.in"),
                           ("cmake", "cortexm.cmake.in"), ("cmakelists", "CMakeLists.txt.in")):
        first_line = (templates / template).read_text().splitlines()[0]
        assert Path(written[kind]).read_text().splitlines()[0] == first_line.replace("@NAME@", "tiny").replace(
            "@TARGET_COMMENT@", small[2].target).replace("@NUM_OPS@", str(small[2].num_ops))


def test_template_values_are_explicit_and_one_line():
    from cortexm.export_c import _render

    with pytest.raises(ValueError, match="one-line string"):
        _render("cortexm.cmake.in", {"NAME": 'x\n#include "/etc/passwd"'})
    with pytest.raises(KeyError, match="NAME"):
        _render("cortexm.cmake.in", {})
    with pytest.raises(ValueError, match=r"no placeholder for \['PREFIX'\]"):
        _render("cortexm.cmake.in", {"NAME": "x", "PREFIX": "X"})
