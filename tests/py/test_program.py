"""Program files: writer, loader and host runtime against the graph interpreter, bit for bit."""

import os
import shutil
import subprocess
import json

import numpy as np
import pytest

import cortexm
from cortexm import _core

RNG = np.random.default_rng(7)


def rand(shape, dtype):
    if dtype == "float32":
        return RNG.standard_normal(shape).astype(np.float32) * 3
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, size=shape).astype(dtype)


def assert_bit_exact(program, graph, *inputs):
    got = program.run(*inputs)
    want = graph.run(*inputs)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.dtype == b.dtype and a.shape == b.shape, k
        assert a.tobytes() == b.tobytes(), f"output {k} differs"


# --- small graphs, one op (or a short chain) each -------------------------------------------

Q = {"scales": [0.05], "zero_points": [3]}


def g_cat_channels_last():
    g = cortexm.Graph()
    a = g.add_input("a", [1, 3, 4, 5], "int8", qparams=Q)
    b = g.add_input("b", [1, 2, 4, 5], "int8", qparams=Q)
    a_cl = g.call("dim_order_ops._clone_dim_order.default", [a], {"dim_order": [0, 2, 3, 1]})
    b_cl = g.call("dim_order_ops._clone_dim_order.default", [b], {"dim_order": [0, 2, 3, 1]})
    g.outputs = [g.call("aten.cat.default", [a_cl, b_cl], {"dim": 1})]
    return g, [rand((1, 3, 4, 5), "int8"), rand((1, 2, 4, 5), "int8")]


def g_slice_select_split():
    g = cortexm.Graph()
    x = g.add_input("x", [4, 9, 6], "int8")
    s = g.call("aten.slice_copy.Tensor", [x], {"dim": 1, "start": -8, "end": 9, "step": 3})
    t = g.call("aten.select_copy.int", [s], {"dim": -1, "index": -2})
    parts = g.call("aten.split_with_sizes_copy.default", [x], {"split_sizes": [2, 5, 2], "dim": 1})
    g.outputs = [t, *parts]
    return g, [rand((4, 9, 6), "int8")]


def g_permute_view():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3, 4, 5], "float32")
    p = g.call("aten.permute_copy.default", [x], {"dims": [2, 0, -1, 1]})
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": [0, 2, 3, 1]})
    v = g.call("aten.view_copy.default", [cl], {"size": [6, 20]})  # channels-last bytes, logical view
    u = g.call("aten.unsqueeze_copy.default", [v], {"dim": 1})
    sq = g.call("aten.squeeze_copy.dims", [u], {"dim": [1]})
    g.outputs = [p, sq]
    return g, [rand((2, 3, 4, 5), "float32")]


def g_pads():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3, 7], "int8", qparams=Q)
    c = g.call("aten.constant_pad_nd.default", [x], {"pad": [2, -1, -1, 3], "value": -5.0})
    r = g.call("aten.reflection_pad1d.default", [x], {"padding": [3, 2]})
    # the same pads on a permuted (non-contiguous) layout take the strided path
    xp = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": [2, 0, 1]})
    cp = g.call("aten.constant_pad_nd.default", [xp], {"pad": [1, 2, 0, -1], "value": 7.0})
    g.outputs = [c, r, cp]
    return g, [rand((2, 3, 7), "int8")]


def g_upsample():
    g = cortexm.Graph()
    x = g.add_input("x", [1, 3, 5, 4], "int8", qparams=Q)
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": [0, 2, 3, 1]})
    g.outputs = [g.call("aten.upsample_nearest2d.default", [cl], {"output_size": [8, 9]}),  # strided path
                 g.call("aten.upsample_nearest2d.default", [x], {"output_size": [11, 7]})]  # portable
    return g, [rand((1, 3, 5, 4), "int8")]


def g_softmax():
    g = cortexm.Graph()
    x = g.add_input("x", [3, 4, 5], "float32")
    a = g.call("aten._softmax.default", [x], {"dim": 1, "half_to_float": False})
    b = g.call("aten._log_softmax.default", [x], {"dim": -1, "half_to_float": False})
    g.outputs = [a, b]
    return g, [rand((3, 4, 5), "float32")]


