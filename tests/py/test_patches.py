"""Patch-based execution (cortexm.patches): the stage before a split tensor run patch by patch is
bit-exact with the whole-tensor graph and program, on awkward hand-built graphs and on
mobilenet_v2_96."""

import numpy as np
import pytest

import cortexm
import zoo
from cortexm import _core, patches

CL = [0, 2, 3, 1]


def quant(rng, channels):
    return {"input_offset": int(rng.integers(-5, 6)), "output_offset": int(rng.integers(-5, 6)),
            "requantize_multipliers": [int(m) for m in rng.integers(1 << 29, 1 << 31, channels)],
            "requantize_shifts": [int(s) for s in rng.integers(-9, -6, channels)]}


def conv(g, rng, x, cout, k, stride, padding, dilation=(1, 1)):
    cin = x.shape[1]
    w = g.add_constant(f"w{len(g.nodes)}", rng.integers(-127, 128, (cout, k, k, cin)).astype(np.int8))
    b = g.add_constant(f"b{len(g.nodes)}", rng.integers(-2000, 2000, cout).astype(np.int32))
    return g.call("cortex_m.quantized_conv2d.default", [x, w, b],
                  {"stride": list(stride), "padding": list(padding), "dilation": list(dilation), **quant(rng, cout),
                   "activation_min": -100, "activation_max": 120})


def depthwise(g, rng, x, k, stride, padding):
    c = x.shape[1]
    w = g.add_constant(f"w{len(g.nodes)}", rng.integers(-127, 128, (1, k, k, c)).astype(np.int8))
    return g.call("cortex_m.quantized_depthwise_conv2d.default", [x, w, None],
                  {"stride": list(stride), "padding": list(padding), "dilation": [1, 1], "depth_multiplier": 1,
                   **quant(rng, c)})


def add(g, a, b):
    return g.call("cortex_m.quantized_add.default", [a, b],
                  {"self_zero_point": 3, "self_multiplier": 1 << 30, "self_shift": 0, "other_zero_point": -2,
                   "other_multiplier": 1 << 30, "other_shift": -1, "output_zero_point": 1,
                   "output_multiplier": 1 << 30, "output_shift": -19, "activation_min": -128, "activation_max": 127})


