"""FoldInputOffsetIntoBias: the lowered zoo programs take the folded bias (input_offset * the sums of
the weight rows computed at lowering) in every int8 conv2d and linear, and give bit for bit what the
unfolded lowering gives, in the interpreter and the runtime."""

import numpy as np
import pytest

import cortexm
import zoo

torch = pytest.importorskip("torch")

QCONV = "cortex_m.quantized_conv2d.default"
QLINEAR = "cortex_m.quantized_linear.default"
FLAG = "bias_includes_input_offset"


def folded_ops(graph):
    return [n for n in graph.nodes if n.op in (QCONV, QLINEAR)]


def expected_folded_bias(node, bias):
    """bias + input_offset * sum w (+ K * input_offset * filter_offset for linear), mod 2^32."""
    weights = node.inputs[1].data.astype(np.int64)
    rows = weights.reshape(weights.shape[0], -1)
    offset = node.attrs["input_offset"]
    folded = bias.astype(np.int64) + offset * rows.sum(axis=1)
    if node.op == QLINEAR:
        folded += rows.shape[1] * offset * node.attrs["filter_offset"]
    return ((folded + 2**31) % 2**32 - 2**31).astype(np.int32)


@pytest.mark.parametrize("name,target", [("ds_cnn", "cortex-m55+int8"), ("ds_cnn", "cortex-m4+int8"),
                                         ("mobilenet_v2_96", "cortex-m55+int8")])
def test_zoo_program_uses_folded_bias_and_matches_unfolded(name, target):
    folded = zoo.lowered(name, target)
    unfolded = cortexm.lower(zoo.quantized(name), target, skip_passes=["FoldInputOffsetIntoBias"])
    ops, plain = folded_ops(folded), folded_ops(unfolded)
    assert len(ops) == len(plain) > 0
    assert all(n.attrs[FLAG] for n in ops)
    assert not any(n.attrs[FLAG] for n in plain)
    changed = 0
    for node, old in zip(ops, plain):
        assert node.name == old.name
        bias = old.inputs[2].data
        np.testing.assert_array_equal(node.inputs[2].data, expected_folded_bias(old, bias))
        changed += int(node.attrs["input_offset"] != 0)
    assert changed > 0  # the models have nonzero input offsets: the fold did something

    _, example, _, _ = zoo.exported(name)
    inputs = [x.numpy() for x in example]
    reference = unfolded.run(*inputs)
    np.testing.assert_array_equal(folded.run(*inputs), reference)
    program = cortexm.to_program(folded, target=target)
    np.testing.assert_array_equal(program.run(*inputs), reference)
    # The replaced biases are gone (DeadCodeElimination): no constant bytes are added.
    assert folded.constant_bytes == unfolded.constant_bytes


def test_fold_runs_once():
    folded = zoo.lowered("ds_cnn")
    again = folded.copy()
    cortexm.passes.CortexMPassManager(again, "cortex-m55+int8", passes=["FoldInputOffsetIntoBias"]).run()
    for a, b in zip(folded_ops(folded), folded_ops(again)):
        np.testing.assert_array_equal(a.inputs[2].data, b.inputs[2].data)