def g_unary_and_mean():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3, 4], "float32")
    outs = [g.call(op, [x], {}) for op in ["aten.relu.default", "aten.hardswish.default", "aten.silu.default",
                                           "aten.sigmoid.default", "aten.tanh.default", "aten.abs.default",
                                           "aten.hardsigmoid.default"]]
    outs.append(g.call("aten.sqrt.default", [outs[0]], {}))
    outs.append(g.call("aten.mean.dim", [x], {"dim": [-1, 0], "keepdim": True}))
    outs.append(g.call("aten.mean.dim", [x], {"dim": [], "keepdim": False}))
    g.outputs = outs
    return g, [rand((2, 3, 4), "float32")]


def g_quantize_roundtrip():
    g = cortexm.Graph()
    x = g.add_input("x", [3, 17], "float32")
    attrs8 = {"scale": 0.037, "zero_point": -4, "quant_min": -128, "quant_max": 127, "dtype": "int8"}
    attrs16 = {"scale": 0.0011, "zero_point": 5, "quant_min": -32768, "quant_max": 32767, "dtype": "int16"}
    q8 = g.call("cortex_m.quantize_per_tensor.default", [x], attrs8)
    q16 = g.call("cortex_m.quantize_per_tensor.default", [x], attrs16)
    g.outputs = [g.call("cortex_m.dequantize_per_tensor.default", [q8], attrs8),
                 g.call("cortex_m.dequantize_per_tensor.default", [q16], attrs16), q8]
    return g, [rand((3, 17), "float32")]


def g_cat_and_linear():
    """Data movement on channels-last bytes and an int8 linear with constant weights and bias."""
    g, inputs = g_cat_channels_last()
    c = g.add_input("c", [3, 8], "int8")
    w = g.add_constant("w", rand((4, 8), "int8"))
    b = g.add_constant("b", RNG.integers(-5000, 5000, size=4).astype(np.int32))
    lin = g.call("cortex_m.quantized_linear.default", [c, w, b],
                 {"input_offset": 3, "filter_offset": 0, "output_offset": -2,
                  "requantize_multipliers": [1 << 30, 1 << 29, 3 << 28, 1 << 30],
                  "requantize_shifts": [-7, -6, -8, -7]}, name="fc")
    g.outputs = [*g.outputs, lin]
    return g, [*inputs, rand((3, 8), "int8")]


def g_int8_softmax_and_lut():
    """cortex_m softmax / log_softmax along the innermost-in-memory dim, and a LUT activation."""
    g = cortexm.Graph()
    x = g.add_input("x", [2, 5, 3, 4], "int8", qparams=Q)
    cl = g.call("dim_order_ops._clone_dim_order.default", [x], {"dim_order": [0, 2, 3, 1]})
    m, sh, dmin = cortexm.ops.softmax_scaling(0.05)
    sm = g.call("cortex_m.quantized_softmax.default", [cl],
                {"dim": 1, "input_multiplier": m, "input_shift": sh, "diff_min": dmin})  # C innermost
    lm, lsh, ldmin, div, rsh = cortexm.ops.log_softmax_scaling(0.05)
    ls = g.call("cortex_m.quantized_log_softmax.default", [x],
                {"dim": -1, "input_multiplier": lm, "input_shift": lsh, "diff_min": ldmin,
                 "reverse_scaling_divisor": div, "reverse_scaling_right_shift": rsh})
    table = g.add_constant("table", rand((256,), "int8"))
    act = g.call("cortex_m.quantized_activation.default", [cl, table], {})
    g.outputs = [sm, ls, act]
    return g, [rand((2, 5, 3, 4), "int8")]


SMALL = [g_cat_channels_last, g_slice_select_split, g_permute_view, g_pads, g_upsample, g_softmax,
         g_unary_and_mean, g_quantize_roundtrip, g_cat_and_linear, g_int8_softmax_and_lut]


@pytest.mark.parametrize("build", SMALL, ids=[f.__name__ for f in SMALL])
def test_small_graph_runs_bit_exact(build, tmp_path):
    graph, inputs = build()
    program = cortexm.to_program(graph, bundle_inputs=tuple(inputs))
    assert_bit_exact(program, graph, *inputs)
    for _ in range(2):  # fresh random inputs through the same arena
        fresh = [rand(x.shape, str(x.dtype)) for x in inputs]
        assert_bit_exact(program, graph, *fresh)
    path = tmp_path / "p.cmpte"
    program.save(path)
    loaded = cortexm.load_program(path)
    assert_bit_exact(loaded, graph, *inputs)
    assert loaded.verify() == 1


def test_float_fallback_ops_are_counted_and_profiled():
    graph, inputs = g_softmax()
    program = cortexm.to_program(graph)
    assert program.float_ops == 2
    prof = program.profile(*inputs)
    assert [p[1] for p in prof] == ["Softmax", "LogSoftmax"]
    assert all(s >= 0 for _, _, s in prof)


