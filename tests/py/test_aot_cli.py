"""python -m cortexm.aot and python -m cortexm.run on a small model given as path.py:factory."""

import os
import subprocess
import sys

import numpy as np
import pytest

import cortexm
from file_limits import file_size_limit

torch = pytest.importorskip("torch")

MODEL = '''
import torch


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4 * 6 * 6, 5)

    def forward(self, x):
        return torch.softmax(self.fc(torch.relu(self.conv(x)).flatten(1)), -1)


class Small16(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4 * 6 * 6, 5)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))


def factory16():
    torch.manual_seed(0)
    return Small16().eval(), (torch.randn(1, 3, 6, 6),), _gen


class Stem(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.conv3 = torch.nn.Conv2d(16, 4, 3, stride=2, padding=1)
        self.fc = torch.nn.Linear(4 * 5 * 5, 5)

    def forward(self, x):
        x = torch.relu(self.conv3(torch.relu(self.conv2(torch.relu(self.conv1(x))))))
        return self.fc(x.flatten(1))


def stem():
    torch.manual_seed(0)
    gen = lambda n: [(torch.randn(1, 3, 19, 19, generator=torch.Generator().manual_seed(i)),) for i in range(n)]
    return Stem().eval(), (torch.randn(1, 3, 19, 19),), gen


class FloatOnly(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(torch.sigmoid(x), -1)


def _gen(n):
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(1, 3, 6, 6, generator=g),) for _ in range(n)]


def factory():
    torch.manual_seed(0)
    return Small().eval(), (torch.randn(1, 3, 6, 6),), _gen


def float_only():
    return FloatOnly().eval(), (torch.randn(2, 7),)


def float_transposed():
    torch.manual_seed(0)
    return torch.nn.ConvTranspose2d(3, 2, 2, stride=2).eval(), (torch.randn(1, 3, 4, 4),)
'''


@pytest.fixture()
def model_file(tmp_path):
    path = tmp_path / "small_model.py"
    path.write_text(MODEL)
    return path


def aot(*args):
    from cortexm import aot as aot_module

    return aot_module.main([str(a) for a in args])


def test_aot_then_run_verifies_bundled_outputs(model_file, tmp_path, capsys):
    out = tmp_path / "small.cmpte"
    inter = tmp_path / "inter"
    assert aot("--model", f"{model_file}:factory", "--target", "cortex-m55+int8", "--quantize",
               "--calibration-samples", 3, "--intermediates", inter, "--bundleio", "--output", out) == 0
    text = capsys.readouterr().out
    assert "cortex_m.quantized_conv2d.default" in text and "cortex_m.quantized_linear.default" in text
    assert "ops left float (" in text and "data movement (" in text
    assert "arena" in text and "constants" in text
    assert (inter / "exported.cmg").exists() and (inter / "quantized.cmg").exists()
    assert len(list(inter.glob("*.cmg"))) > 2  # one per lowering pass too
    program = cortexm.load_program(out)
    assert program.verify() == 1

    from cortexm import run as run_module

    assert run_module.main([str(out)]) == 0
    text = capsys.readouterr().out
    assert "output 0: float32[1, 5]" in text and "bit-exact" in text

    x = np.random.default_rng(0).standard_normal((1, 3, 6, 6)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x)
    assert run_module.main([str(out), "--inputs", str(tmp_path / "in.npz"), "--profile"]) == 0
    assert "QuantizedConv2d" in capsys.readouterr().out


def test_aot_16x8_with_gptq_weights(model_file, tmp_path, capsys):
    """--activations int16 --weight-rounding gptq: every op on a 16x8 kernel, bundled outputs
    verified by the runtime."""
    out = tmp_path / "small16.cmpte"
    assert aot("--model", f"{model_file}:factory16", "--quantize", "--activations", "int16",
               "--weight-rounding", "gptq", "--calibration-samples", 16, "--bundleio", "--output", out) == 0
    text = capsys.readouterr().out
    assert "activation_dtype='int16'" in text and "weight_rounding='gptq'" in text
    assert "cortex_m.quantized_conv2d_s16.default" in text and "cortex_m.quantized_linear_s16.default" in text
    assert "ops left float (0)" in text
    from cortexm import run as run_module

    assert run_module.main([str(out)]) == 0
    assert "bit-exact" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        aot("--model", f"{model_file}:factory16", "--activations", "int16", "--output", out)
    assert "--activations, --fuse-magnitude and --weight-rounding need --quantize" in capsys.readouterr().err


