"""An imported NHWC model takes and gives the file's NHWC bytes with no layout copy: the NHWC
input is viewed as channels-last NCHW by a permute the planner aliases (no clone, no copy), and the
channels-last result goes back to NHWC before a RESHAPE the same way. Outputs stay TFLite Micro's."""

from __future__ import annotations

import numpy as np

import cortexm
from cortexm.tflite import program_io
from test_tflite_import import mlperf_like_model
from tflite_compare import compare, needs_tflm

CLONE = "dim_order_ops._clone_dim_order.default"
PERMUTE = "aten.permute_copy.default"


def test_nhwc_boundary_has_no_layout_copy():
    model = mlperf_like_model(np.random.default_rng(7))
    lowered = cortexm.lower(cortexm.from_tflite(model), "cortex-m55+int8")
    assert CLONE not in lowered.op_counts()
    program = cortexm.to_program(lowered, io=program_io(model))
    assert list(program.inputs[0]["shape"]) == [1, 10, 8, 3] and program.inputs[0]["dim_order"] in ([], [0, 1, 2, 3])
    tensors = program.tensors()
    permutes = [op for op in program.ops() if op["name"].startswith("permute_copy")]
    assert len(permutes) == 2
    for op in permutes:  # each permute's output lies on its input's bytes: the planner aliased it
        src, dst = tensors[op["inputs"][0]], tensors[op["outputs"][0]]
        assert src["location"] == dst["location"] == "arena"
        assert src["offset"] == dst["offset"], (src, dst)
    first = tensors[permutes[0]["outputs"][0]]
    assert list(first["shape"]) == [1, 3, 10, 8] and list(first["dim_order"]) == [0, 2, 3, 1]


@needs_tflm
def test_aliased_permutes_keep_tflms_outputs():
    n, _ = compare(mlperf_like_model(np.random.default_rng(7)), 16, seed=5)
    assert n == 16
