"""Issue 35: files, paths, graph JSON, run_batch threads and input copies. Graph files nested far too
deep, devices, FIFOs and oversized files, bad paths, thread counts that cannot start and huge
wrong-shape inputs end in a Python error naming the problem: never a crash, a hang, an unbounded read
or a file written under a wrong name. Each check that could take the process down runs in a child
process (with a timeout and an address-space limit), so a regression fails the test, not the suite."""

import errno
import json
import os
import re
import resource
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import cortexm
from cortexm.atomic_write import write_file_atomically

ROOT = Path(__file__).resolve().parents[2]
SEED_GRAPH = ROOT / "tests" / "fuzz" / "corpus" / "graph" / "seed_softmax.cmg"


def run_child(code: str, tmp_path, timeout: float = 60, address_space_gib: float | None = 4):
    """Runs `code` in a fresh Python after `import cortexm` with an address space limited to
    address_space_gib GiB above what the imports take (a runaway read ends in MemoryError rather than
    in the machine's memory); returns its stdout. The child must exit 0 within `timeout` seconds."""
    prelude = textwrap.dedent(f"""
        import errno, os, resource, sys
        import numpy as np
        import cortexm
        from cortexm import _core
        address_space_gib = {address_space_gib!r}
        if address_space_gib is not None:
            with open("/proc/self/status") as f:
                vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
            limit = vm + int(address_space_gib * (1 << 30))
            resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
        """)
    def fixed_thread_stacks():  # glibc sizes thread stacks from RLIMIT_STACK at start
        resource.setrlimit(resource.RLIMIT_STACK, (8 << 20, resource.getrlimit(resource.RLIMIT_STACK)[1]))

    package_root = str(Path(cortexm.__file__).resolve().parents[1])  # the parent's cortexm
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]))
    try:
        done = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=timeout, preexec_fn=fixed_thread_stacks)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child did not finish within {timeout} s (it blocks or reads without bound)")
    assert done.returncode == 0, f"child exited with {done.returncode}:\n{done.stdout}\n{done.stderr[-3000:]}"
    return done.stdout