def test_run_cli_in_a_subprocess(model_file, tmp_path):
    out = tmp_path / "small.cmpte"
    assert aot("--model", f"{model_file}:factory", "--quantize", "--calibration-samples", 2, "--bundleio",
               "--output", out) == 0
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-m", "cortexm.run", str(out)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "verify: 1 bundled case(s)" in done.stdout


def test_without_quantize_warns_and_refuses_what_cannot_run(model_file, tmp_path, capsys):
    """Unquantized, every op runs as float fallback (conv, relu, linear, softmax) but a transposed
    convolution, which has no portable kernel."""
    out = tmp_path / "float.cmpte"
    with pytest.warns(UserWarning, match="Cortex-M needs quantization"):
        assert aot("--model", f"{model_file}:float_transposed", "--output", out) == 1
    assert "cannot write a program" in capsys.readouterr().err
    assert not out.exists()
    for factory in ("float_only", "factory"):
        with pytest.warns(UserWarning, match="Cortex-M needs quantization"):
            assert aot("--model", f"{model_file}:{factory}", "--bundleio", "--output", out) == 0
        program = cortexm.load_program(out)
        # every op float but factory's flatten, a view
        assert program.verify() == 1 and program.float_ops == program.num_ops - (factory == "factory")


def test_output_is_never_half_written(model_file, tmp_path, capsys):
    out = tmp_path / "small.cmpte"
    out.write_bytes(b"previous program")
    with file_size_limit(1000):
        assert aot("--model", f"{model_file}:factory", "--quantize", "--calibration-samples", 2, "--output", out) == 1
    assert "write failed: File too large" in capsys.readouterr().err
    assert out.read_bytes() == b"previous program"
    assert sorted(os.listdir(tmp_path)) == ["small.cmpte", "small_model.py"]


def test_bad_model_spec(tmp_path, capsys):
    assert aot("--model", "no_such_model", "--output", tmp_path / "x.cmpte") == 2
    assert "neither a zoo model" in capsys.readouterr().err


def test_export_c_writes_the_program_as_c(model_file, tmp_path, capsys):
    out = tmp_path / "small-net.cmpte"
    assert aot("--model", f"{model_file}:factory", "--quantize", "--calibration-samples", 2, "--bundleio",
               "--output", out, "--export-c", tmp_path / "c") == 0
    assert "wrote small_net_program.c, small_net_program.h, small_net_ops.cc, main.cc" in capsys.readouterr().out
    assert sorted(os.listdir(tmp_path / "c")) == ["CMakeLists.txt", "cortexm.cmake", "main.cc", "small_net_ops.cc",
                                                  "small_net_program.c", "small_net_program.h"]
    program = cortexm.load_program(out)
    header = (tmp_path / "c" / "small_net_program.h").read_text()
    assert f"#define SMALL_NET_PROGRAM_SIZE {len(program.data)}u" in header
    assert "#define SMALL_NET_NUM_BUNDLED_CASES 1" in header
    assert aot("--model", f"{model_file}:factory", "--quantize", "--calibration-samples", 2, "--output", out,
               "--export-c", tmp_path / "c2", "--export-c-name", "kws") == 0
    assert (tmp_path / "c2" / "kws_program.c").is_file()