def test_input_checks_name_the_input():
    graph, inputs = g_softmax()
    program = cortexm.to_program(graph)
    with pytest.raises(ValueError, match="input 0"):
        program.run(np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match="takes 1 inputs"):
        program.run(*inputs, *inputs)


def test_writer_refuses_ops_the_runtime_cannot_run():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3])
    g.outputs = [g.call("aten.gelu.default", [x], {}, name="my_gelu")]
    with pytest.raises(NotImplementedError, match=r"my_gelu.*aten\.gelu\.default"):
        cortexm.to_program(g)


def test_writer_refuses_a_layout_with_too_little_scratch_or_arena():
    g = cortexm.Graph()
    x = g.add_input("x", [2, 3])
    g.outputs = [g.call("aten.relu.default", [x], {})]
    out = g.outputs[0]
    with pytest.raises(ValueError, match=r"tensors\[1\].*offset.*within the arena"):
        cortexm.to_program(g, layout={"values": {x.id: 0, out.id: 32}, "scratch": {}, "arena_size": 40})
    with pytest.raises(ValueError, match="overlaps an input"):
        cortexm.to_program(g, layout={"values": {x.id: 0, out.id: 16}, "scratch": {}, "arena_size": 64})
    with pytest.raises(ValueError, match="no offset for value"):
        cortexm.to_program(g, layout={"values": {x.id: 0}, "scratch": {}, "arena_size": 64})
    # Not ints, or not the layout's shape: ValueError naming the layout, not pybind's cast error.
    for bad in ({"values": {x.id: 0, out.id: 32.5}, "scratch": {}, "arena_size": 64},
                {"values": {x.id: 0, out.id: 32}, "scratch": {}, "arena_size": "64"},
                {"values": {x.id: 0, out.id: 32}, "scratch": {0: (0, 2**70)}, "arena_size": 64},
                {"values": {x.id: 0, out.id: 32}, "scratch": {}},
                [x.id, out.id]):
        with pytest.raises(ValueError, match=r"^write_program: layout = .* must be None, 'sequential' or"):
            cortexm.to_program(g, layout=bad)
    with pytest.raises(ValueError, match=r"offset = -32: tensor must lie within the arena"):
        cortexm.to_program(g, layout={"values": {x.id: 0, out.id: -32}, "scratch": {}, "arena_size": 64})


def test_verify_detects_a_wrong_expected_output():
    graph, inputs = g_softmax()
    program = cortexm.to_program(graph, bundle_inputs=[tuple(inputs)])
    assert program.verify() == 1
    ins, outs = program.bundled()[0]
    outs[0][0, 0, 0] += 1.0
    bad = _core.write_program(graph, "cortex-m55+int8", None, [(ins, outs)])
    with pytest.raises(ValueError, match="bundled case 0: output 0 differs"):
        cortexm.Program(bad).verify()
    with pytest.raises(ValueError, match="no bundled inputs"):
        cortexm.to_program(graph).verify()


