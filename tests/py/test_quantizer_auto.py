"""precision="auto" (quantizer/auto.py): int16 only for the activation groups that need it.

An int8-friendly model (ds_cnn) stays all int8; a front end whose input spans ~50 dB of level gets
its int16 groups and no others, lowered onto cortex_m kernels with no float compute op; a recurrent
cell's declared state (state_feedback) keeps its best reach, with int16 weights on 16x16 kernels;
silero_vad (CORTEXM_SLOW=1: 256 calibration steps for GPTQ) meets |p - p_float| <= 0.02 on 64
steps and on real speech streamed with a strict subset of its groups in int16; a graph with two
outputs keeps each within the tolerance.
"""

import os
import shutil

import numpy as np
import pytest

import cortexm
from cortexm.aot import DATA_MOVEMENT

torch = pytest.importorskip("torch")
nn = torch.nn

Q = "quantized_decomposed.quantize_per_tensor.default"


def int16_values(qgraph) -> set:
    return {n.inputs[0].name for n in qgraph.nodes if n.op == Q and n.attrs["dtype"] == "int16"}


def float_compute_ops(lowered) -> list:
    return [n.op for n in lowered.nodes if n.op.startswith("aten.") and n.op not in DATA_MOVEMENT]


def test_ds_cnn_stays_all_int8():
    import zoo

    _, _, calibration, graph = zoo.exported("ds_cnn")
    qgraph = cortexm.quantize(graph, calibration(8), precision="auto", progress=False)
    choice = cortexm.quantization_report(qgraph).precision
    print(choice)
    assert choice.promoted == [] and not int16_values(qgraph)
    assert choice.summary["score"] >= choice.summary["target"]
    plain = cortexm.quantize(graph, calibration(8), progress=False)
    x = [t.numpy() for t in next(iter(calibration(1, seed=1)))]
    np.testing.assert_array_equal(qgraph.run(*x), plain.run(*x))  # the same graph as precision="int8"