@pytest.mark.parametrize("args,message", [
    (["--export-c-name", "kws"], "--export-c-name needs --export-c"),
    (["--export-c", "DIR", "--export-c-name", "9kws"], "must be a C identifier"),
    (["--export-c", "FILE"], "is not a directory"),
    (["--export-c", "."], "is or holds the current directory"),
])
def test_export_c_arguments_are_checked_first(tmp_path, capsys, args, message):
    (tmp_path / "FILE").write_text("x")
    args = [str(tmp_path / a) if a in ("DIR", "FILE") else a for a in args]
    with pytest.raises(SystemExit):
        aot("--model", "ds_cnn", "--output", tmp_path / "x.cmpte", *args)
    assert message in capsys.readouterr().err
    assert not (tmp_path / "DIR").exists()


# --- calibration data from files, one-line errors ---------------------------------------------------

def calibration_arrays(n, seed=3):
    return np.random.default_rng(seed).standard_normal((n, 1, 3, 6, 6)).astype(np.float32)


@pytest.mark.parametrize("form", ["npz", "npy", "dir"])
def test_calibration_data_from_files(model_file, tmp_path, capsys, form):
    data = calibration_arrays(5)
    if form == "npz":
        source = tmp_path / "calib.npz"
        np.savez(source, data)
    elif form == "npy":
        source = tmp_path / "calib.npy"
        np.save(source, data)
    else:
        source = tmp_path / "calib"
        source.mkdir()
        for i, sample in enumerate(data):
            np.save(source / f"s{i:02d}.npy", sample)
    out = tmp_path / "small.cmpte"
    assert aot("--model", f"{model_file}:factory", "--quantize", "--calibration-data", source, "--output", out) == 0
    # The same samples given through the Python API give the same program.
    import torch
    import importlib.util
    spec = importlib.util.spec_from_file_location("small_model_ref", model_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model, example, _ = module.factory()
    qgraph = cortexm.quantize(cortexm.export(model, example), [(torch.from_numpy(x),) for x in data],
                              progress=False)
    expected = cortexm.to_program(cortexm.lower(qgraph))
    assert cortexm.load_program(out).data == expected.data


def test_no_calibration_warns_and_uses_the_example_once(model_file, tmp_path, capsys):
    (tmp_path / "two.py").write_text(MODEL + "\n\ndef two():\n    m, x, _ = factory()\n    return m, x\n")
    with pytest.warns(UserWarning, match="gives no calibration data"):
        assert aot("--model", f"{tmp_path / 'two.py'}:two", "--quantize", "--output", tmp_path / "t.cmpte") == 0
    assert "warning: --model" in capsys.readouterr().err


@pytest.mark.parametrize("setup,message", [
    (lambda d: np.save(d / "c.npy", np.zeros((4, 1, 3, 5, 6), np.float32)),
     r"array 0 is \[4, 1, 3, 5, 6\], expected \[samples, 1, 3, 6, 6\]"),
    (lambda d: np.savez(d / "c.npz", np.zeros((4, 1, 3, 6, 6), np.float32), np.zeros((4, 2), np.float32)),
     r"holds 2 array\(s\), the model takes 1 input\(s\)"),
    (lambda d: (d / "c.npy").write_bytes(b"not numpy"), "cannot be read as .npy / .npz"),
    (lambda d: None, "does not exist"),
])
def test_bad_calibration_data_is_one_error_line(model_file, tmp_path, capsys, setup, message):
    setup(tmp_path)
    name = "c.npz" if "2 array" in message else "c.npy"
    code = aot("--model", f"{model_file}:factory", "--quantize", "--calibration-data", tmp_path / name,
               "--output", tmp_path / "x.cmpte")
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: --calibration-data"), err
    import re
    assert re.search(message, err), err
    assert not (tmp_path / "x.cmpte").exists()


def test_debug_shows_the_traceback(model_file, tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        aot("--model", f"{model_file}:factory", "--quantize", "--calibration-data", tmp_path / "none.npz",
            "--output", tmp_path / "x.cmpte", "--debug")


def test_a_target_without_int8_names_the_one_meant(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        aot("--model", "ds_cnn", "-t", "m55", "--output", tmp_path / "x.cmpte")
    assert e.value.code == 2
    assert "did you mean 'cortex-m55+int8'?" in capsys.readouterr().err


def test_export_failure_is_one_line(tmp_path, capsys):
    (tmp_path / "bad.py").write_text(
        "import torch\n\nclass Bad(torch.nn.Module):\n    def forward(self, x):\n"
        "        return torch.cumsum(x, dim=-1)\n\ndef bad():\n    return Bad().eval(), (torch.randn(2, 5),)\n")
    code = aot("--model", f"{tmp_path / 'bad.py'}:bad", "--quantize", "--output", tmp_path / "x.cmpte")
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1, err


def test_io_int8_writes_a_program_of_int8_inputs_and_outputs(model_file, tmp_path, capsys):
    out = tmp_path / "small8.cmpte"
    assert aot("--model", f"{model_file}:factory16", "--quantize", "--calibration-samples", 2, "--bundleio",
               "--io", "int8", "--output", out) == 0
    printed = capsys.readouterr().out
    program = cortexm.load_program(out)
    assert [s["dtype"] for s in program.inputs + program.outputs] == ["int8", "int8"]
    for kind, spec in [("input", program.inputs[0]), ("output", program.outputs[0])]:
        assert isinstance(spec["scale"], float) and isinstance(spec["zero_point"], int)
        assert f"{kind} {spec['name']!r}: int8, scale {spec['scale']!r}, zero point {spec['zero_point']}" in printed
    assert program.verify() == 1
    kernels = {op["kernel"] for op in program.ops()}
    assert not kernels & {"QuantizePerTensor", "DequantizePerTensor"}


@pytest.mark.parametrize("args,message", [
    (["--quantize", "--io", "int4"], "argument --io: invalid choice: 'int4'"),
    (["--io", "int8"], "--io int8 needs --quantize"),
])
def test_io_values_are_checked(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as e:
        aot("--model", "ds_cnn", "--output", tmp_path / "x.cmpte", *args)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_arena_limit_runs_the_stem_in_patches_or_names_the_best_arena(model_file, tmp_path, capsys):
    common = ["--model", f"{model_file}:stem", "--quantize", "--calibration-samples", 2, "--io", "int8"]
    out = tmp_path / "stem.cmpte"
    assert aot(*common, "--output", out) == 0
    whole = cortexm.load_program(out).arena_size
    capsys.readouterr()
    assert aot(*common, "--bundleio", "--arena-limit", whole - 16, "--output", out) == 0
    printed = capsys.readouterr().out
    program = cortexm.load_program(out)
    assert program.arena_size <= whole - 16 and program.verify() == 1
    # (The 3x3 convs run in place over their inputs, so the cheapest split is after the third.)
    assert "patch plan: the 3 ops from 'quantized_conv2d' to the split tensor 'quantized_conv2d_2' [1, 4, 5, 5] " \
           "run as 1x2 patches" in printed
    assert f"arena {program.arena_size} B (whole-tensor plan {whole} B), MACs" in printed
    assert aot(*common, "--arena-limit", 1500, "--output", tmp_path / "none.cmpte") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: arena_limit = 1500 B: no plan fits; the smallest arena found is ")
    assert not (tmp_path / "none.cmpte").exists()
    with pytest.raises(SystemExit):
        aot(*common, "--arena-limit", 0, "--output", out)
    assert "--arena-limit 0 must be >= 1" in capsys.readouterr().err


def test_preserve_inputs_keeps_the_float_input_through_the_run(model_file, tmp_path, capsys):
    """By default the quantize of the float input writes its int8 copy over it (a run consumes its
    inputs); --preserve-inputs keeps the input, at a larger arena; both run the bundled case bit-exact."""
    common = ["--model", f"{model_file}:stem", "--quantize", "--calibration-samples", 2, "--bundleio"]
    consumed, kept = tmp_path / "consumed.cmpte", tmp_path / "kept.cmpte"
    assert aot(*common, "--output", consumed) == 0
    assert aot(*common, "--preserve-inputs", "--output", kept) == 0
    a, b = cortexm.load_program(consumed), cortexm.load_program(kept)
    assert a.verify() == b.verify() == 1
    assert a.arena_size < b.arena_size
    assert "(over a graph input: set inputs before every run)" in a.memory_plan().table()
    assert "over a graph input" not in b.memory_plan().table()
    with pytest.raises(SystemExit):
        aot("--model", f"{model_file}:stem", "--check", "--preserve-inputs")
    assert "--check writes nothing: drop --preserve-inputs" in capsys.readouterr().err


def relu_program(shape=(2, 3), inputs=1, bundled=True):
    g = cortexm.Graph()
    xs = [g.add_input(f"x{i}", list(shape)) for i in range(inputs)]
    g.outputs = [g.call("aten.relu.default", [x], {}) for x in xs]
    cases = tuple(np.arange(-3, 3, dtype=np.float32).reshape(shape) for _ in xs)
    return cortexm.to_program(g, bundle_inputs=cases if bundled else None)


def run_cli(*args):
    from cortexm import run as run_module

    return run_module.main([str(a) for a in args])


def one_error_line(capsys, *parts) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    for part in parts:
        assert part in err, err
    return err


def test_run_cli_bad_programs_inputs_and_cpus_are_one_error_line(tmp_path, capsys):
    """Exit status 2 and one 'error:' line, never a traceback."""
    path, two = tmp_path / "relu.cmpte", tmp_path / "two.cmpte"
    relu_program().save(path)
    relu_program(inputs=2).save(two)
    (tmp_path / "notes.txt").write_text("not a program")
    np.save(tmp_path / "x.npy", np.ones((2, 3), np.float32))
    np.save(tmp_path / "wrong.npy", np.ones((3, 2), np.float32))
    (tmp_path / "junk.npz").write_bytes(b"junk")

    assert run_cli(tmp_path / "missing.cmpte") == 2
    one_error_line(capsys, "cannot read program", "missing.cmpte", "No such file or directory")
    assert run_cli(tmp_path / "notes.txt") == 2
    one_error_line(capsys, "notes.txt")
    assert run_cli(two, "--inputs", tmp_path / "x.npy") == 2
    one_error_line(capsys, "x.npy' holds one array (.npy), the program takes 2 inputs (x0, x1)")
    assert run_cli(path, "--inputs", tmp_path / "wrong.npy") == 2
    one_error_line(capsys, "[3, 2]")
    assert run_cli(path, "--inputs", tmp_path / "junk.npz") == 2
    one_error_line(capsys, "junk.npz': cannot be read as .npz / .npy")
    assert run_cli(path, "--inputs", tmp_path / "none.npz") == 2
    one_error_line(capsys, "none.npz")
    assert run_cli(path, "--qemu", "cortex-m99") == 2
    one_error_line(capsys, "--qemu 'cortex-m99' has no QEMU machine: choose one of cortex-m3")
    assert run_cli(path, "--isa", "dsp") == 2
    one_error_line(capsys, "--isa dsp needs --qemu CPU")

    assert run_cli(path, "--inputs", tmp_path / "x.npy") == 0  # a .npy for a one-input program
    assert "output 0: float32[2, 3] min 1 max 1" in capsys.readouterr().out


def test_run_cli_escapes_the_program_s_strings(tmp_path, capsys, monkeypatch):
    path = tmp_path / "relu.cmpte"
    relu_program().save(path)
    monkeypatch.setattr(cortexm.Program, "target", property(lambda self: "m55\x1b[2J\nverify: 1 bundled case(s)"))
    monkeypatch.setattr(cortexm.Program, "profile", lambda self, *inputs: [("op\x1b]0;pwned\x07", "Relu", 1e-6)])
    assert run_cli(path, "--profile") == 0
    out = capsys.readouterr().out
    assert "program for m55\\x1b[2J\\nverify: 1 bundled case(s): 1 ops" in out
    assert "op\\x1b]0;pwned\\x07" in out and "\x1b" not in out and "\x07" not in out
