import numpy as np
import pytest

import cortexm
from cortexm.passes import CortexMPassManager


def test_target_config_cpus_and_isas():
    t = cortexm.CortexMTargetConfig("cortex-m55")
    assert (t.cpu, t.isa) == ("cortex-m55", "MVE")
    assert cortexm.CortexMTargetConfig("m4").isa == "DSP"
    assert cortexm.CortexMTargetConfig("cortex-m0plus").isa == "SCALAR"
    assert cortexm.CortexMTargetConfig("cortex-m55", isa="DSP").isa == "DSP"
    assert cortexm.CortexMTargetConfig.from_string("cortex-m4+int8") == cortexm.CortexMTargetConfig("cortex-m4")
    assert cortexm.CortexMTargetConfig.from_string("cortex-m55+int8+scalar").isa == "SCALAR"
    for cpu in ["m0", "m0plus", "m3", "m4", "m7", "m23", "m33", "m35p", "m55", "m85"]:
        cortexm.CortexMTargetConfig(cpu)
    with pytest.raises(ValueError, match="isa 'MVE' is not available on cortex-m4"):
        cortexm.CortexMTargetConfig("cortex-m4", isa="MVE")
    with pytest.raises(ValueError, match="isa 'DSP' is not available on cortex-m0plus"):
        cortexm.CortexMTargetConfig("cortex-m0plus", isa="DSP")
    with pytest.raises(ValueError, match="not a supported Cortex-M core"):
        cortexm.CortexMTargetConfig("cortex-a53")
    with pytest.raises(ValueError, match=r"\+int8"):
        cortexm.CortexMTargetConfig.from_string("cortex-m55")


def pool_graph():
    g = cortexm.Graph()
    x = g.add_input("x", [1, 3, 8, 6])
    p = g.call("aten.adaptive_avg_pool2d.default", [x], {"output_size": [2, 3]})
    v = g.call("aten.view_copy.default", [p], {"size": [1, 3, 2, 3]})
    g.outputs = [v]
    return g


def test_passes_keep_outputs_and_simplify(tmp_path):
    g = pool_graph()
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 6)).astype(np.float32)
    before = g.run(x)
    pm = CortexMPassManager(g, "cortex-m55+int8")
    pm.run(intermediates=tmp_path)
    assert g.op_counts() == {"aten.avg_pool2d.default": 1}
    np.testing.assert_allclose(g.run(x), before, rtol=1e-6, atol=1e-6)
    files = sorted(p.name for p in tmp_path.iterdir())
    decompose = f"{pm.passes.index('DecomposeAdaptiveAvgPool2d'):02d}_DecomposeAdaptiveAvgPool2d.cmg"
    assert decompose in files and len(files) == 2 * len(pm.passes)
    assert cortexm.Graph.load(tmp_path / decompose).op_counts()["aten.avg_pool2d.default"] == 1


def test_python_passes_and_skips():
    g = pool_graph()
    seen = []

    def count_nodes(graph, target):
        seen.append((len(graph.nodes), target.cpu))
        return False

    pm = CortexMPassManager(g, cortexm.CortexMTargetConfig("cortex-m4"),
                            passes=["RemoveNoopViewCopy", count_nodes, "DecomposeAdaptiveAvgPool2d"],
                            skip_passes=["DecomposeAdaptiveAvgPool2d"])
    pm.run()
    assert seen == [(1, "cortex-m4")]
    assert pm.changed == {"RemoveNoopViewCopy": True, "count_nodes": False}
    with pytest.raises(ValueError, match="unknown pass 'Nope'"):
        CortexMPassManager(g, passes=["Nope"])
    with pytest.raises(ValueError, match="skip_passes"):
        CortexMPassManager(g, skip_passes=["Nope"])


QDQ = "quantized_decomposed.quantize_per_tensor.default", "quantized_decomposed.dequantize_per_tensor.default"


def quantized_conv_graph():
    """x -> Q -> DQ -> conv(DQ w per-channel, DQ b int32) -> relu -> Q -> DQ, then a gelu the
    quantizer left float (its input dequantized, no Q after it)."""
    g = cortexm.Graph()
    x = g.add_input("x", [1, 2, 5, 5])

    def qdq(v, scale, zp):
        attrs = {"scale": scale, "zero_point": zp, "quant_min": -128, "quant_max": 127, "dtype": "int8"}
        return g.call(QDQ[1], [g.call(QDQ[0], [v], attrs)], attrs)

    w_scales = [0.01, 0.02, 0.015]
    rng = np.random.default_rng(1)
    w = g.add_constant("w", rng.integers(-127, 128, (3, 2, 3, 3)).astype(np.int8))
    b = g.add_constant("b", rng.integers(-3000, 3000, 3).astype(np.int32))
    w_dq = g.call("quantized_decomposed.dequantize_per_channel.default", [w],
                  {"scales": w_scales, "zero_points": [0] * 3, "axis": 0, "quant_min": -127,
                   "quant_max": 127, "dtype": "int8"})
    b_dq = g.call("quantized_decomposed.dequantize_per_channel.default", [b],
                  {"scales": [0.02 * s for s in w_scales], "zero_points": [0] * 3, "axis": 0,
                   "quant_min": -2**31, "quant_max": 2**31 - 1, "dtype": "int32"})
    conv = g.call("aten.convolution.default", [qdq(x, 0.02, 3), w_dq, b_dq],
                  {"stride": [1, 1], "padding": [1, 1], "dilation": [1, 1]})
    relu = g.call("aten.relu.default", [conv])
    g.outputs = [qdq(relu, 0.02, -128), g.call("aten.gelu.default", [qdq(relu, 0.02, -128)])]
    return g


def test_fold_replace_unfold_keep_outputs():
    g = quantized_conv_graph()
    x = np.random.default_rng(2).uniform(-2, 2, (1, 2, 5, 5)).astype(np.float32)
    before = g.run(x)
    pm = CortexMPassManager(g, "cortex-m55+int8",
                            passes=["FoldAndAnnotateQParams", "ReplaceQuantNodes", "UnfoldFloatOps"])
    pm.run()
    assert pm.changed == {"FoldAndAnnotateQParams": True, "ReplaceQuantNodes": True, "UnfoldFloatOps": True}
    after = g.run(x)
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    counts = g.op_counts()
    assert not any(op.startswith("quantized_decomposed.") for op in counts), counts
    assert counts["cortex_m.quantize_per_tensor.default"] >= 1
    conv = next(n for n in g.nodes if n.op == "aten.convolution.default")
    assert conv.meta["lowering"] == "float: not lowered"
    assert conv.meta["input_qparams"].startswith("0: int8 q(0.02, 3); 1: int8 q(axis 0, 3 scales)")
    assert [v.dtype for v in conv.inputs] == ["float32"] * 3 and conv.inputs[1].kind == "constant"


def test_default_pass_list_is_the_cpp_order():
    order = list(CortexMPassManager.pass_list)
    assert order == cortexm._core.default_passes()
    assert set(order) == set(cortexm.pass_names())  # every pass runs by default
    assert order[0] == "FoldAndAnnotateQParams" and order[-1] == "AnnotateScratch"
    assert order.count("FoldInverseDimOrderClone") == 2  # again after SinkDimOrderClones
    assert order.index("SinkDimOrderClones") < len(order) - 1 - order[::-1].index("FoldInverseDimOrderClone")