class FrontEnd(nn.Module):
    """A waveform at levels int8 cannot hold together (50 dB apart) -> conv -> relu -> conv."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Conv1d(1, 8, 16, stride=8)
        self.tail = nn.Conv1d(8, 4, 3)

    def forward(self, x):
        return self.tail(torch.relu(self.enc(x.unsqueeze(1))))


def front_end_samples(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(2, 160, generator=g) * 10.0 ** (-(i % 6) / 2),) for i in range(n)]


# int8 reaches 38 dB on these samples, 16x8 51 dB, 16x8 with one of its 3 groups int8 ~41 dB.
TARGET_DB, TOLERANCE_DB = 40.0, 10.0


@pytest.fixture(scope="module")
def front_end():
    torch.manual_seed(0)
    module = FrontEnd().eval()
    graph = cortexm.export(module, front_end_samples(1, 1)[0])
    auto = cortexm.CortexMQuantizer(precision="auto", target_sqnr_db=TARGET_DB, min_gain_db=6.0,
                                    tolerance_db=TOLERANCE_DB)
    return graph, cortexm.quantize(graph, front_end_samples(12, 2), auto, progress=False)


def test_front_end_promotes_a_strict_subset_and_meets_the_target(front_end):
    graph, qgraph = front_end
    choice = cortexm.quantization_report(qgraph).precision
    print(choice)
    s = choice.summary
    assert s["int8"] < s["target"]  # int8 is not good enough
    (aim,) = s["aim"]  # one output
    assert s["score"] >= aim == pytest.approx(s["all_16x8"] - TOLERANCE_DB)
    assert 0 < len(choice.promoted) < s["groups"]
    assert set(s["int16"]) == set(choice.promoted)
    quantized = {n.inputs[0].name for n in qgraph.nodes if n.op == Q}
    assert int16_values(qgraph) and int16_values(qgraph) < quantized
    assert s["arena"]["int8"] <= s["arena"]["auto"] <= s["arena"]["16x8"]
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    assert not float_compute_ops(lowered), lowered.op_counts()
    assert any(op.endswith("_s16.default") for op in lowered.op_counts())


def test_a_model_16x8_would_not_improve_enough_stays_int8():
    """The same front end asking for a gain of 15 dB: 16x8 everywhere gains ~13 dB."""
    torch.manual_seed(0)
    graph = cortexm.export(FrontEnd().eval(), front_end_samples(1, 1)[0])
    auto = cortexm.CortexMQuantizer(precision="auto", target_sqnr_db=TARGET_DB, min_gain_db=15.0)
    qgraph = cortexm.quantize(graph, front_end_samples(12, 2), auto, progress=False)
    choice = cortexm.quantization_report(qgraph).precision
    assert choice.promoted == [] and not int16_values(qgraph)
    assert choice.summary["score"] < choice.summary["target"] and "min_gain_db" in choice.summary["reason"]


def test_each_promoted_group_is_needed(front_end):
    """Demoting any promoted group alone misses the aim (auto's last step tries exactly that)."""
    graph, qgraph = front_end
    s = cortexm.quantization_report(qgraph).precision.summary
    for root in s["promoted"]:
        if s["promoted"][root] is None:
            continue
        fewer = cortexm.CortexMQuantizer(int16_activations=set(s["int16"]) - {root})
        q = cortexm.quantize(graph, front_end_samples(12, 2), fewer, progress=False)
        ref = [graph.run(*[t.numpy() for t in x]) for x in front_end_samples(12, 2)]
        out = [q.run(*[t.numpy() for t in x]) for x in front_end_samples(12, 2)]
        sqnr = cortexm.quantizer.auto.output_sqnr_db([[r] for r in ref], [[o] for o in out])
        (aim,) = s["aim"]  # one output
        assert sqnr < aim + 1.0, (root, sqnr)


class TwoOutputs(FrontEnd):
    """The front end, and a side linear of the waveform whose int8 weights (one tap 30x the others)
    cap its SQNR near 33 dB in any activation precision: the lowest output, whatever the front
    end's groups are."""

    def __init__(self):
        super().__init__()
        self.side = nn.Linear(160, 1)
        with torch.no_grad():
            w = torch.randn(1, 160)
            w[0, 0] = 30.0
            self.side.weight.copy_(w)

    def forward(self, x):
        return super().forward(x), self.side(x)


def test_every_output_stays_within_the_tolerance():
    """Measured: 16x8 reaches 49.8 dB on the front end and 32.8 on the side; relu alone in int8
    costs the front end 9.6 dB. Scored by the lowest output (the side), that loss was unseen and
    relu went back to int8."""
    torch.manual_seed(0)
    graph = cortexm.export(TwoOutputs().eval(), front_end_samples(1, 1)[0])
    auto = cortexm.CortexMQuantizer(precision="auto", target_sqnr_db=40.0, min_gain_db=6.0, tolerance_db=3.0)
    qgraph = cortexm.quantize(graph, front_end_samples(12, 2), auto, progress=False)
    choice = cortexm.quantization_report(qgraph).precision
    print(choice)
    s = choice.summary
    assert 0 < len(s["int16"]) < s["groups"]
    assert {"relu", "convolution_1"} <= set(s["int16"])
    # Per group, why: the aim, each promoted group's loss alone in int8 and each kept one's.
    text = str(choice)
    assert "aim per output: " in text and "int16 relu: alone in int8 loses" in text
    assert s["kept"] and all(f"int8 {root}: alone in int8 loses {loss:.2f} dB; the aim holds without it" in text
                             for root, loss in s["kept"].items())
    samples = [[t.numpy() for t in x] for x in front_end_samples(12, 2)]
    sqnrs = cortexm.quantizer.auto.output_sqnrs_db([graph.run(*x) for x in samples], [qgraph.run(*x) for x in samples])
    assert sqnrs == pytest.approx(s["outputs"])
    assert sqnrs[1] < sqnrs[0]  # the side is the lowest output
    for got, best in zip(sqnrs, s["all_16x8_outputs"]):
        assert got >= best - 3.0


def test_metric_callback_sets_the_target():
    torch.manual_seed(0)
    graph = cortexm.export(FrontEnd().eval(), front_end_samples(1, 1)[0])
    held_out = [t.numpy() for (t,) in front_end_samples(6, 7)]
    want = [graph.run(x) for x in held_out]

    def worst_relative_error(qgraph):
        return -max(float(np.abs(qgraph.run(x) - w).max() / np.abs(w).max()) for x, w in zip(held_out, want))

    loose = cortexm.CortexMQuantizer(precision="auto", metric=worst_relative_error, metric_target=-10.0)
    assert cortexm.quantization_report(cortexm.quantize(graph, front_end_samples(12, 2), loose, progress=False)
                                       ).precision.promoted == []
    tight = cortexm.CortexMQuantizer(precision="auto", metric=worst_relative_error, metric_target=-0.2)
    qgraph = cortexm.quantize(graph, front_end_samples(12, 2), tight, progress=False)
    choice = cortexm.quantization_report(qgraph).precision
    assert choice.promoted and worst_relative_error(qgraph) >= -0.2, str(choice)


@pytest.mark.parametrize("score", [float("nan"), float("inf"), "good"])
def test_a_metric_that_is_not_a_finite_number_is_refused(score):
    g = cortexm.Graph()
    x = g.add_input("x", [2, 8])
    g.outputs = [g.call("aten.linear.default", [x, g.add_constant("w", np.ones((4, 8), np.float32))])]
    auto = cortexm.CortexMQuantizer(precision="auto", metric=lambda qgraph: score, metric_target=0.0)
    with pytest.raises(ValueError, match=f"metric returned {score!r} for a quantized graph: it must return a finite"):
        cortexm.quantize(g, [np.ones((2, 8), np.float32)] * 2, auto, progress=False)


def test_explicit_precisions_are_today_s_settings():
    torch.manual_seed(0)
    graph = cortexm.export(FrontEnd().eval(), front_end_samples(1, 1)[0])
    x = front_end_samples(1, 3)[0][0].numpy()
    for precision, options in (("int8", {}), ("16x8", {"activation_dtype": "int16"})):
        a = cortexm.quantize(graph, front_end_samples(4, 2), precision=precision, progress=False)
        b = cortexm.quantize(graph, front_end_samples(4, 2), cortexm.CortexMQuantizer(**options), progress=False)
        np.testing.assert_array_equal(a.run(x), b.run(x))
        assert cortexm.quantization_report(a).precision is None


class Cell(nn.Module):
    """A recurrent cell and its readout: (x, h) -> (readout, new h); h is fed back."""

    def __init__(self):
        super().__init__()
        self.inp, self.rec, self.out = nn.Linear(16, 24), nn.Linear(24, 24), nn.Linear(24, 3)
        with torch.no_grad():
            self.inp.weight[:, 0] *= 20.0  # one input column dominates: int8 weights lose the rest

    def forward(self, x, h):
        h = torch.tanh(self.inp(x) + self.rec(h))
        return self.out(h), h


def cell_steps(cell, n, seed):
    """n consecutive steps of one stream: (x, h) with h the float cell's state after the steps before."""
    g = torch.Generator().manual_seed(seed)
    h, steps = torch.zeros(1, 24), []
    with torch.no_grad():
        for i in range(n):
            x = torch.randn(1, 16, generator=g) * 10.0 ** (-(i % 4) / 2)
            steps.append((x, h))
            h = cell(x, h)[1]
    return steps


@pytest.fixture(scope="module")
def cell_choices():
    torch.manual_seed(0)
    cell = Cell().eval()
    graph = cortexm.export(cell, cell_steps(cell, 1, 1)[0])
    choices = {}
    for feedback in ({}, {1: 1}):
        auto = cortexm.CortexMQuantizer(precision="auto", target_sqnr_db=60.0, min_gain_db=3.0, state_feedback=feedback)
        qgraph = cortexm.quantize(graph, cell_steps(cell, 64, 2), auto, progress=False)
        choices[bool(feedback)] = qgraph
    return graph, choices


def test_state_feedback_keeps_the_state_at_its_best_reach(cell_choices):
    """With the state declared, output 1 keeps the SQNR of all int16 with int16 weights (what
    feeds it stays there); the readout (output 0) is held to all-16x8's, as without it."""
    graph, choices = cell_choices
    s = cortexm.quantization_report(choices[True]).precision.summary
    print(cortexm.quantization_report(choices[True]).precision)
    best = s.get("all_16x16_outputs", s["all_16x8_outputs"])
    assert s["outputs"][1] >= best[1]
    assert s["outputs"][0] >= min(best[0], s["all_16x8_outputs"][0]) - 0.5
    assert "fed-back state (output 1)" in s["reason"]
    free = cortexm.quantization_report(choices[False]).precision.summary
    assert free["outputs"][1] < s["outputs"][1]
    cost = lambda summary: len(summary["int16"]) + len(summary["int16_weights"])
    assert cost(free) < cost(s)


def test_int16_weights_lower_onto_16x16_kernels(cell_choices):
    graph, choices = cell_choices
    qgraph = choices[True]
    s = cortexm.quantization_report(qgraph).precision.summary
    assert "all_16x16" in s and s["all_16x16"] > s["all_16x8"]  # int8 weights limited this cell
    assert s["int16_weights"], str(cortexm.quantization_report(qgraph).precision)
    report = cortexm.quantization_report(qgraph)
    reads_int16_weight = {r.node for r in report if any(q and q.get("dtype") == "int16" and "scales" in q for q in r.inputs)}
    assert reads_int16_weight and {report[n].kind for n in reads_int16_weight} == {"16x16"}
    assert " 16x16, " in report.summary().splitlines()[0]
    lowered = cortexm.lower(qgraph, "cortex-m55+int8")
    assert not float_compute_ops(lowered), lowered.op_counts()
    assert any("s16w16" in op for op in lowered.op_counts()), lowered.op_counts()
    assert "16x16" in {r.kind for r in cortexm.quantization_report(lowered)}
    x, h = (t.numpy() for t in cell_steps(Cell(), 1, 9)[0])
    for got, want in zip(lowered.run(x, h), qgraph.run(x, h)):
        np.testing.assert_allclose(got, want, atol=4 * float(np.abs(want).max()) / 32767)


@pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-g++")),
                    reason="needs qemu-system-arm and arm-none-eabi-g++ (scripts/setup.sh installs them)")
