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
    assert files[0] == "00_DecomposeAdaptiveAvgPool2d.cmg" and len(files) == 2 * len(pm.passes)
    assert cortexm.Graph.load(tmp_path / files[0]).op_counts()["aten.avg_pool2d.default"] == 1


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
