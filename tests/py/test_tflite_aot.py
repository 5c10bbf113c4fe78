"""python -m cortexm.aot --tflite FILE: the imported model's program, with the file's own input and
output dtypes, giving TFLite Micro's bytes; flags that only make sense for a torch model are refused."""

from __future__ import annotations

import numpy as np
import pytest

import cortexm
from cortexm import aot
from test_tflite_import import mlperf_like_model
from tflite_compare import needs_tflm, tflm_runner
from tflite_writer import ModelBuilder


def run(*args) -> int:
    return aot.main([str(a) for a in args])


@needs_tflm
def test_aot_tflite_writes_a_program_with_the_files_int8_io(tmp_path, capsys):
    model = mlperf_like_model(np.random.default_rng(7))
    path, out = tmp_path / "m.tflite", tmp_path / "m.cmpte"
    path.write_bytes(model)
    assert run("--tflite", path, "--target", "cortex-m55+int8", "--output", out) == 0
    text = capsys.readouterr().out
    assert "ops left float (0)" in text and "input 'input0_t0': int8, scale" in text
    program = cortexm.load_program(out)
    x = np.random.default_rng(0).integers(-128, 128, (1, 10, 8, 3)).astype(np.int8)
    np.testing.assert_array_equal(np.asarray(program.run(x)).reshape(1, 5), tflm_runner(model)([x])[0])


@pytest.mark.parametrize("flags, message", [
    (["--quantize"], "--tflite takes the file's own quantization: drop --quantize"),
    (["--bundleio", "--calibration-samples", "2"], "drop --calibration-samples, --bundleio"),
    (["--model", "ds_cnn"], "give one of --model and --tflite"),
])
def test_aot_tflite_refuses_torch_only_flags(tmp_path, capsys, flags, message):
    with pytest.raises(SystemExit):
        run("--tflite", tmp_path / "m.tflite", "--output", tmp_path / "m.cmpte", *flags)
    assert message in capsys.readouterr().err


def test_aot_tflite_bad_file_is_one_error_line(tmp_path, capsys):
    path = tmp_path / "bad.tflite"
    path.write_bytes(b"\x10\x00\x00\x00TFL3" + b"\x00" * 4)
    assert run("--tflite", path, "--output", tmp_path / "m.cmpte") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: bad.tflite: ") and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m.cmpte").exists()


def test_aot_tflite_lists_every_unsupported_operator(tmp_path, capsys):
    m = ModelBuilder()
    x = m.tensor((1, 4), "INT8", 0.1, 0)
    y = m.tensor((1, 4), "INT8", 0.1, 0)
    z = m.tensor((1, 4), "INT8", 0.1, 0)
    m.operator("EXP", [x], [y])
    m.operator("SQRT", [x], [z])
    path = tmp_path / "m.tflite"
    path.write_bytes(m.build([x], [y, z]))
    assert run("--tflite", path, "--output", tmp_path / "m.cmpte") == 2
    err = capsys.readouterr().err
    assert "operator 0 EXP" in err and "operator 1 SQRT" in err
