"""In-place pointwise convs (1x1, stride 1, unpadded, one group): the planner writes the output
from quantized_conv2d_in_place_lag below its dying input, the loader checks the lag, programs stay
bit-exact with the whole-tensor plan (host here, QEMU M55 / M4 below), and ds_cnn plans below its
tensor-level bound (docs/memory_planning.md)."""

import shutil

import numpy as np
import pytest

import cortexm
import zoo
from cortexm import qemu
from test_patches import CL, conv

CONV = "cortex_m.quantized_conv2d.default"


def lag(c_in, c_out, pixels):
    """quantized_conv2d_in_place_lag for one image: the DSP's blocks of 2 pixels with its widened
    columns (4 * c_in + 3 bytes) after them, or the blocks of 4 of scalar and MVE, whichever is
    larger."""
    def blocks(size, room):
        return max(min(first + size, pixels) * c_out - first * c_in + room for first in range(0, pixels, size))
    return max(blocks(2, 4 * c_in + 3), blocks(4, 0))


def pointwise_chain():
    """x [1, 4, 6, 7] -> channels-last -> 1x1 4->24 -> 1x1 24->16 -> 1x1 16->16 -> 1x1 stride 2
    to 12 -> 3x3 -> contiguous copy (the peak at the 1x1 convs). Returns the graph, the
    channels-last copy and the conv outputs."""
    rng = np.random.default_rng(11)
    g = cortexm.Graph()
    x = g.add_input("x", [1, 4, 6, 7], "int8")
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": CL})
    wide = conv(g, rng, cl, 24, 1, (1, 1), (0, 0))
    narrow = conv(g, rng, wide, 16, 1, (1, 1), (0, 0))
    same = conv(g, rng, narrow, 16, 1, (1, 1), (0, 0))
    strided = conv(g, rng, same, 12, 1, (2, 2), (0, 0))
    window = conv(g, rng, strided, 12, 3, (1, 1), (1, 1))
    g.outputs = [g.call("dim_order_ops._clone_dim_order.default", [window], {"dim_order": [0, 1, 2, 3]})]
    return g, cl, [wide, narrow, same, strided, window]


