"""cortexm.plan_memory: small hand-built graphs with exact offsets, and every zoo model lowered for
cortex-m55 (plan valid, arena >= lower bound; arena, bound and ratio recorded per model)."""

import os
import re

import numpy as np
import pytest

import cortexm
import zoo
from cortexm import _core

# mobilenet_v2 at 224x224 (~1 min to quantize and lower) has the same graph as mobilenet_v2_96, as in
# test_quantizer_models.py; CORTEXM_SLOW=1 includes it. mobilenet_v3_small (224) always runs.
SLOW_MODELS = {"mobilenet_v2"}
ALIAS_OPS = {"aten.view_copy.default", "aten.squeeze_copy.dims", "aten.unsqueeze_copy.default"}
# Ops whose output may overwrite their input 0 when it dies there (OpSchema::in_place_input).
IN_PLACE_OPS = {"cortex_m.quantized_add.default", "cortex_m.quantized_sub.default", "cortex_m.quantized_maximum.default",
                "cortex_m.quantized_minimum.default", "cortex_m.requantize.default",
                "cortex_m.quantized_activation.default", "cortex_m.quantized_activation_s16.default"}
# Ops whose output may overwrite input 0 from some bytes below it (OpSchema::in_place_lag).
LAGGED_IN_PLACE_OPS = {"cortex_m.quantized_depthwise_conv2d.default", "cortex_m.quantized_conv2d.default"}
# Ops whose narrower output may overwrite input 0 from its first byte (OpSchema::in_place_narrowing).
NARROWING_IN_PLACE_OPS = {"cortex_m.quantize_per_tensor.default", "quantized_decomposed.quantize_per_tensor.default"}


def element_offsets(value):
    """Byte-order offset of each element, in logical row-major order, from shape and dim order."""
    shape, order = list(value.shape), list(value.dim_order)
    strides = [0] * len(shape)
    stride = 1
    for d in reversed(order):
        strides[d] = stride
        stride *= shape[d]
    index = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), dtype=np.int64)
    return (np.array(strides, dtype=np.int64)[:, None] * index).sum(axis=0)


def relu(g, x):
    return g.call("aten.relu.default", [x])


def chain_with_view():
    # x -> r -> view -> o: the view shares r's bytes.
    g = cortexm.Graph()
    x = g.add_input("x", [2, 8])
    r = relu(g, x)
    v = g.call("aten.view_copy.default", [r], {"size": [16]})
    o = relu(g, v)
    g.outputs = [o]
    return g, x, r, v, o


def test_plan_of_a_chain_with_a_view():
    g, x, r, v, o = chain_with_view()
    plan = cortexm.plan_memory(g)
    plan.verify()
    assert isinstance(plan, cortexm.MemoryPlan)
    assert (plan.arena_size, plan.lower_bound, plan.policy) == (128, 128, "size_first_fit")
    rows = {b.name: b for b in plan.buffers}
    assert rows[x.name].offset == 0 and rows[x.name].kind == "input" and rows[x.name].op == "input"
    assert rows[r.name].offset == 64 and (rows[r.name].first, rows[r.name].last) == (0, 2)
    assert rows[v.name].alias_of == r.name and rows[v.name].offset == 64
    assert rows[v.name].op == "aten.view_copy.default" and rows[v.name].shape == (16,)
    assert rows[o.name].offset == 0 and rows[o.name].kind == "output"
    assert rows[o.name].dtype == "float32" and rows[o.name].size == 64
    assert plan.scratch == []
    assert plan.ratio == 1.0


def test_table_lists_every_buffer():
    g, x, r, v, o = chain_with_view()
    plan = cortexm.plan_memory(g)
    text = plan.table()
    assert text == str(plan)
    assert "arena 128 B, lower bound 128 B" in text
    for name in (x.name, r.name, v.name, o.name):
        assert name in text
    assert len(text.splitlines()) == 2 + len(plan.buffers)


