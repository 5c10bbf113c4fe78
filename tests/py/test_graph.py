"""The graph IR from Python: builder API, editing, errors, graph files."""

import json
import os
import re
import subprocess
import sys
import zlib

import numpy as np
import pytest

import cortexm

CONV = {"stride": [1, 1], "padding": [1, 1], "dilation": [1, 1]}


def small_graph():
    rng = np.random.default_rng(0)
    g = cortexm.Graph()
    x = g.add_input("x", [1, 2, 5, 5])
    w = g.add_constant("w", rng.standard_normal((3, 2, 3, 3)).astype(np.float32))
    b = g.add_constant("b", rng.standard_normal(3).astype(np.float32))
    y = g.call("aten.convolution.default", [x, w, b], CONV)
    r = g.call("aten.hardtanh.default", [y], {"min_val": 0.0, "max_val": 6.0})
    g.outputs = [g.call("aten.view_copy.default", [r], {"size": [1, -1]})]
    return g


def test_builder_and_run_without_torch():
    g = small_graph()
    x = np.linspace(-2, 2, 50, dtype=np.float32).reshape(1, 2, 5, 5)
    out = g.run(x)
    assert out.shape == (1, 75) and out.dtype == np.float32
    w, b = g.value("w").data, g.value("b").data
    # Independent check of one output: channel 1 at (2, 2).
    patch = x[0, :, 1:4, 1:4]
    expected = np.clip((patch * w[1]).sum() + b[1], 0, 6)
    assert np.isclose(out[0, 1 * 25 + 2 * 5 + 2], expected, atol=1e-5)


def test_print_summary_and_counts():
    g = small_graph()
    text = str(g)
    assert "aten.convolution.default" in text and "float32[1, 3, 5, 5]" in text
    assert g.op_counts() == {"aten.convolution.default": 1, "aten.hardtanh.default": 1,
                             "aten.view_copy.default": 1}
    assert "3 nodes" in g.summary()


def test_values_and_nodes():
    g = small_graph()
    conv = g.nodes[0]
    assert conv.op == "aten.convolution.default"
    assert conv.attrs["groups"] == 1 and conv.attrs["transposed"] is False
    assert [v.name if v else None for v in conv.inputs] == ["x", "w", "b"]
    out = conv.outputs[0]
    assert out.shape == (1, 3, 5, 5) and out.dtype == "float32" and out.dim_order == (0, 1, 2, 3)
    assert out.producer == conv and [n.op for n in out.users] == ["aten.hardtanh.default"]
    assert g.value("x").kind == "input" and g.value("w").kind == "constant"
    out.qparams = {"scales": [0.5], "zero_points": [2]}
    assert out.qparams["scales"] == [0.5] and out.qparams["axis"] == -1


def test_editing_and_dead_code():
    g = small_graph()
    conv = g.nodes[0].outputs[0]
    relu = g.call("aten.relu.default", [conv], before=g.nodes[1])
    g.nodes[2].replace_input(0, relu)
    g.verify()
    assert [n.op for n in g.nodes][:2] == ["aten.convolution.default", "aten.relu.default"]
    g.call("aten.relu.default", [conv])  # unused
    assert g.dead_code_elimination() == 1
    g.verify()


def test_errors_name_op_node_and_attribute():
    g = small_graph()
    x = g.value("x")
    with pytest.raises(NotImplementedError, match="aten.erfinv.default"):
        g.call("aten.erfinv.default", [x])
    with pytest.raises(ValueError, match=r"node 'hard'.*unknown attribute 'low'"):
        g.call("aten.hardtanh.default", [x], {"low": 0.0}, name="hard")
    with pytest.raises(ValueError, match="missing attribute 'dilation'"):
        g.call("aten.convolution.default", [x, g.value("w")], {"stride": [1, 1], "padding": [0]})
    with pytest.raises(ValueError, match="expected"):
        g.call("aten.relu.default", [x, x])
    with pytest.raises(ValueError, match="cannot view"):
        g.call("aten.view_copy.default", [x], {"size": [7, -1]})
    with pytest.raises(ValueError, match="expects float32"):
        g.run(np.zeros((1, 2, 5, 5), np.int8))
    with pytest.raises(ValueError, match=r"input 0 \('x'\)"):
        g.run(np.zeros((1, 2, 5, 4), np.float32))