def graph_file(header: dict, splice: dict[str, str]) -> bytes:
    """A graph file with `header` as its JSON, each string value "@key" replaced by splice[key]'s
    raw text, and the seed's constant blob and checksum."""
    seed = SEED_GRAPH.read_bytes()
    header_len = struct.unpack_from("<Q", seed, 12)[0]
    blob_and_crc = seed[(20 + header_len + 63) // 64 * 64:]
    text = json.dumps(header)
    for key, raw in splice.items():
        text = text.replace(json.dumps("@" + key), raw)
    data = seed[:12] + struct.pack("<Q", len(text)) + text.encode()
    return data + b"\0" * (-len(data) % 64) + blob_and_crc


def seed_header() -> dict:
    seed = SEED_GRAPH.read_bytes()
    header_len = struct.unpack_from("<Q", seed, 12)[0]
    return json.loads(seed[20:20 + header_len])


def deep_shape_list_file() -> bytes:
    """The first value's shape holds, where an int belongs, a list nested 200,000 deep (400 KB)."""
    header = seed_header()
    header["values"][0]["shape"] = ["@deep"]
    return graph_file(header, {"deep": "[" * 200_000 + "1" + "]" * 200_000})


def deep_unknown_field_file() -> bytes:
    """The first value has an unknown field: a list nested 1,000,000 deep (2 MB)."""
    header = seed_header()
    header["values"][0]["unknown"] = "@deep"
    return graph_file(header, {"deep": "[" * 1_000_000 + "]" * 1_000_000})


def test_the_seed_graph_loads_as_is(tmp_path):
    # graph_file's rewriting itself keeps a file valid: only the splices make the files below bad.
    graph = cortexm.Graph.from_bytes(graph_file(seed_header(), {}))
    assert graph.to_bytes() == cortexm.Graph.load(SEED_GRAPH).to_bytes()


@pytest.mark.parametrize("make", [deep_shape_list_file, deep_unknown_field_file])
def test_deeply_nested_graph_json_is_a_value_error(make, tmp_path):
    (tmp_path / "deep.cmg").write_bytes(make())
    out = run_child("""
        for load in (lambda: cortexm.Graph.load("deep.cmg"),
                     lambda: cortexm.Graph.from_bytes(open("deep.cmg", "rb").read())):
            try:
                load()
            except ValueError as e:
                print(len(str(e)), str(e))
            else:
                print("loaded")
        """, tmp_path)
    lines = out.splitlines()
    assert len(lines) == 2, out
    for line in lines:
        length, message = line.split(" ", 1)
        assert "nested deeper than kMaxJsonDepth = 64 levels" in message
        assert int(length) < 300


def test_a_bad_value_is_shown_as_a_short_escaped_excerpt():
    header = seed_header()
    header["values"][0]["dtype"] = ["\u00e9\n" * 100_000] + list(range(100_000))
    with pytest.raises(ValueError, match=r"has the wrong type: \[\"\\u00e9\\n") as e:
        cortexm.Graph.from_bytes(graph_file(header, {}))
    assert len(str(e.value)) < 300 and str(e.value).endswith("...")
    header = seed_header()
    header["values"][0]["shape"] = [list(range(100_000))]
    with pytest.raises(ValueError, match=r"must be an integer, got \[0, 1, 2, ") as e:
        cortexm.Graph.from_bytes(graph_file(header, {}))
    assert len(str(e.value)) < 300


@pytest.fixture(scope="module")
def program_file(tmp_path_factory):
    g = cortexm.Graph()
    x = g.add_input("x", [3, 4, 5], "float32")
    g.outputs = [g.call("aten._softmax.default", [x], {"dim": 1, "half_to_float": False})]
    path = tmp_path_factory.mktemp("program") / "softmax.cmpte"
    cortexm.to_program(g).save(path)
    return path


def test_devices_fifos_and_directories_are_refused_without_reading(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    out = run_child("""
        for path in ("/dev/zero", "fifo", "dir"):
            for load in (cortexm.load_program, cortexm.Graph.load):
                try:
                    load(path)
                except OSError as e:
                    print(path, errno.errorcode[e.errno], e.filename, "|", e.strerror)
                else:
                    print(path, "loaded")
        """, tmp_path, timeout=30, address_space_gib=1)
    lines = out.splitlines()
    assert len(lines) == 6, out
    for line, (path, code, kind) in zip(lines, [("/dev/zero", "EINVAL", "a character device")] * 2 +
                                        [("fifo", "EINVAL", "a FIFO")] * 2 + [("dir", "EISDIR", "a directory")] * 2):
        assert line.startswith(f"{path} {code} {path} | "), out
        assert kind in line and ("program file" in line or "graph file" in line), out


def test_files_larger_than_the_format_allows_are_refused_before_reading(tmp_path):
    with open(tmp_path / "big.cmpte", "wb") as f:
        f.truncate((1 << 31) - 1)  # sparse: one byte more than the loader takes
    with open(tmp_path / "big.cmg", "wb") as f:
        f.truncate((1 << 34) + 1)
    out = run_child("""
        for load, path in ((cortexm.load_program, "big.cmpte"), (cortexm.Graph.load, "big.cmg")):
            try:
                load(path)
            except OSError as e:
                print(errno.errorcode[e.errno], e.filename, "|", e.strerror)
        """, tmp_path, address_space_gib=1)
    assert out.splitlines() == [
        "EFBIG big.cmpte | is 2147483647 bytes, more than the 2147483646 a program file can hold: File too large",
        "EFBIG big.cmg | is 17179869185 bytes, more than the 17179869184 a graph file can hold: File too large"], out


BAD_PATHS = [(None, TypeError, "None must be a str or os.PathLike"),
             (b"g.cmg", TypeError, r"b'g.cmg' must be a str or os.PathLike \(decode bytes with os.fsdecode\)"),
             (3, TypeError, "3 must be a str or os.PathLike"),
             ("g\0.cmg", ValueError, "contains a NUL character"),
             (Path("g\0.cmg"), ValueError, "contains a NUL character")]


@pytest.mark.parametrize("path, error, message", BAD_PATHS, ids=["None", "bytes", "int", "nul", "pathlib-nul"])
def test_bad_paths_raise_and_write_nothing(path, error, message, program_file, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    graph = cortexm.Graph.load(SEED_GRAPH)
    program = cortexm.load_program(program_file)
    with pytest.raises(error, match="Graph.save: path = .*" + message):
        graph.save(path)
    with pytest.raises(error, match="Program.save: path = .*" + message):
        program.save(path)
    with pytest.raises(error, match="write_file_atomically: path = .*" + message):
        write_file_atomically(path, b"data")
    assert sorted(os.listdir(tmp_path)) == []
    with pytest.raises(error, match="Graph.load: path = .*" + message):
        cortexm.Graph.load(path)
    with pytest.raises(error, match="load_program: path = .*" + message):
        cortexm.load_program(path)


def test_good_paths_still_work(program_file, tmp_path):
    graph = cortexm.Graph.load(str(SEED_GRAPH))
    for path in (tmp_path / "a.cmg", str(tmp_path / "b.cmg")):
        graph.save(path)
        assert cortexm.Graph.load(path).to_bytes() == graph.to_bytes()
    program = cortexm.load_program(str(program_file))
    program.save(tmp_path / "p.cmpte")
    assert cortexm.load_program(tmp_path / "p.cmpte").data == program.data


def test_a_huge_wrong_shape_input_is_refused_before_it_is_copied(program_file, tmp_path):
    # np.zeros is lazy: the 1 GiB costs no memory until something copies it.
    out = run_child(f"""
        import resource
        program = cortexm.load_program({str(program_file)!r})
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        x = np.zeros((1 << 28,), np.float32)
        for run in (lambda: program.run(x), lambda: program.run_batch([x], threads=1)):
            try:
                run()
            except ValueError as e:
                print(e)
        print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024, "MiB")
        """, tmp_path, address_space_gib=3)
    *errors, grown = out.splitlines()
    assert errors == [f"{program_file}: input 0 is float32[268435456], the program takes float32[3, 4, 5]",
                      f"{program_file}: case 0: input 0 is float32[268435456], the program takes float32[3, 4, 5]"]
    assert int(grown.split()[0]) < 64, out


def test_run_batch_caps_its_threads(program_file, tmp_path):
    # 3 GiB of address space holds the stacks of 256 threads (8 MiB each), not those of 1,000.
    out = run_child(f"""
        program = cortexm.load_program({str(program_file)!r})
        rng = np.random.default_rng(0)
        cases = [rng.standard_normal((3, 4, 5)).astype(np.float32) for _ in range(1000)]
        got = program.run_batch(cases, threads=10**6)
        print(all(g.tobytes() == program.run(c).tobytes() for g, c in zip(got, cases)), len(got))
        """, tmp_path, address_space_gib=3)
    assert out.split() == ["True", "1000"]


def test_a_thread_that_cannot_start_is_a_runtime_error(program_file, tmp_path):
    # 256 MiB of address space holds the stacks of about 30 threads: the 64th cannot start.
    out = run_child(f"""
        program = cortexm.load_program({str(program_file)!r})
        cases = [np.ones((3, 4, 5), np.float32)] * 64
        try:
            program.run_batch(cases, threads=64)
        except RuntimeError as e:
            print(e)
        resource.setrlimit(resource.RLIMIT_AS, (resource.getrlimit(resource.RLIMIT_AS)[1],) * 2)
        print(len(program.run_batch(cases, threads=64)))  # the program is still usable
        """, tmp_path, address_space_gib=0.25)
    error, count = out.splitlines()
    assert re.fullmatch(r"run_batch: threads = 64: thread \d+ of 64 could not be started \(.*\); ask for fewer threads",
                        error), out
    assert count == "64"
