"""Convs with a window (3x3, padded, strided; one group) written over their dying input from
quantized_conv2d_in_place_lag below it: every variant gathers a block's windows into scratch before
its first store, so a store may land on input no later pixel reads. The planner takes them where
the arena shrinks, and programs stay bit-exact with the whole-tensor plan (host, QEMU M55 / M4).
ResNet8 (MLPerf Tiny's pretrainedResnet_quant, MLPERF_TINY_DIR) then plans in 33,872 B instead of
49,728 B (TFLite Micro: 55,028 B)."""

import os
import shutil

import numpy as np
import pytest

import cortexm
from cortexm import qemu
from test_patches import CL, add, conv

needs_qemu = pytest.mark.skipif(
    not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")


def residual_graph():
    """x [1, 8, 12, 10] -> channels-last -> 3x3 8->8 (a) -> 3x3 (b) -> 3x3 (c) -> a + c -> 3x3
    stride 2 to 16 -> 3x3 -> contiguous: ResNet8's first stages in small. The peak is at c, a
    living on for the add. Returns the graph and the convs' outputs."""
    rng = np.random.default_rng(21)
    g = cortexm.Graph()
    x = g.add_input("x", [1, 8, 12, 10], "int8")
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": CL})
    a = conv(g, rng, cl, 8, 3, (1, 1), (1, 1))
    b = conv(g, rng, a, 8, 3, (1, 1), (1, 1))
    c = conv(g, rng, b, 8, 3, (1, 1), (1, 1))
    s = add(g, a, c)
    d = conv(g, rng, s, 16, 3, (2, 2), (1, 1))
    e = conv(g, rng, d, 16, 3, (1, 1), (1, 1))
    g.outputs = [g.call("dim_order_ops._clone_dim_order.default", [e], {"dim_order": [0, 1, 2, 3]})]
    return g, [a, b, c, d, e]


def test_windows_run_in_place_from_their_lag_bit_exact_with_the_whole_tensor_plan():
    g, convs = residual_graph()
    plan = cortexm.plan_memory(g)
    plan.verify()
    rows = {r.name: r for r in plan.buffers}
    c = convs[2]
    # c over b: 3x3 padding 1 on 12x10x8 trails its input by a row and a pixel, (10 + 1) * 8 bytes,
    # rounded up to the alignment.
    assert rows[c.name].in_place
    assert rows[convs[1].name].offset - rows[c.name].offset >= 96
    assert plan.arena_size < cortexm.plan_memory(g, in_place=False).arena_size
    program = cortexm.to_program(g)
    whole = cortexm.to_program(g, layout="sequential")
    rng = np.random.default_rng(22)
    for _ in range(4):
        x = rng.integers(-128, 128, (1, 8, 12, 10), dtype=np.int8)
        assert program.run(x).tobytes() == whole.run(x).tobytes() == g.run(x).tobytes()


def test_the_loader_checks_a_windows_lag():
    """A 3x3 conv's output exactly its lag (88 B) below its input loads and runs bit-exact; a byte
    less is refused."""
    rng = np.random.default_rng(23)
    g = cortexm.Graph()
    x = g.add_input("x", [1, 8, 12, 10], "int8")
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": CL})
    a = conv(g, rng, cl, 8, 3, (1, 1), (1, 1))
    b = conv(g, rng, a, 8, 3, (1, 1), (1, 1))
    g.outputs = [g.call("dim_order_ops._clone_dim_order.default", [b], {"dim_order": [0, 1, 2, 3]})]
    whole = cortexm.to_program(g, layout="sequential")

    def layout(b_offset):
        return {"values": {x.id: 0, cl.id: 1024, a.id: 2048, b.id: b_offset, g.outputs[0].id: 4096},
                "scratch": {1: (6144, 4 * 9 * 8 * 2), 2: (6144, 4 * 9 * 8 * 2)},
                "arena_size": 8192}
    x_value = rng.integers(-128, 128, (1, 8, 12, 10), dtype=np.int8)
    for ok in (2048 - 88, 2048 - 96, 2048 - 500):
        assert cortexm.to_program(g, layout=layout(ok)).run(x_value).tobytes() == whole.run(x_value).tobytes()
    with pytest.raises(ValueError, match="in-place lag"):
        cortexm.to_program(g, layout=layout(2048 - 87))


@needs_qemu
@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4"])
def test_windows_in_place_on_qemu_are_bit_identical_with_the_whole_tensor_plan(cpu):
    """The MVE's blocks of 4 and the DSP's of 2, gathered into scratch before their stores."""
    g, convs = residual_graph()
    program = cortexm.to_program(g, target=f"{cpu}+int8")
    rows = {r.name: r for r in program.memory_plan().buffers}
    assert any(rows[c.name].in_place_over for c in convs)
    whole = cortexm.to_program(g, target=f"{cpu}+int8", layout="sequential")
    x = np.random.default_rng(24).integers(-128, 128, (1, 8, 12, 10), dtype=np.int8)
    assert qemu.run(program, [x], cpu).outputs[0].tobytes() == whole.run(x).tobytes()


RESNET = os.path.join(os.environ.get("MLPERF_TINY_DIR", ""), "pretrainedResnet_quant.tflite")
needs_resnet = pytest.mark.skipif(not (os.environ.get("MLPERF_TINY_DIR") and os.path.exists(RESNET)),
                                  reason="MLPERF_TINY_DIR with pretrainedResnet_quant.tflite is not set")


def resnet_programs(cpu="cortex-m55"):
    lowered = cortexm.lower(cortexm.from_tflite(RESNET), target=f"{cpu}+int8")
    io = cortexm.tflite.program_io(RESNET)
    return (cortexm.to_program(lowered, io=io),
            cortexm.to_program(lowered, io=io, layout="sequential"))


@needs_resnet
def test_resnet8_arena_is_below_0_8x_tflms_and_bit_exact_with_the_whole_tensor_plan():
    program, whole = resnet_programs()
    plan = program.memory_plan()
    # Its 3x3 convs over their dying inputs, the adds over theirs: 49,728 B before (TFLM: 55,028).
    assert plan.arena_size == plan.lower_bound == 33872
    assert plan.arena_size <= 0.8 * 55028
    rng = np.random.default_rng(0)
    for _ in range(16):
        x = rng.integers(-128, 128, (1, 32, 32, 3), dtype=np.int8)
        assert program.run(x).tobytes() == whole.run(x).tobytes()


@needs_resnet
@needs_qemu
def test_resnet8_in_place_on_the_m55_is_bit_identical_with_the_whole_tensor_plan():
    program, whole = resnet_programs()
    x = np.random.default_rng(1).integers(-128, 128, (1, 32, 32, 3), dtype=np.int8)
    assert qemu.run(program, [x], "cortex-m55").outputs[0].tobytes() == whole.run(x).tobytes()