def test_auto_reports_the_instructions_of_each_choice_on_qemu():
    torch.manual_seed(0)
    cell = Cell().eval()
    graph = cortexm.export(cell, cell_steps(cell, 1, 1)[0])
    auto = cortexm.CortexMQuantizer(precision="auto", target_sqnr_db=60.0, min_gain_db=3.0, state_feedback={1: 1},
                                    count_instructions=True)
    qgraph = cortexm.quantize(graph, cell_steps(cell, 64, 2), auto, progress=False)
    choice = cortexm.quantization_report(qgraph).precision
    counts = choice.summary["instructions"]
    assert set(counts) == {"int8", "auto", "16x8"} and all(n > 0 for n in counts.values()), counts
    assert counts["int8"] != counts["16x8"]  # different kernels
    assert f"instructions (cortex-m55, QEMU, one sample): int8 {counts['int8']}, auto {counts['auto']}" in str(choice)


def test_state_feedback_must_fit_the_graph():
    torch.manual_seed(0)
    cell = Cell().eval()
    graph = cortexm.export(cell, cell_steps(cell, 1, 1)[0])
    for feedback, message in (({2: 1}, "the graph has 2 outputs and 2 inputs"),
                              ({0: 1}, r"output '.*' has shape \[1, 3\], input '.*' \[1, 24\]")):
        auto = cortexm.CortexMQuantizer(precision="auto", state_feedback=feedback)
        with pytest.raises(ValueError, match=message):
            cortexm.quantize(graph, cell_steps(cell, 4, 2), auto, progress=False)


