"""Layout changes in the lowered zoo models: SinkDimOrderClones and FoldInverseDimOrderClone (with
size-1 views kept in place) give the same int8 outputs with fewer _clone_dim_order nodes.

Each model is lowered twice from the session's quantized graph: by default, and without
SinkDimOrderClones. Both run in the interpreter on the model's example input; the outputs (the
dequantized int8 results) must be bit-identical."""

import numpy as np
import pytest

import cortexm
import zoo

torch = pytest.importorskip("torch")

CLONE = "dim_order_ops._clone_dim_order.default"

# Clones left by the default lowering (cortex-m55), per model: the layout changes that remain.
# wav2letter: into channels-last at the input and back to contiguous after log_softmax. The
# mobilenets and resnet8: into channels-last at the input only (adds, squeeze-and-excite muls,
# hardswish tables and pads run channels-last). silero_vad: around its rank-3 STFT slices and the
# decoder's 1x1 conv.
EXPECTED_CLONES = {"wav2letter": 2, "mobilenet_v2_96": 1, "resnet8": 1, "silero_vad": 4,
                   "mobilenet_v3_small_96": 1}


@pytest.mark.parametrize("name", sorted(EXPECTED_CLONES))
def test_sinking_clones_keeps_outputs_and_removes_nodes(name):
    _, example, _, _ = zoo.exported(name)
    qgraph = zoo.quantized(name)
    low = zoo.lowered(name)
    without = cortexm.lower(qgraph, "cortex-m55+int8", skip_passes=("SinkDimOrderClones",))
    inputs = [x.numpy() for x in example]
    got, want = low.run(*inputs), without.run(*inputs)
    got = got if isinstance(got, (list, tuple)) else [got]
    want = want if isinstance(want, (list, tuple)) else [want]
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    clones, clones_without = low.op_counts().get(CLONE, 0), without.op_counts().get(CLONE, 0)
    print(f"\n{name}: {clones_without} -> {clones} clones, {len(without.nodes)} -> {len(low.nodes)} nodes")
    assert clones == EXPECTED_CLONES[name]
    assert len(low.nodes) <= len(without.nodes) and clones <= clones_without
    if name != "wav2letter":  # wav2letter's clones fold across its views without sinking
        assert clones < clones_without and len(low.nodes) < len(without.nodes)