def awkward_graph(h=13, w=15, channels=6, project=1):
    """x (odd H, W) -> channels-last -> conv 3x3 stride 2 with asymmetric padding -> depthwise 3x3
    -> 1x1 conv (`project` x `project` same) -> + its block input (a residual: the block input is
    read with and without a halo) -> depthwise 5x5 stride 2 padding 2 -> split; after it a 3x3 conv
    and a contiguous copy."""
    rng = np.random.default_rng(3)
    g = cortexm.Graph()
    x = g.add_input("x", [1, 3, h, w], "int8")
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": CL})
    c1 = conv(g, rng, cl, channels, 3, (2, 2), (1, 0, 1, 1))
    d1 = depthwise(g, rng, c1, 3, (1, 1), (1, 1))
    p1 = conv(g, rng, d1, channels, project, (1, 1), ((project - 1) // 2,) * 2)
    r1 = add(g, c1, p1)
    split = depthwise(g, rng, r1, 5, (2, 2), (2, 2))
    after = conv(g, rng, split, 4, 3, (1, 1), (1, 1))
    g.outputs = [g.call("dim_order_ops._clone_dim_order.default", [after], {"dim_order": [0, 1, 2, 3]})]
    return g, split


@pytest.mark.parametrize("grid", [(1, 1), (2, 1), (3, 1), (2, 2), (2, 3), (4, 4), (1, 4), (3, 2)])
def test_patched_awkward_graph_is_bit_exact(grid):
    g, split = awkward_graph()
    patched = patches.patch_graph(g, split.name, grid)
    assert list(split.shape) == [1, 6, 4, 4]
    rng = np.random.default_rng(11)
    whole, patched_program = cortexm.to_program(g), cortexm.to_program(patched)
    for _ in range(3):
        x = rng.integers(-128, 128, (1, 3, 13, 15), dtype=np.int8)
        want = g.run(x)
        assert patched.run(x).tobytes() == want.tobytes()
        assert patched_program.run(x).tobytes() == want.tobytes() == whole.run(x).tobytes()
    counts = patched.op_counts()
    assert counts.get("cortex_m.quantized_depthwise_conv2d.default") == 2 * grid[0] * grid[1]
    assert patches.macs(patched) >= patches.macs(g)


def test_patch_regions_follow_the_receptive_field():
    g, split = awkward_graph()
    stage = patches.stage_of(g, split.name)
    assert [n.op for n in stage.nodes].count("cortex_m.quantized_conv2d.default") == 2
    assert [v.name for v in stage.inputs] == [g.nodes[0].outputs[0].name]
    need, reads = patches._needs(stage, patches.Region(0, 1, 3, 4))
    # split row 0 <- r1 rows 0..3 (5x5, stride 2, pad 2: rows -2..2, clipped); col 3 <- cols 4..6
    assert need[stage.nodes[-2].outputs[0].name] == patches.Region(0, 3, 4, 7)
    # the add's block input c1: the depthwise halo reaches one more row and column each side
    assert need[stage.nodes[0].outputs[0].name] == patches.Region(0, 4, 3, 7)
    # the first conv (pad top 1, left 0, right 1, stride 2) reads input rows -1..7 (the padded top
    # row kept) and columns 6..14, up to the border: no padding on the right
    region, pads = reads[(stage.nodes[0].name, 0)]
    assert region == patches.Region(0, 8, 6, 15) and pads == [1, 0, 0, 0]


def test_patch_errors():
    g, split = awkward_graph()
    with pytest.raises(ValueError, match="grid"):
        patches.patch_graph(g, split.name, (5, 1))
    with pytest.raises(ValueError, match="is not made by a conv"):
        patches.patch_graph(g, g.nodes[0].outputs[0].name, (2, 2))
    with pytest.raises(ValueError, match="also read by"):
        # c1 (the residual) is read after a split at the depthwise before the add
        patches.patch_graph(g, g.nodes[2].outputs[0].name, (2, 2))
    g.outputs = [g.outputs[0], split]
    with pytest.raises(ValueError, match="graph output"):
        patches.patch_graph(g, split.name, (1, 1))


def test_mobilenet_v2_96_patched_is_bit_exact_and_smaller():
    pytest.importorskip("torch")
    lowered = zoo.lowered("mobilenet_v2_96")
    patched = patches.patch_graph(lowered, "quantized_conv2d_7", (3, 3))
    overhead = patches.macs(patched) / patches.macs(lowered) - 1
    assert 0 < overhead <= 0.15
    whole, program = cortexm.to_program(lowered), cortexm.to_program(patched)
    assert program.arena_size <= 138432 < whole.arena_size
    x = np.random.default_rng(0).standard_normal((1, 3, 96, 96)).astype(np.float32)
    assert program.run(x).tobytes() == whole.run(x).tobytes()


def test_stage_macs_and_bound_agree_with_the_patched_graph():
    g, split = awkward_graph()
    base = patches.macs(g)
    stage = patches.stage_of(g, split.name)
    for grid in [(2, 1), (2, 3), (4, 4), (3, 2)]:
        patched = patches.patch_graph(g, split.name, grid)
        whole, in_patches = patches.stage_macs(stage, grid)
        assert patches.macs(patched) - base == in_patches - whole > 0
        # no plan of the patched graph is below the bound the search skips splits by
        assert patches.bound_after_stage(g, stage) <= cortexm.plan_memory(patched).arena_size
    found = patches.candidates(g)
    assert [c[0] for c in found] == sorted(c[0] for c in found)
    assert {c[3] for c in found} >= {split.name}


def test_to_program_with_an_arena_limit_patches_only_when_needed(tmp_path):
    # A 3x3 projection: with the 1x1 one written in place, the whole-tensor plan beats every patch grid.
    g, split = awkward_graph(channels=40, project=3)
    _core.run_pass("AnnotateScratch", g, _core.CortexMTargetConfig.from_string("cortex-m55+int8"))
    whole = cortexm.to_program(g)
    same = cortexm.to_program(g, arena_limit=whole.arena_size)
    assert same.patch_plan.split is None and same.patch_plan.mac_overhead == 0
    assert same.data == whole.data
    limit = whole.arena_size - 16
    program = cortexm.to_program(g, arena_limit=limit)
    plan = program.patch_plan
    assert plan.split is not None and program.arena_size == plan.arena_size <= limit
    assert plan.whole_arena_size == whole.arena_size and plan.mac_overhead > 0
    assert f"run as {plan.grid[0]}x{plan.grid[1]} patches" in str(plan) and str(plan) in program.summary()
    # the fewest extra MACs: every candidate with fewer planned larger than the limit
    for extra, _, _, name, grid, _ in patches.candidates(g):
        if extra >= plan.macs - plan.whole_macs:
            break
        assert patches._program_arena(patches.patch_graph(g, name, grid), "cortex-m55+int8", limit) > limit
    x = np.random.default_rng(4).integers(-128, 128, (1, 3, 13, 15), dtype=np.int8)
    assert program.run(x).tobytes() == whole.run(x).tobytes()
    # the memory plan shows the plan and each tensor's patch
    table = program.memory_plan().table().splitlines()
    assert table[1] == str(plan) and table[2].split()[-1] == "patch"
    rows = {line.split()[4]: line.split()[-1] for line in table[3:]}
    assert rows[f"{plan.stage[-1]}_patch0_0"] == "0,0" and "join" in rows.values()
    program.memory_plan().plot(tmp_path / "plan.png")
    assert (tmp_path / "plan.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("limit", [64, 0, -5, 1.5, True, "1000"])
def test_arena_limit_that_nothing_meets_is_a_value_error(limit):
    g, _ = awkward_graph()
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
        with pytest.raises(ValueError, match=r"arena_limit = 64 B: no plan fits; the smallest arena found is \d+ B"):
            cortexm.to_program(g, arena_limit=limit)
    else:
        with pytest.raises(ValueError, match="must be a positive int"):
            cortexm.to_program(g, arena_limit=limit)
    with pytest.raises(ValueError, match="needs the planner's layout"):
        cortexm.to_program(g, arena_limit=10000, layout="sequential")


def test_mobilenet_v2_96_fits_half_its_tensor_level_arena_by_itself():
    pytest.importorskip("torch")
    lowered = zoo.lowered("mobilenet_v2_96")
    limit = 276864 // 2  # half the tensor-level arena (issue 17)
    program = cortexm.to_program(lowered, arena_limit=limit)
    plan = program.patch_plan
    assert program.arena_size <= limit and plan.mac_overhead <= 0.15 and plan.split is not None
    whole = cortexm.to_program(lowered)
    rng = np.random.default_rng(1)
    for _ in range(2):
        x = rng.standard_normal((1, 3, 96, 96)).astype(np.float32)
        assert program.run(x).tobytes() == whole.run(x).tobytes()


# --- zoo table (docs/memory_planning.md) ---------------------------------------------------------

ZOO_ROWS = {}


@pytest.mark.parametrize("name", zoo.slow_params("the zoo patch table: CORTEXM_SLOW=1 runs it (minutes per model)"))
def test_zoo_patch_arena(name):
    pytest.importorskip("torch")
    row = []
    for io in ("float", "int8"):
        lowered = zoo.lowered_with_io(name, io)
        plan = cortexm.plan_memory(lowered)
        best = patches.smallest(lowered)
        if best is not None:
            assert best.arena_size < plan.arena_size and best.mac_overhead <= 0.15
            program = cortexm.to_program(lowered, arena_limit=best.arena_size)
            assert program.arena_size <= best.arena_size
        row.append((plan, best))
    ZOO_ROWS[name] = row


def test_zoo_patch_table():
    """Prints the table in docs/memory_planning.md (after test_zoo_patch_arena ran)."""
    if not ZOO_ROWS:
        pytest.skip("no zoo model patched in this run")
    lines = ["| model | tensor-level bound (B) | in-place arena (B) | patch arena (B), extra MACs, plan | "
             "int8 io: in-place arena (B) | int8 io: patch arena (B), extra MACs, plan |",
             "| --- | ---: | ---: | --- | ---: | --- |"]

    def cell(best):
        if best is None:
            return "none smaller"
        return (f"{best.arena_size}, +{100 * best.mac_overhead:.2f} %, {best.grid[0]}x{best.grid[1]} "
                f"at {best.split} {best.split_shape}")

    for name, ((plan, best), (plan8, best8)) in sorted(ZOO_ROWS.items()):
        lines.append(f"| {name} | {plan.tensor_level_bound} | {plan.arena_size} | {cell(best)} | "
                     f"{plan8.arena_size} | {cell(best8)} |")
    print("\n" + "\n".join(lines))