def test_zoo_state_feedback():
    assert cortexm.models.state_feedback("silero_vad") == {1: 1}
    assert cortexm.models.state_feedback("ds_cnn") == {}
    with pytest.raises(ValueError, match="unknown model"):
        cortexm.models.state_feedback("nope")


@pytest.mark.parametrize("kwargs,message", [
    ({"precision": "auto", "state_feedback": {"1": 1}}, "state_feedback maps output indices"),
    ({"precision": "auto", "state_feedback": {1: -1}}, "state_feedback maps output indices"),
    ({"precision": "auto", "state_feedback": {True: 0}}, "state_feedback maps output indices"),
    ({"precision": "auto", "state_feedback": {0: False}}, "state_feedback maps output indices"),
    ({"precision": "auto", "evaluation": []}, r"evaluation=\[\] holds no sample"),
    ({"precision": "auto", "evaluation": iter([])}, r"evaluation=\[\] holds no sample"),
    ({"precision": "auto", "metric": len, "metric_target": float("nan")}, "metric_target must be a finite number"),
    ({"precision": "fp8"}, "precision must be one of"),
    ({"precision": "16x8", "activation_dtype": "int8"}, "conflicts with activation_dtype"),
    ({"precision": "auto", "weight_rounding": "gptq"}, "chooses int16_activations, int16_weights and weight_rounding"),
    ({"precision": "auto", "int16_weights": ["w"]}, "chooses int16_activations, int16_weights"),
    ({"precision": "auto", "metric": len}, "metric needs metric_target"),
    ({"precision": "auto", "target_sqnr_db": float("nan")}, "must be finite"),
    ({"precision": "auto", "tolerance_db": -1.0}, "tolerance_db >= 0"),
])
def test_bad_precision_options_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        cortexm.CortexMQuantizer(**kwargs)