def test_policies_and_bad_arguments():
    g, *_ = chain_with_view()
    for policy in cortexm.memory_plan.placement_policies():
        plan = cortexm.plan_memory(g, policy=policy)
        plan.verify()
        assert plan.policy == policy
    with pytest.raises(ValueError, match="alignment"):
        cortexm.plan_memory(g, alignment=24)
    for bad in (16.0, 1.5, "16", True, None):  # not truncated or parsed into an int
        with pytest.raises(ValueError, match=rf"^plan_memory: alignment = {re.escape(repr(bad))} must be an int$"):
            cortexm.plan_memory(g, alignment=bad)
    with pytest.raises(ValueError, match=f"^plan_memory: alignment = {2**70} does not fit in int64$"):
        cortexm.plan_memory(g, alignment=2**70)
    for bad in (0, -16):
        with pytest.raises(ValueError, match=f"alignment = {bad} must be a power of two"):
            cortexm.plan_memory(g, alignment=bad)
    assert cortexm.plan_memory(g, alignment=np.int64(32)).alignment == 32
    with pytest.raises(ValueError, match="policy"):
        cortexm.plan_memory(g, policy="nope")


def test_verify_catches_an_overlap():
    g, x, r, v, o = chain_with_view()
    plan = cortexm.plan_memory(g)
    moved = [b if b.name != o.name else type(b)(**{**b.__dict__, "offset": 64}) for b in plan.buffers]
    bad = cortexm.MemoryPlan(plan.arena_size, plan.lower_bound, moved, alignment=16,
                             policy=plan.policy, num_steps=plan.num_steps)
    assert "overlap" in bad.check()
    with pytest.raises(ValueError, match="overlap"):
        bad.verify()


def residual_graph():
    # x -> a -> b -> c, d = a + c: c and d overwrite their dying input, a stays for the add.
    g = cortexm.Graph()
    x = g.add_input("x", [16], dtype="int8")
    table = g.add_constant("table", np.arange(-128, 128, dtype=np.int8))
    act = lambda v: g.call("cortex_m.quantized_activation.default", [v, table])
    a = act(x)
    b = act(a)
    c = act(b)
    zp = {f"{n}_zero_point": 0 for n in ("self", "other", "output")}
    mult = {f"{n}_multiplier": 1 << 30 for n in ("self", "other", "output")}
    shift = {f"{n}_shift": -1 for n in ("self", "other", "output")}
    d = g.call("cortex_m.quantized_add.default", [c, a], {**zp, **mult, **shift})
    g.outputs = [d]
    return g, a, b, c, d


def test_in_place_rows_table_and_bounds(tmp_path):
    g, a, b, c, d = residual_graph()
    plan = cortexm.plan_memory(g)
    plan.verify()
    rows = {r.name: r for r in plan.buffers}
    assert not rows[b.name].in_place
    assert rows[c.name].in_place and rows[c.name].alias_of == b.name
    assert rows[d.name].in_place and rows[d.name].alias_of == b.name
    assert rows[c.name].offset == rows[b.name].offset == rows[d.name].offset
    assert (plan.lower_bound, plan.tensor_level_bound, plan.arena_size) == (32, 48, 32)
    assert plan.in_place and plan.lower_bound_model == "in-place"
    text = plan.table()
    assert "lower bound 32 B (in-place, x1.000), tensor-level bound 48 B" in text
    # a overwrites the graph input x, which dies at it (a run consumes its inputs).
    assert rows[a.name].in_place and rows[a.name].alias_of == "x" and plan.consumed_inputs == ["x"]
    assert "(0 aliases, 3 in place)" in text
    assert f"{b.name} (in place)" in text and "x (in place, an input)" in text
    assert "graph inputs written over by the run (set them before every run): x" in text
    kept = cortexm.plan_memory(g, preserve_inputs=True)
    kept.verify()
    assert not {r.name: r for r in kept.buffers}[a.name].in_place and not kept.consumed_inputs
    assert "graph inputs written over" not in kept.table()
    with pytest.raises(ValueError, match="preserve_inputs = 1 must be a bool"):
        cortexm.plan_memory(g, preserve_inputs=1)
    plan.plot(tmp_path / "plan.png")

    whole = cortexm.plan_memory(g, in_place=False)
    whole.verify()
    assert not any(r.in_place for r in whole.buffers)
    assert (whole.lower_bound, whole.tensor_level_bound) == (48, 48)
    assert whole.lower_bound_model == "tensor-level"
    assert "lower bound 48 B (tensor-level" in whole.table()
    with pytest.raises(ValueError, match="in_place = 1 must be a bool"):
        cortexm.plan_memory(g, in_place=1)

    # A row claiming in place while an alias written before it is read later is refused.
    bad_rows = [r if r.name != c.name else type(r)(**{**r.__dict__, "in_place": False, "alias_of": None})
                for r in plan.buffers]
    assert "overlap" in cortexm.MemoryPlan(plan.arena_size, plan.lower_bound, bad_rows,
                                           num_steps=plan.num_steps, in_place=True).check()