def test_memory_plan_table_and_plot(tmp_path):
    graph, inputs = g_permute_view()
    plan = cortexm.to_program(graph).memory_plan()
    assert plan.arena_size >= plan.lower_bound > 0
    assert "lower bound" in plan.table()
    plan.plot(tmp_path / "plan.png")
    assert (tmp_path / "plan.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- atomic save -------------------------------------------------------------------------------


def test_save_is_atomic_when_the_write_fails(tmp_path, monkeypatch):
    graph, inputs = g_softmax()
    program = cortexm.to_program(graph)
    path = tmp_path / "model.cmpte"
    path.write_bytes(b"old contents")

    import cortexm.program as program_module

    real_fsync = os.fsync

    def failing_fsync(fd):
        os.write(fd, b"partial garbage")
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(program_module.os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="disk full"):
        program.save(path)
    monkeypatch.setattr(program_module.os, "fsync", real_fsync)
    assert path.read_bytes() == b"old contents"
    assert os.listdir(tmp_path) == ["model.cmpte"]  # no temporary file left behind
    program.save(path)
    assert cortexm.load_program(path).data == program.data


# --- corrupt, truncated and hand-edited files -------------------------------------------------




@pytest.fixture(scope="module")
def real_program():
    graph, inputs = g_cat_and_linear()
    return cortexm.to_program(graph, bundle_inputs=tuple(inputs)), graph, inputs


def load_bytes(data):
    return cortexm.Program(bytes(data))


def test_truncated_files_give_errors(real_program):
    data = real_program[0].data
    for n in sorted(set([0, 1, 4, 7, 8, 12, 16, 31, 64, len(data) // 2, len(data) - 1] +
                        list(range(0, len(data), max(1, len(data) // 97))))):
        if n >= len(data):
            continue
        with pytest.raises(ValueError, match="program"):
            load_bytes(data[:n])


def test_wrong_identifier_and_garbage(real_program):
    data = bytearray(real_program[0].data)
    data[8:12] = b"XXXX"
    with pytest.raises(ValueError, match="file_identifier"):
        load_bytes(data)
    with pytest.raises(ValueError, match="size"):
        load_bytes(b"")
    with pytest.raises(ValueError):
        load_bytes(os.urandom(4096))


def test_flipped_bytes_never_crash(real_program):
    """Every single-byte corruption either loads (then it runs) or raises ValueError."""
    program, graph, inputs = real_program
    data = program.data
    rng = np.random.default_rng(11)
    positions = list(range(0, min(len(data), 600))) + list(rng.integers(0, len(data), 400))
    errors = 0
    for pos in positions:
        for value in (0x00, 0xFF, data[pos] ^ 0x01, data[pos] ^ 0x80):
            bad = bytearray(data)
            bad[pos] = value
            try:
                p = load_bytes(bad)
            except ValueError as e:
                assert str(e), pos
                errors += 1
                continue
            p.run(*inputs)  # a file the loader accepts is safe to run
    assert errors > 100


FLATC = shutil.which("flatc")
SCHEMA = os.path.join(os.path.dirname(__file__), "..", "..", "src", "program", "program.fbs")


def to_json(data, tmp_path):
    src = tmp_path / "p.cmpte"
    src.write_bytes(data)
    subprocess.run([FLATC, "--json", "--strict-json", "--raw-binary", "--size-prefixed", "--defaults-json", "-o", str(tmp_path),
                    SCHEMA, "--", str(src)], check=True)
    return json.loads((tmp_path / "p.json").read_text())


def from_json(doc, tmp_path):
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc))
    subprocess.run([FLATC, "-b", "--size-prefixed", "-o", str(tmp_path), SCHEMA, str(path)], check=True)
    return (tmp_path / "edited.cmpte").read_bytes() if (tmp_path / "edited.cmpte").exists() else \
        (tmp_path / "edited.bin").read_bytes()


def first_op(doc, kernel):
    return next(op for op in doc["ops"] if op["kernel"] == kernel)


def edit_tensor_offset(d):
    d["tensors"][d["inputs"][0]]["offset"] = d["arena_size"] + 16


def edit_constant_index(d):
    t = next(t for t in d["tensors"] if t.get("location") == "Constant")
    t["constant"] = 999


def edit_op_input(d):
    d["ops"][0]["inputs"][0] = len(d["tensors"]) + 5


def edit_kernel(d):
    d["ops"][0]["kernel"] = "QuantizedConv2d"


def edit_dim_order(d):
    t = next(t for t in d["tensors"] if len(t.get("dim_order", [])) == 4)
    t["dim_order"] = [0, 2, 2, 1]


def edit_negative_shape(d):
    d["tensors"][0]["shape"][0] = -3


def edit_schema_version(d):
    d["schema_version"] = 99


def edit_arena_size(d):
    d["arena_size"] = 8


def edit_qparams(d):
    t = next(t for t in d["tensors"] if "qparams" in t)
    t["qparams"]["scales"] = [0.0]


def edit_overlap(d):
    op = d["ops"][0]
    d["tensors"][op["outputs"][0]]["offset"] = d["tensors"][op["inputs"][0]]["offset"]


def edit_dtype(d):
    op = first_op(d, "Cat")
    d["tensors"][op["inputs"][0]]["dtype"] = "Int16"


def edit_cat_dim(d):
    first_op(d, "Cat")["params"]["dim"] = 7


def edit_bundled(d):
    d["bundled"][0]["inputs"][0]["data"] = d["bundled"][0]["inputs"][0]["data"][:-1]


def edit_io_index(d):
    d["outputs"][0] = -1


def edit_permute_dims(d):
    first_op(d, "Permute")["params"]["dims"] = [0, 1, 1, 3]


def edit_output_shape(d):
    op = first_op(d, "Cat")
    d["tensors"][op["outputs"][0]]["shape"][1] -= 1


def edit_multipliers(d):
    first_op(d, "QuantizedLinear")["params"]["multipliers"].pop()


def edit_shift(d):
    first_op(d, "QuantizedLinear")["params"]["shifts"][2] = 31


def edit_input_offset(d):
    first_op(d, "QuantizedLinear")["params"]["input_offset"] = 500


def edit_constant_segment(d):
    d["constants"][0]["offset"] = 8


def edit_constant_size(d):
    d["constants"][-1]["size"] = 10 ** 6


def edit_bias_dtype(d):
    op = first_op(d, "QuantizedLinear")
    d["tensors"][op["inputs"][2]]["shape"] = [16]  # the same 16 bytes, the wrong dtype
    d["tensors"][op["inputs"][2]]["dtype"] = "Int8"


EDITS = {
    edit_tensor_offset: r"tensors\[\d+\].*offset.*within the arena",
    edit_constant_index: r"constant",
    edit_op_input: r"ops\[0\].*inputs\[0\] = \d+: must index Program.tensors",
    edit_kernel: r"ops\[0\].*params_type",
    edit_dim_order: r"dim_order\[2\] = 2: must be a permutation",
    edit_negative_shape: r"tensors\[0\].*shape\[0\] = -3",
    edit_schema_version: r"schema_version = 99",
    edit_arena_size: r"offset.*within the arena",
    edit_qparams: r"qparams.scales\[0\]",
    edit_overlap: r"overlaps",
    edit_dtype: r"input.dtype|dtype",
    edit_cat_dim: r"params.dim = 7",
    edit_bundled: r"bundled\[0\].*inputs.data.size",
    edit_io_index: r"outputs\[0\].*tensor = -1",
    edit_permute_dims: r"params.dims\[2\] = 1: must be a permutation",
    edit_output_shape: r"output.shape\[1\] = 4: must be the sum along dim",
    edit_multipliers: r"ops\[\d+\] \('fc', QuantizedLinear\): params.(multipliers|shifts).size",
    edit_shift: r"'fc'.*shift.*= 31",
    edit_input_offset: r"'fc'.*input_offset = 500",
    edit_constant_segment: r"constants\[0\]: offset = 8: must be a multiple of 16",
    edit_constant_size: r"constants\[\d+\]: size = 1000000",
    edit_bias_dtype: r"'fc'.*bias",
}


@pytest.mark.skipif(FLATC is None, reason="flatc not installed")
@pytest.mark.parametrize("edit", list(EDITS), ids=[f.__name__ for f in EDITS])
def test_hand_edited_files_name_the_field(edit, real_program, tmp_path):
    doc = to_json(real_program[0].data, tmp_path)
    assert from_json(doc, tmp_path)  # the unedited round trip loads
    load_bytes(from_json(doc, tmp_path))
    edit(doc)
    with pytest.raises(ValueError, match=EDITS[edit]):
        load_bytes(from_json(doc, tmp_path))


# --- every zoo model ---------------------------------------------------------------------------

ZOO = ["deep_autoencoder", "ds_cnn", "mobilenet_v1_025", "mobilenet_v2_96", "mobilenet_v3_small_96",
       "resnet8", "silero_vad", "wav2letter", "yolo_style"]


@pytest.fixture(scope="module", params=ZOO)
def zoo(request):
    pytest.importorskip("torch")
    import zoo as zoo_cache

    _, example, _, _ = zoo_cache.exported(request.param)
    lowered = zoo_cache.lowered(request.param)
    inputs = [x.numpy() for x in example]
    return request.param, lowered, inputs


def test_zoo_program_equals_lowered_graph(zoo, tmp_path):
    name, lowered, inputs = zoo
    program = cortexm.to_program(lowered, bundle_inputs=tuple(inputs))
    assert_bit_exact(program, lowered, *inputs)
    assert program.memory_plan().arena_size == program.arena_size
    path = tmp_path / f"{name}.cmpte"
    program.save(path)
    loaded = cortexm.load_program(path)
    assert_bit_exact(loaded, lowered, *inputs)
    assert loaded.verify() == 1
    plan = loaded.memory_plan()
    assert plan.arena_size >= plan.lower_bound
    # Recorded, not asserted: how far the arena is above the lower bound, and which layout it is.
    print(f"{name}: arena {plan.arena_size} B, lower bound {plan.lower_bound} B, "
          f"{plan.arena_size - plan.lower_bound} B above it; layout: {program.layout}")
