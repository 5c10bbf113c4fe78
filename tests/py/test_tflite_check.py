"""cortexm.check on a .tflite (path or bytes): import, lower and plan, every import problem listed
with its operator."""

from __future__ import annotations

import numpy as np
import pytest

import cortexm
from cortexm.tflite import schema as S
from test_tflite_import import mlperf_like_model
from tflite_writer import ModelBuilder


def unsupported_model() -> bytes:
    m = ModelBuilder()
    x = m.tensor((1, 4), "INT8", 0.1, 0)
    y = m.tensor((1, 4), "INT8", 0.1, 0)
    z = m.tensor((1, 4), "INT8", 1 / 256, -128)
    m.operator("EXP", [x], [y])
    m.operator("SOFTMAX", [x], [z], S.OPTIONS_SOFTMAX, {S.SOFTMAX_BETA: ("f", 2.0)})
    return m.build([x], [y, z])


def test_check_accepts_tflite_bytes_and_paths(tmp_path):
    model = mlperf_like_model(np.random.default_rng(7))
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    for source in (model, str(path), path):
        report = cortexm.check(source)
        assert report.ok, str(report)
        assert report.stages == ["import", "lower", "program"]
        assert report.float_fallback == []
        assert report.program.inputs[0]["dtype"] == "int8"  # the file's own input type
        assert list(report.program.inputs[0]["shape"]) == [1, 10, 8, 3]  # NHWC, as the file has it
        assert "deploys" in str(report) and "float fallback: none" in str(report)


def test_check_lists_every_tflite_import_problem_with_its_operator():
    report = cortexm.check(unsupported_model())
    assert not report.ok and report.stages == ["import"]
    assert [(p.stage, p.module, p.op) for p in report.problems] == [
        ("import", "tflite operator 0", "EXP"), ("import", "tflite operator 1", "SOFTMAX")]
    assert "beta = 2.0" in report.problems[1].message
    assert "2 problems prevent deployment" in str(report)


def test_check_reports_a_malformed_tflite_as_an_import_problem():
    report = cortexm.check(b"\0\0\0\0TFL3" + b"\0" * 8)
    assert not report.ok and report.problems[0].stage == "import"
    assert report.problems[0].message.startswith("import failed: ValueError")


def test_check_tflite_refuses_example_inputs_and_torch_models_need_them():
    with pytest.raises(ValueError, match="a .tflite carries its own quantization"):
        cortexm.check(mlperf_like_model(np.random.default_rng(7)), (np.zeros((1, 10, 8, 3), np.float32),))
    with pytest.raises(ValueError, match="example_inputs: required for a torch model"):
        cortexm.check(object())