def test_in_place_programs_run_bit_exact_and_the_loader_accepts_only_that_overlap(tmp_path):
    g, a, b, c, d = residual_graph()
    x = g.inputs[0]
    program = cortexm.to_program(g)
    assert program.arena_size == 32
    for trial in range(3):
        inp = np.random.default_rng(trial).integers(-128, 128, 16, dtype=np.int8)
        assert program.run(inp).tobytes() == g.run(inp).tobytes()
    program.save(tmp_path / "p.cmpte")
    loaded = cortexm.load_program(tmp_path / "p.cmpte")
    assert loaded.memory_plan().lower_bound == 32  # the in-place outputs share their input's bytes

    # Own bytes for each value; then one output moved over one input at a time.
    own = {x.id: 0, a.id: 16, b.id: 32, c.id: 48, d.id: 64}
    def layout(**moves):
        values = dict(own)
        for name, offset in moves.items():
            values[{"c": c, "d": d}[name].id] = offset
        return {"values": values, "scratch": {}, "arena_size": 80}
    inp = np.arange(-128, 128, 16, dtype=np.int8)
    for ok in (layout(c=32), layout(d=48), layout(c=32, d=32)):  # over input 0, which dies there
        assert cortexm.to_program(g, layout=ok).run(inp).tobytes() == g.run(inp).tobytes()
    for bad in (layout(d=16),   # the add's output over input 1 (a): its kernel is in place over self only
                layout(c=40),   # half over its input
                layout(d=56)):  # half over input 0
        with pytest.raises(ValueError, match="overlaps an input"):
            cortexm.to_program(g, layout=bad)


def in_place_chain(op):
    """x -> first = act(x) -> op(first, ...): op's input 0 dies at it. Returns graph, op's output."""
    int16 = op.endswith("_s16.default")
    dtype = "int16" if int16 else "int8"
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3, 8], dtype)
    rng = np.random.default_rng(3)
    table = lambda: g.add_constant(f"table{len(g.nodes)}", rng.integers(-32768, 32768, 513, dtype=np.int16)
                                   if int16 else rng.integers(-128, 128, 256, dtype=np.int8))
    act = "cortex_m.quantized_activation_s16.default" if int16 else "cortex_m.quantized_activation.default"
    first = g.call(act, [x, table()])
    if op.endswith("activation.default") or op.endswith("activation_s16.default"):
        out = g.call(op, [first, table()])
    elif op == "cortex_m.requantize.default":
        out = g.call(op, [first], {"input_zero_point": 3, "output_zero_point": -5,
                                   "output_multiplier": 1 << 30, "output_shift": -21})
    else:
        attrs = {f"{n}_zero_point": z for n, z in (("self", 3), ("other", -2), ("output", 1))}
        attrs.update({f"{n}_multiplier": 1 << 30 for n in ("self", "other", "output")})
        attrs.update({"self_shift": -1, "other_shift": -1, "output_shift": -19})
        out = g.call(op, [first, x], attrs)
    g.outputs = [out]
    return g, out, first


def test_in_place_ops_are_the_descriptors():
    schemas = {op: _core.op_info(op).in_place_input for op in _core.registered_ops()}
    assert {op for op, k in schemas.items() if k >= 0} == IN_PLACE_OPS | LAGGED_IN_PLACE_OPS | NARROWING_IN_PLACE_OPS
    assert all(schemas[op] == 0 for op in IN_PLACE_OPS | NARROWING_IN_PLACE_OPS)
    assert {op for op in schemas if _core.op_info(op).in_place_narrowing} == NARROWING_IN_PLACE_OPS


@pytest.mark.parametrize("op", sorted(IN_PLACE_OPS))
def test_every_in_place_op_runs_in_place_bit_exact(op):
    # The planner's rule (OpSchema::in_place_input) and the loader's list per kernel id agree.
    g, out, first = in_place_chain(op)
    rows = {r.name: r for r in cortexm.plan_memory(g).buffers}
    # first overwrites x unless the op reads x too
    assert rows[out.name].in_place and rows[out.name].alias_of == (rows[first.name].alias_of or first.name)
    program = cortexm.to_program(g)
    rng = np.random.default_rng(4)
    for _ in range(3):
        x = rng.integers(-32768, 32768, (2, 3, 8), dtype=np.int16) if op.endswith("_s16.default") \
            else rng.integers(-128, 128, (2, 3, 8), dtype=np.int8)
        assert program.run(x).tobytes() == g.run(x).tobytes()