# Int arguments of the graph builder: ValueError naming the value, the argument and what was
# passed, never pybind's TypeError / RuntimeError or a crash.
GRAPH_INT_ERRORS = [
    (lambda g: g.add_input("x", [1.5, 3]), "input 'x' shape = [1.5, 3] must be a list of ints"),
    (lambda g: g.add_input("x", [True, 3]), "input 'x' shape = [True, 3] must be a list of ints"),
    (lambda g: g.add_input("x", 3), "input 'x' shape = 3 must be a list of ints"),
    (lambda g: g.add_input("x", [2**70]),
     "input 'x' shape[0] = 1180591620717411303424 does not fit in int64"),
    (lambda g: g.add_input("x", [-1, 3]), "input 'x' has a negative dim [-1, 3]"),
    (lambda g: g.add_input("x", [1, 3], dim_order=[0.5, 1]),
     "input 'x' dim_order = [0.5, 1] must be a list of ints"),
    (lambda g: g.add_input("x", [1, 3], dim_order=[5, 0]),
     "input 'x' dim_order [5, 0] is not a permutation of its 2 dims"),
    (lambda g: g.add_input("x", [1, 3], dim_order=[0]),
     "input 'x' dim_order [0] is not a permutation of its 2 dims"),
    (lambda g: g.add_constant("c", np.zeros((2, 3), np.float32), dim_order=[1, 1]),
     "constant 'c' dim_order [1, 1] is not a permutation of its 2 dims"),
    (lambda g: setattr(g.add_input("x", [1, 3]), "dim_order", [0, 0]),
     "value 'x' dim_order [0, 0] is not a permutation of its 2 dims"),
    (lambda g: g.add_input("x", [1, 3], "int8", qparams=dict(scales=[0.1], zero_points=[1.5])),
     "qparams zero_points = [1.5] must be a list of ints"),
    (lambda g: g.add_input("x", [1, 3], "int8", qparams=dict(scales=[0.1], zero_points=[2**70])),
     "qparams zero_points[0] = 1180591620717411303424 does not fit in int64"),
    (lambda g: g.add_input("x", [1, 3], "int8", qparams=dict(scales=0.1, zero_points=0, axis=1.0)),
     "qparams axis = 1.0 must be an int"),
    (lambda g: g.add_input("x", [1, 3], "int8",
                           qparams=dict(scales=0.1, zero_points=0, quant_min="-128")),
     "qparams quant_min = '-128' must be an int"),
    (lambda g: g.call("aten.view_copy.default", [g.add_input("x", [1, 3])], {"size": [2**70]}),
     "attribute 'size'[0] = 1180591620717411303424 does not fit in int64"),
    (lambda g: g.call("aten.view_copy.default", [g.add_input("x", [1, 3])], {"size": 2**70}),
     "attribute 'size' = 1180591620717411303424 does not fit in int64"),
]