def test_quantize_refuses_a_precision_its_quantizer_does_not_have():
    with pytest.raises(ValueError, match="quantizer's precision is 'int8'"):
        cortexm.quantize(cortexm.Graph(), [], cortexm.CortexMQuantizer(), precision="auto")


def test_aot_precision_flag(tmp_path, capsys):
    from cortexm import aot

    factory = tmp_path / "tiny.py"
    factory.write_text("import torch\n"
                       "def make():\n"
                       "    torch.manual_seed(0)\n"
                       "    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU()).eval()\n"
                       "    return model, (torch.randn(1, 8),), lambda n: [(torch.randn(1, 8),) for _ in range(n)]\n")
    out, model = tmp_path / "tiny.cmpte", f"{factory}:make"
    assert aot.main(["--model", model, "--quantize", "--precision", "auto", "--output", str(out)]) == 0
    assert "precision auto: 0 of " in capsys.readouterr().out and out.exists()
    for argv, message in ((["--precision", "auto"], "--precision needs --quantize"),
                          (["--quantize", "--precision", "16x8", "--activations", "int16"], "drop --activations"),
                          (["--state-feedback", "1:1"], "--state-feedback needs --quantize"),
                          (["--quantize", "--count-instructions"], "--count-instructions needs --precision auto"),
                          (["--quantize", "--precision", "auto", "--state-feedback", "1-1"], "expected OUT:IN")):
        with pytest.raises(SystemExit):
            aot.main(["--model", model, "--output", str(out), *argv])
        assert message in capsys.readouterr().err


# --- silero_vad: slow (256 calibration steps so that GPTQ is determined) -------------------------

CALIBRATION, EVAL = 256, 64
slow = pytest.mark.skipif(not os.environ.get("CORTEXM_SLOW"), reason="silero auto calibrates on 256 steps: CORTEXM_SLOW=1")


@pytest.fixture(scope="module")
def silero_auto():
    import zoo
    from cortexm.models import silero_vad

    model, _, calibration, graph = zoo.exported("silero_vad")
    auto = cortexm.CortexMQuantizer(precision="auto", state_feedback=silero_vad.STATE_FEEDBACK)
    qgraph = cortexm.quantize(graph, calibration(CALIBRATION, seed=0), auto, progress=False)
    return model, calibration, qgraph, cortexm.lower(qgraph, "cortex-m55+int8")


@slow
def test_silero_auto_meets_0_02_on_steps_with_a_strict_subset_of_int16_groups(silero_auto):
    """Measured (fake-quantized): 21 of 23 groups int16 (the readout convolution_5 and sigmoid_3
    int8), 7 of 8 weights int16 (all but the readout's), 64 steps max 0.0117 / mean 0.0018 (all
    16x8 + GPTQ: 0.0185 / 0.0018)."""
    model, calibration, qgraph, lowered = silero_auto
    choice = cortexm.quantization_report(qgraph).precision
    print(choice)
    assert 0 < len(choice.summary["int16"]) < choice.summary["groups"]
    assert not float_compute_ops(lowered), lowered.op_counts()
    errors = []
    for sample in calibration(EVAL, seed=1):
        with torch.no_grad():
            want = model(*sample)[0].item()
        got = np.asarray(lowered.run(*[t.numpy() for t in sample])[0]).reshape(-1)[0]
        errors.append(abs(float(got) - want))
    print(f"64 steps: max {max(errors):.4f} mean {np.mean(errors):.4f}")
    assert max(errors) <= 0.02 and np.mean(errors) <= 0.004


# Before int16 weights and state_feedback: 0.0233 (22 of 23 groups int16, int8 weights): one step's
# SQNR did not see what int8 state-path groups and weights carry through the state.
@slow
def test_silero_auto_streams_real_speech_within_0_02(silero_auto):
    from cortexm.models import silero_vad

    model, _, _, lowered = silero_auto
    try:
        audio, _, _ = silero_vad.speech_in_noise(silero_vad.espeak_speech())
    except RuntimeError as e:
        pytest.skip(str(e))
    want, _, _ = silero_vad.stream(model, torch.from_numpy(audio))
    e = np.abs(silero_vad.stream_graph(lowered, audio) - want[0].numpy())
    print(f"real speech: max {e.max():.4f} mean {e.mean():.4f}")
    assert e.max() <= 0.02