def test_mul_never_runs_in_place():
    # quantized_mul's kernel declares its pointers __restrict: neither the planner nor the loader
    # lets its output overwrite an input.
    g = cortexm.Graph()
    x = g.add_input("x", [16], dtype="int8")
    table = g.add_constant("table", np.arange(-128, 128, dtype=np.int8))
    a = g.call("cortex_m.quantized_activation.default", [x, table])
    m = g.call("cortex_m.quantized_mul.default", [a, x],
               {"self_zero_point": 0, "other_zero_point": 0, "output_zero_point": 0,
                "output_multiplier": 1 << 30, "output_shift": -7})
    g.outputs = [m]
    rows = {r.name: r for r in cortexm.plan_memory(g).buffers}
    assert not rows[m.name].in_place and rows[m.name].offset != rows[a.name].offset
    with pytest.raises(ValueError, match="overlaps an input"):
        cortexm.to_program(g, layout={"values": {x.id: 0, a.id: 16, m.id: 16}, "scratch": {}, "arena_size": 32})


def test_place_buffers_binding_pins_tflm_order():
    # Largest first, first gap that fits (see tests/cpp/planner/placement_test.cc).
    p = _core.place_buffers([(64, 0, 1), (32, 0, 2), (48, 2, 3), (16, 2, 2)], 16, "size_first_fit")
    assert p["offsets"] == [0, 64, 0, 48]
    assert (p["arena_size"], p["lower_bound"]) == (96, 96)