@pytest.mark.parametrize("build, message", GRAPH_INT_ERRORS, ids=[m for _, m in GRAPH_INT_ERRORS])
def test_graph_int_arguments_raise_value_error_naming_the_argument(build, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        build(cortexm.Graph())


def test_graph_int_arguments_accept_numpy_integers():
    g = cortexm.Graph()
    x = g.add_input("x", np.array([1, 3]), "int8", dim_order=(np.int64(1), np.int32(0)),
                    qparams=dict(scales=[0.1], zero_points=[np.int8(3)], axis=np.int64(-1)))
    assert x.shape == (1, 3) and x.dim_order == (1, 0) and x.qparams["zero_points"] == [3]


@pytest.mark.parametrize("index, message", [
    (-1, "node 'r' replace_input index = -1 must be >= 0"),
    (1.0, "node 'r' replace_input index = 1.0 must be an int"),
    (5, "node 'r' has no input 5"),
])
def test_replace_input_index_errors(index, message):
    g = cortexm.Graph()
    x = g.add_input("x", [1, 3])
    g.call("aten.relu.default", [x], name="r")
    node = next(n for n in g.nodes if n.name == "r")
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        node.replace_input(index, x)

def test_observe_sees_every_node():
    g = small_graph()
    seen = []
    g.run(np.ones((1, 2, 5, 5), np.float32), observe=lambda node, outs: seen.append((node.op, outs[0].shape)))
    assert seen == [("aten.convolution.default", (1, 3, 5, 5)), ("aten.hardtanh.default", (1, 3, 5, 5)),
                    ("aten.view_copy.default", (1, 75))]


def test_save_load_round_trip(tmp_path):
    g = small_graph()
    g.value("w").qparams = {"scales": [0.1, 0.2, 0.3], "zero_points": [0, 0, 0], "axis": 0}
    path = tmp_path / "g.cmg"
    g.save(path)
    back = cortexm.Graph.load(path)
    x = np.random.default_rng(1).standard_normal((1, 2, 5, 5)).astype(np.float32)
    assert np.array_equal(back.run(x), g.run(x))
    assert str(back) == str(g) and back.to_bytes() == g.to_bytes()
    assert back.value("w").qparams["scales"] == [0.1, 0.2, 0.3]
    assert [p for p in os.listdir(tmp_path)] == ["g.cmg"]  # no temporary left behind


def test_damaged_and_edited_files(tmp_path):
    data = small_graph().to_bytes()
    corpus = {
        "truncated": data[: len(data) // 2],
        "empty": b"",
        "not a graph": b"hello world, not a graph at all",
        "flipped blob byte": data[:-30] + bytes([data[-30] ^ 1]) + data[-29:],
        "unknown op": data.replace(b"aten.hardtanh.default", b"aten.hardtanx.default"),
        "bad dtype": data.replace(b'"float32"', b'"float31"', 1),
        "bad json": data.replace(b'"nodes"', b'"nodes" ', 1)[: len(data)],
    }
    for what, bytes_ in corpus.items():
        with pytest.raises(ValueError):
            cortexm.Graph.from_bytes(bytes_)
        p = tmp_path / (what.replace(" ", "_") + ".cmg")
        p.write_bytes(bytes_)
        with pytest.raises(ValueError, match=str(p)):
            cortexm.Graph.load(p)
    with pytest.raises(FileNotFoundError, match="cannot read"):
        cortexm.Graph.load(tmp_path / "missing.cmg")


def rewrite_graph_file(data, edit):
    """A well-formed graph file (header length, padding and blob checksum recomputed) whose JSON
    header and blob are edit(header, blob)'s: the reader must catch what the edit breaks."""
    header_len = int.from_bytes(data[12:20], "little")
    header = json.loads(data[20:20 + header_len])
    blob = data[(20 + header_len + 63) // 64 * 64:-4]
    header, blob = edit(header, blob)
    text = json.dumps(header).encode()
    out = data[:12] + len(text).to_bytes(8, "little") + text
    out += bytes(-len(out) % 64) + blob
    return out + zlib.crc32(blob).to_bytes(4, "little")


def value_entry(header, name):
    return next(v for v in header["values"] if v["name"] == name)


def set_field(name, key, value):
    def edit(header, blob):
        value_entry(header, name)[key] = value
        return header, blob
    return edit


def set_conv_stride(stride):
    def edit(header, blob):
        header["nodes"][0]["attrs"]["stride"] = {"ints": stride}
        return header, blob
    return edit


def set_qparams(key, value):
    def edit(header, blob):
        value_entry(header, "w")["qparams"] = {"scales": [0.5], "zero_points": [0], "axis": -1, "quant_min": -128,
                                               "quant_max": 127, key: value}
        return header, blob
    return edit


def constant_claiming(shape, dtype="float32"):
    """Constant "b" claims `shape` (and the matching nbytes); the blob stays as it is (268 bytes)."""
    def edit(header, blob):
        b = value_entry(header, "b")
        b.update(shape=shape, dtype=dtype)
        b["nbytes"] = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
        return header, blob
    return edit


BAD_GRAPH_FILES = {
    "float dim": (set_field("x", "shape", [1, 2.7, 5, 5]), r"values\[0\]\.shape\[1\]: must be an integer, got 2\.7"),
    "integral float dim": (set_field("x", "shape", [1, 2.0, 5, 5]), r"values\[0\]\.shape\[1\]: must be an integer, got 2\.0"),
    "huge float dim": (set_field("x", "shape", [1, 1e300, 5, 5]), r"values\[0\]\.shape\[1\]: must be an integer, got 1e\+300"),
    "float offset": (set_field("w", "offset", 0.5), r"values\[1\]\.offset: must be an integer, got 0\.5"),
    "negative nbytes": (set_field("w", "nbytes", -8), r"values\[1\]\.nbytes: -8 must not be negative"),
    "float attr": (set_conv_stride([1.5, 1]), r"nodes\[0\]\.attrs\.stride\[0\]: must be an integer, got 1\.5"),
    "float axis": (set_qparams("axis", -1.0), r"values\[1\]\.qparams\.axis: must be an integer, got -1\.0"),
    "zero point above int64": (set_qparams("zero_points", [2 ** 63]),
                               r"values\[1\]\.qparams\.zero_points\[0\]: 9223372036854775808 is out of range"),
    "more than 2^63 elements": (constant_claiming([2 ** 61, 8], "int8"),
                                r"values\[2\]\.shape: tensor shape \[2305843009213693952, 8\] has more than 2\^63 elements"),
    "more than 2^63 bytes": (constant_claiming([2 ** 62], "float32"),
                             r"values\[2\]\.shape: tensor float32\[4611686018427387904\] has more than 2\^63 bytes"),
    "4 TiB constant": (constant_claiming([2 ** 40]),
                       r"values\[2\]: constant 'b' data \[256, \+4398046511104\) lies outside the blob of 268 bytes"),
}


@pytest.mark.parametrize("name", list(BAD_GRAPH_FILES))
def test_bad_graph_files_name_the_field(name, tmp_path):
    edit, pattern = BAD_GRAPH_FILES[name]
    data = rewrite_graph_file(small_graph().to_bytes(), edit)
    with pytest.raises(ValueError, match=pattern):
        cortexm.Graph.from_bytes(data)
    path = tmp_path / "bad.cmg"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=re.escape(str(path)) + ": " + pattern):
        cortexm.Graph.load(path)


def test_rewritten_graph_file_loads_unchanged():
    data = small_graph().to_bytes()
    assert cortexm.Graph.from_bytes(rewrite_graph_file(data, lambda h, b: (h, b))).to_bytes() == data


def test_constant_size_is_checked_before_allocating(tmp_path):
    """A 2 KB file whose constant claims 1 GiB fails without allocating it: the load runs with 256 MB
    of address space to spare."""
    data = rewrite_graph_file(small_graph().to_bytes(), constant_claiming([2 ** 28]))
    assert len(data) < 4096
    path = tmp_path / "claims_1gib.cmg"
    path.write_bytes(data)
    script = f"""
import resource, cortexm
vm = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize:")).split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + (256 << 20), resource.RLIM_INFINITY))
try:
    cortexm.Graph.load({str(path)!r})
except ValueError as e:
    print(e)
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "constant 'b' data [256, +1073741824) lies outside the blob of 268 bytes" in out.stdout


def test_registered_ops_include_the_basics():
    names = cortexm.registered_ops()
    for op in ["aten.convolution.default", "quantized_decomposed.quantize_per_tensor.default",
               "cortex_m.quantize_per_tensor.default"]:
        assert op in names


def test_op_info_reads_the_registry():
    view = cortexm._core.op_info("aten.view_copy.default")
    assert view.name == "aten.view_copy.default"
    assert [i.name for i in view.inputs] == ["self"]
    assert [(a.name, a.kind, a.required) for a in view.attrs] == [("size", "int list", True)]
    assert view.is_view and view.is_data_movement
    conv = cortexm._core.op_info("aten.convolution.default")
    assert conv.inputs[2].optional  # the bias
    assert not conv.is_view and not conv.is_data_movement
    with pytest.raises(NotImplementedError, match="aten.no_such_op.default"):
        cortexm._core.op_info("aten.no_such_op.default")


def test_data_movement_is_the_registry_flag():
    from cortexm.aot import DATA_MOVEMENT

    flagged = {n for n in cortexm.registered_ops() if cortexm._core.op_info(n).is_data_movement}
    assert DATA_MOVEMENT == flagged
    assert {"aten.view_copy.default", "aten.cat.default", "dim_order_ops._clone_dim_order.default"} <= DATA_MOVEMENT
    assert "aten.relu.default" not in DATA_MOVEMENT
