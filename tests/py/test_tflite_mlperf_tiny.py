"""The MLPerf Tiny reference models (github mlcommons/tiny, benchmark/training/*/trained_models/)
through cortexm.from_tflite: each imports, lowers with no float op left and gives TFLite Micro's
interpreter's bytes on 16 random inputs, on the host and on QEMU's Cortex-M55 and M4. The files are
not in the repository: set MLPERF_TINY_DIR to a directory holding them (skipped when unset; a model
missing there is skipped by name).

    MLPERF_TINY_DIR=/path/to/models pytest -q tests/py/test_tflite_mlperf_tiny.py
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import cortexm
from tflite_compare import assert_qemu_matches_tflm, compare, float_ops, needs_tflm

MODELS = ["kws_ref_model.tflite", "vww_96_int8.tflite", "pretrainedResnet_quant.tflite", "ad01_int8.tflite",
          "str_ww_ref_model.tflite"]
DIR = os.environ.get("MLPERF_TINY_DIR")
needs_dir = pytest.mark.skipif(not DIR, reason="MLPERF_TINY_DIR is not set (a directory with the MLPerf Tiny .tflite files)")
needs_qemu = pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                                reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")


def read_model(name: str) -> bytes:
    path = os.path.join(DIR, name)
    if not os.path.exists(path):
        pytest.skip(f"{path} does not exist")
    with open(path, "rb") as f:
        return f.read()


@needs_tflm
@needs_dir
@pytest.mark.parametrize("name", MODELS)
def test_mlperf_tiny_model_matches_tflm(name):
    n, lowered = compare(read_model(name), 16, seed=0)
    assert n == 16
    assert float_ops(lowered) == []


@needs_tflm
@needs_dir
@needs_qemu
@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4"])
@pytest.mark.parametrize("name", MODELS)
def test_mlperf_tiny_model_matches_tflm_on_qemu(name, cpu):
    assert_qemu_matches_tflm(read_model(name), cpu, runs=16)