def test_plot_writes_a_png_atomically(tmp_path):
    g, *_ = chain_with_view()
    plan = cortexm.plan_memory(g)
    path = tmp_path / "plan.png"
    path.write_bytes(b"old")
    plan.plot(path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(os.listdir(tmp_path)) == ["plan.png"]  # no temporary left behind
    with pytest.raises(FileNotFoundError):
        plan.plot(tmp_path / "missing_dir" / "plan.png")
    assert sorted(os.listdir(tmp_path)) == ["plan.png"]


# --- zoo models ---------------------------------------------------------------------------------

ZOO_RESULTS = {}


def zoo_names():
    names = []
    for name in cortexm.models.names():
        marks = []
        if name in SLOW_MODELS and not os.environ.get("CORTEXM_SLOW"):
            marks.append(pytest.mark.skip(reason="224-pixel mobilenet_v2: slow; mobilenet_v2_96 has its graph; CORTEXM_SLOW=1 runs it"))
        names.append(pytest.param(name, marks=marks))
    return names


@pytest.fixture(scope="module", params=zoo_names())
def zoo_lowered(request):
    pytest.importorskip("torch")
    name = request.param
    return name, zoo.lowered(name)


def test_zoo_model_plan(zoo_lowered):
    name, lowered = zoo_lowered
    plan = cortexm.plan_memory(lowered)
    plan.verify()
    assert plan.arena_size >= plan.lower_bound > 0
    assert plan.arena_size % 16 == 0

    nodes = lowered.nodes
    assert plan.num_steps == len(nodes)
    rows = {b.name: b for b in plan.tensors}
    # Every non-constant value has a row of its bytes; constants have none.
    for node in nodes:
        for out in node.outputs:
            row = rows[out.name]
            assert row.size == int(np.prod(out.shape, dtype=np.int64)) * np.dtype(
                "bool" if out.dtype == "bool" else out.dtype).itemsize
    for c in lowered.constants:
        assert c.name not in rows
    # Aliases: exactly the views of non-constant values that leave every element at its byte
    # offset (contiguous views, and size-1 dims inserted or removed in another dim order), at
    # their input's offset in their root's buffer.
    for node in nodes:
        if node.op not in ALIAS_OPS:
            continue
        src, out = node.inputs[0], node.outputs[0]
        expect_alias = src.kind != "constant" and \
            rows[out.name].size == rows.get(src.name, rows[out.name]).size and \
            np.array_equal(element_offsets(src), element_offsets(out))
        assert (rows[out.name].alias_of is not None) == expect_alias, node.name
        if expect_alias:
            root = rows[out.name].alias_of
            assert rows[root].alias_of is None
            assert rows[out.name].offset == rows[src.name].offset
    # In place: only ops whose output may overwrite input 0, at their input's root (a graph input
    # once it is dead: a run consumes its inputs); the tensor-level plan has none and its bound is
    # the one the plan reports.
    by_output = {n.outputs[0].name: n for n in nodes if n.outputs}
    last_read = {}  # each value's own last reader (a root's row spans its whole group)
    for step, node in enumerate(nodes):
        for v in node.inputs:
            if v is not None:
                last_read[v.name] = step
    for v in lowered.outputs:
        last_read[v.name] = len(nodes)
    for row in plan.tensors:
        if row.in_place:
            node = by_output[row.name]
            assert node.op in IN_PLACE_OPS | LAGGED_IN_PLACE_OPS | NARROWING_IN_PLACE_OPS, node.name
            src = rows[node.inputs[0].name]
            assert row.alias_of == (src.alias_of or src.name)
            # Element-wise over the same bytes (a quantize from the float's first byte); depthwise
            # and pointwise convs from their lag below (loader-checked).
            assert row.offset == src.offset if node.op not in LAGGED_IN_PLACE_OPS else row.offset < src.offset
            if node.op in NARROWING_IN_PLACE_OPS:
                assert row.size < src.size
            # Everything in those bytes before the op is read for the last time at the op.
            for other in plan.tensors:
                if (other.alias_of == row.alias_of or other.name == row.alias_of) and other.first < row.first:
                    assert last_read.get(other.name, other.first) <= row.first, (row.name, other.name)
    whole = cortexm.plan_memory(lowered, in_place=False)
    whole.verify()
    assert not any(b.in_place for b in whole.buffers)
    assert plan.tensor_level_bound == whole.lower_bound >= plan.lower_bound
    # Scratch: one row per node with scratch_bytes > 0, live only at its step.
    scratch_nodes = [i for i, n in enumerate(nodes) if (n.attrs.get("scratch_bytes") or 0) > 0]
    assert [b.node_index for b in plan.scratch] == scratch_nodes
    assert all(b.first == b.last == b.node_index for b in plan.scratch)

    # Each policy gives a valid plan, no larger than its tensor-level one (a depthwise runs in place
    # only where that shrinks the arena, so the bound depends on the policy); the chosen one is the
    # smallest, earliest on ties.
    whole_with = lambda policy: cortexm.plan_memory(lowered, policy=policy, in_place=False)
    arenas = {}
    for policy in cortexm.memory_plan.placement_policies():
        p = cortexm.plan_memory(lowered, policy=policy)
        p.verify()
        assert p.lower_bound <= p.arena_size <= whole_with(policy).arena_size
        arenas[policy] = p.arena_size
    assert plan.arena_size == min(arenas.values())
    assert plan.policy == min(arenas, key=lambda k: (arenas[k], list(arenas).index(k)))
    # Deterministic.
    assert cortexm.plan_memory(lowered).buffers == plan.buffers

    ZOO_RESULTS[name] = (plan, arenas, whole)
    tflm = arenas["size_first_fit"]
    print(f"\n{name}: arena {plan.arena_size} B, lower bound {plan.lower_bound} B, "
          f"ratio {plan.ratio:.4f}, policy {plan.policy}, TFLM order {tflm} B "
          f"tensor-level arena {whole.arena_size} B / bound {whole.lower_bound} B "
          f"({len(plan.tensors)} tensors, {sum(b.alias_of is not None and not b.in_place for b in plan.tensors)} "
          f"aliases, {sum(b.in_place for b in plan.tensors)} in place, "
          f"{len(plan.scratch)} scratch); per policy {arenas}")


def test_zoo_summary():
    """Prints the table recorded in docs/memory_planning.md (after the zoo tests ran)."""
    if not ZOO_RESULTS:
        pytest.skip("no zoo model planned in this run")
    policies = cortexm.memory_plan.placement_policies()
    lines = ["| model | tensor-level arena (B) | tensor-level bound (B) | in-place arena (B) | "
             "in-place bound (B) | ops in place | arena / bound | policy | " + " | ".join(policies) + " |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | " + " | ".join("---:" for _ in policies) + " |"]
    wins = {p: 0 for p in policies}
    for name, (plan, arenas, whole) in sorted(ZOO_RESULTS.items()):
        best = min(arenas.values())
        for p in policies:
            wins[p] += arenas[p] == best
        lines.append(f"| {name} | {whole.arena_size} | {whole.lower_bound} | {plan.arena_size} | "
                     f"{plan.lower_bound} | {sum(b.in_place for b in plan.tensors)} | {plan.ratio:.4f} | "
                     f"{plan.policy} | " + " | ".join(str(arenas[p]) for p in policies) + " |")
    lines.append(f"| models where the policy is smallest (ties count) | | | | | | | | "
                 + " | ".join(str(wins[p]) for p in policies) + " |")
    print("\n" + "\n".join(lines))


def depthwise_chain():
    """x -> channels-last copy -> depthwise x4 channels -> depthwise 3x3 same (in place over the
    first) -> depthwise stride 2 -> contiguous copy. Returns the graph, the copy and the three
    depthwise outputs."""
    g = cortexm.Graph()
    x = g.add_input("x", [1, 2, 6, 7], "int8")
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": [0, 2, 3, 1]})
    rng = np.random.default_rng(5)
    quant = {"input_offset": 3, "output_offset": -2, "requantize_multipliers": [1 << 30] * 8,
             "requantize_shifts": [-8] * 8}
    def depthwise(v, stride, padding, multiplier=1):
        w = g.add_constant(f"w{len(g.nodes)}", rng.integers(-127, 128, (1, 3, 3, 8)).astype(np.int8))
        return g.call("cortex_m.quantized_depthwise_conv2d.default", [v, w, None],
                      {"stride": stride, "padding": padding, "dilation": [1, 1], "depth_multiplier": multiplier,
                       **quant})
    widen = depthwise(cl, [1, 1], [1, 1], multiplier=4)
    dw1 = depthwise(widen, [1, 1], [1, 1])
    dw2 = depthwise(dw1, [2, 2], [1, 1])
    g.outputs = [g.call("dim_order_ops._clone_dim_order.default", [dw2], {"dim_order": [0, 1, 2, 3]})]
    return g, cl, widen, dw1, dw2


def test_depthwise_runs_in_place_from_its_lag_and_the_loader_checks_the_lag(tmp_path):
    g, cl, widen, dw1, dw2 = depthwise_chain()
    plan = cortexm.plan_memory(g)
    plan.verify()
    rows = {r.name: r for r in plan.buffers}
    lag = (2 * 7 + 2) * 8  # two input rows and two pixels (quantized_depthwise_conv2d_in_place_lag)
    # The widening depthwise (4x its input) is left out of place: with it last in the planner's
    # second pass the arena reaches its lower bound.
    assert rows[dw1.name].in_place and not rows[widen.name].in_place
    assert rows[dw1.name].alias_of == widen.name
    assert rows[widen.name].offset - rows[dw1.name].offset == lag
    assert plan.lower_bound == plan.arena_size < plan.tensor_level_bound
    assert f"{widen.name} (in place)" in plan.table()
    program = cortexm.to_program(g)
    rng = np.random.default_rng(6)
    for _ in range(3):
        x = rng.integers(-128, 128, (1, 2, 6, 7), dtype=np.int8)
        assert program.run(x).tobytes() == g.run(x).tobytes()
    # A loaded program's plan names the in-place outputs and counts shared bytes once.
    program.save(tmp_path / "dw.cmpte")
    loaded = cortexm.load_program(tmp_path / "dw.cmpte").memory_plan()
    read_back = {b.name: b for b in loaded.buffers}
    assert read_back[dw1.name].in_place_over == (widen.name, lag, 336 - lag)
    assert f"{widen.name} (in place, {lag} B below)" in loaded.table()
    assert loaded.lower_bound <= loaded.arena_size

    # Explicit layouts: the widened input at 1024, the next depthwise output some bytes below it.
    def layout(dw1_offset):
        return {"values": {g.inputs[0].id: 0, cl.id: 128, widen.id: 1024, dw1.id: dw1_offset, dw2.id: 2048,
                           g.outputs[0].id: 2304},
                "scratch": {}, "arena_size": 2688}
    x = rng.integers(-128, 128, (1, 2, 6, 7), dtype=np.int8)
    for ok in (1024 - lag, 1024 - lag - 16, 512):
        assert cortexm.to_program(g, layout=layout(ok)).run(x).tobytes() == g.run(x).tobytes()
    with pytest.raises(ValueError, match="in-place lag"):
        cortexm.to_program(g, layout=layout(1024 - lag + 16))
    with pytest.raises(ValueError, match="overlaps an input"):
        cortexm.to_program(g, layout=layout(1024 + 16))  # above its input: never