def test_pointwise_runs_in_place_from_its_lag_and_the_loader_checks_the_lag(tmp_path):
    g, cl, (wide, narrow, same, strided, window) = pointwise_chain()
    plan = cortexm.plan_memory(g)
    plan.verify()
    rows = {r.name: r for r in plan.buffers}
    inputs = {wide.name: cl, narrow.name: wide, same.name: narrow, strided.name: same, window.name: strided}
    shapes = {wide.name: (4, 24), narrow.name: (24, 16), same.name: (16, 16)}
    ran = []
    for out, src in inputs.items():
        if not rows[out].in_place or out not in shapes:  # the 3x3 has a lag of its own (test_in_place_windows)
            continue
        ran.append(out)
        c_in, c_out = shapes[out]
        assert rows[src.name].offset - rows[out].offset >= -(-lag(c_in, c_out, 42) // 16) * 16
    assert ran, "no pointwise conv ran in place"
    assert plan.lower_bound <= plan.arena_size < plan.tensor_level_bound
    program = cortexm.to_program(g)
    whole = cortexm.to_program(g, layout="sequential")
    rng = np.random.default_rng(12)
    for _ in range(3):
        x = rng.integers(-128, 128, (1, 4, 6, 7), dtype=np.int8)
        assert program.run(x).tobytes() == whole.run(x).tobytes() == g.run(x).tobytes()
    # A loaded program's plan names each in-place output with its input and distance.
    program.save(tmp_path / "pw.cmpte")
    loaded = cortexm.load_program(tmp_path / "pw.cmpte").memory_plan()
    read_back = {b.name: b for b in loaded.buffers}
    for out in ran:
        src = inputs[out].name
        distance = rows[src].offset - rows[out].offset
        assert read_back[out].in_place_over[:2] == (src, distance)
        assert f"{src} (in place, {distance} B below)" in loaded.table()

    # Explicit layouts: `narrow` at 2048, the next 1x1 conv's output some bytes below it.
    assert lag(16, 16, 42) == 2 * 16 + 4 * 16 + 3  # the DSP's columns after 2 pixels: 99 bytes

    def layout(same_offset, window_offset=3072):
        return {"values": {g.inputs[0].id: 0, cl.id: 256, wide.id: 512, narrow.id: 2048, same.id: same_offset,
                           strided.id: 2816, window.id: window_offset, g.outputs[0].id: 3328},
                "scratch": {len(g.nodes) - 2: (3584, 4 * 9 * 12)},  # the 3x3 conv's: 4 MVE columns
                "arena_size": 4096}
    x = rng.integers(-128, 128, (1, 4, 6, 7), dtype=np.int8)
    for ok in (2048 - 99, 2048 - 112, 2048 - 500, 512):
        assert cortexm.to_program(g, layout=layout(ok)).run(x).tobytes() == whole.run(x).tobytes()
    with pytest.raises(ValueError, match="in-place lag"):
        cortexm.to_program(g, layout=layout(2048 - 98))  # a byte short of the lag
    with pytest.raises(ValueError, match="overlaps an input"):
        cortexm.to_program(g, layout=layout(2048 + 16))  # above its input: never
    # The 3x3 conv (12 channels on 3x4, padding 1) trails its input by a row and a pixel: 60 bytes.
    assert cortexm.to_program(g, layout=layout(2048 - 112, window_offset=2816 - 64)).run(x).tobytes() == \
        whole.run(x).tobytes()
    with pytest.raises(ValueError, match="in-place lag"):
        cortexm.to_program(g, layout=layout(2048 - 112, window_offset=2816 - 48))


def test_strided_pointwise_convs_have_no_lag():
    """Their kernels read input rows in place between stores (a window conv gathers first)."""
    g, _, convs = pointwise_chain()
    plan = cortexm.plan_memory(g)
    rows = {r.name: r for r in plan.buffers}
    assert not rows[convs[3].name].in_place


@pytest.fixture(scope="module")
def zoo_plans():
    pytest.importorskip("torch")
    plans = {}
    for name in ("ds_cnn", "mobilenet_v1_025"):
        for io in ("float", "int8"):
            lowered = zoo.lowered_with_io(name, io)
            plans[name, io] = lowered, cortexm.plan_memory(lowered)
    return plans


def pointwise_in_place(lowered, plan):
    """The 1x1 convs the plan runs in place."""
    rows = {r.name: r for r in plan.buffers}
    return [n.name for n in lowered.nodes if n.op == CONV and tuple(n.inputs[1].shape[1:3]) == (1, 1)
            and rows[n.outputs[0].name].in_place]


@pytest.mark.parametrize("io", ["float", "int8"])
def test_ds_cnn_plans_below_its_tensor_level_bound(zoo_plans, io):
    lowered, plan = zoo_plans["ds_cnn", io]
    assert len(pointwise_in_place(lowered, plan)) == 4  # its four 1x1 convs, 64 -> 64 on 25x5
    assert plan.arena_size < plan.tensor_level_bound == 16000
    assert plan.arena_size == 12672  # 8,000 B + 4 depthwise lags of 768 B + 4 pointwise lags of 400 B


@pytest.mark.parametrize("io", ["float", "int8"])
def test_mobilenet_v1_025_plans_below_its_bound_by_quantizing_over_its_input(zoo_plans, io):
    """Its 13 pointwise convs run in place; its peak was step 0, the float input beside its int8
    copy (138,240 B): the quantize now narrows over the dying float input, so the float io arena is
    the float input alone. With int8 io step 0 is the int8 input and its channels-last copy
    (55,296 B), a reordering no kernel writes in place. preserve_inputs keeps the input to the end."""
    lowered, plan = zoo_plans["mobilenet_v1_025", io]
    assert len(pointwise_in_place(lowered, plan)) == 13
    first = lowered.nodes[0]
    nbytes = [int(np.prod(v.shape)) * np.dtype(v.dtype).itemsize for v in (first.inputs[0], first.outputs[0])]
    assert plan.tensor_level_bound == sum(nbytes) == {"float": 138240, "int8": 55296}[io]
    rows = {r.name: r for r in plan.buffers}
    if io == "float":
        assert first.op == "cortex_m.quantize_per_tensor.default"
        q = rows[first.outputs[0].name]
        assert q.in_place and q.alias_of == first.inputs[0].name and q.offset == rows[q.alias_of].offset
        assert plan.consumed_inputs == [first.inputs[0].name]
        assert "graph inputs written over by the run" in plan.table()
        assert plan.arena_size == plan.lower_bound == nbytes[0] == 110592 < plan.tensor_level_bound
    else:
        assert plan.arena_size == plan.lower_bound == plan.tensor_level_bound
    kept = cortexm.plan_memory(lowered, preserve_inputs=True)
    kept.verify()
    assert not kept.consumed_inputs and kept.arena_size > plan.arena_size
    assert all(r.last == kept.num_steps - 1 for r in kept.buffers if r.kind == "input")


def whole_tensor_outputs(name, inputs, target):
    lowered = zoo.lowered(name, target)
    whole = cortexm.to_program(lowered, target=target, layout="sequential")
    out = whole.run(*inputs)
    return [out] if not isinstance(out, tuple) else list(out)


needs_qemu = pytest.mark.skipif(
    not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")


@needs_qemu
@pytest.mark.parametrize("name", ["ds_cnn", "mobilenet_v1_025"])
def test_in_place_zoo_model_on_the_m55_is_bit_identical_with_the_whole_tensor_plan(name):
    pytest.importorskip("torch")
    _, example, _, _ = zoo.exported(name)
    inputs = [x.numpy() for x in example]
    target = "cortex-m55+int8"
    lowered = zoo.lowered(name, target)
    program = cortexm.to_program(lowered, target=target)
    plan = cortexm.plan_memory(lowered)
    assert pointwise_in_place(lowered, plan)
    assert plan.arena_size < plan.tensor_level_bound  # float io: the quantize narrows over x
    want = whole_tensor_outputs(name, inputs, target)
    host = program.run(*inputs)
    host = [host] if not isinstance(host, tuple) else list(host)
    got = qemu.run(program, inputs, "cortex-m55").outputs
    for a, b, c in zip(host, got, want):
        assert a.tobytes() == b.tobytes() == c.tobytes()


@needs_qemu
@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4"])
def test_in_place_pointwise_chain_on_qemu_is_bit_identical_with_the_whole_tensor_plan(cpu):
    """The MVE and DSP loop orders (the DSP's columns between a block's outputs and its input)."""
    g, *_ = pointwise_chain()
    program = cortexm.to_program(g, target=f"{cpu}+int8")
    whole = cortexm.to_program(g, target=f"{cpu}+int8", layout="sequential")
    x = np.random.default_rng(13).integers(-128, 128, (1, 4, 6, 7), dtype=np.int8)
    assert qemu.run(program, [x], cpu).outputs[0].tobytes() == whole.run(x).tobytes()


ZOO_ROWS = {}


@pytest.mark.parametrize("name", zoo.slow_params("the zoo in-place table: CORTEXM_SLOW=1 runs it (mobilenet_v2 at 224 is slow)"))
def test_zoo_in_place_arena(name):
    """Per zoo model and io: the in-place plan no larger than the tensor-level one, and every
    pointwise conv it runs in place a stride-1 1x1 one."""
    pytest.importorskip("torch")
    row = []
    for io in ("float", "int8"):
        lowered = zoo.lowered_with_io(name, io)
        plan = cortexm.plan_memory(lowered)
        plan.verify()
        whole = cortexm.plan_memory(lowered, in_place=False)
        assert plan.arena_size <= whole.arena_size and plan.tensor_level_bound == whole.lower_bound
        pointwise = pointwise_in_place(lowered, plan)
        for node in lowered.nodes:
            if node.name in pointwise:
                assert tuple(node.inputs[1].shape[1:3]) == (1, 1) and list(node.attrs["stride"]) == [1, 1], node.name
        row.append((plan, len(pointwise)))
    ZOO_ROWS[name] = row


def test_zoo_in_place_table():
    """Prints the table in docs/memory_planning.md (after test_zoo_in_place_arena ran)."""
    if not ZOO_ROWS:
        pytest.skip("no zoo model planned in this run")
    lines = ["| model | tensor-level bound (B) | in-place arena (B) | ops in place (1x1 convs) | "
             "int8 io: tensor-level bound (B) | int8 io: in-place arena (B) |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, ((plan, pw), (plan8, _)) in sorted(ZOO_ROWS.items()):
        lines.append(f"| {name} | {plan.tensor_level_bound} | {plan.arena_size} | "
                     f"{sum(b.in_place for b in plan.tensors)} ({pw}) | {plan8.tensor_level_bound} | {plan8.arena_size} |")
    print("\n" + "\n".join(lines))
