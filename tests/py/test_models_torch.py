"""cortexm.models: every zoo model builds, runs, is deterministic and calibrates; silero_vad's eager
module equals the TorchScript model shipped in the silero-vad package and detects real (synthesized)
speech."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import cortexm


def _import_models():
    """cortexm.models from the installed package, or from this source tree when the installed wheel
    predates it (the package is installed non-editable)."""
    try:
        import cortexm.models as models
        return models
    except ModuleNotFoundError:
        pkg = Path(__file__).resolve().parents[2] / "python" / "cortexm" / "models"
        spec = importlib.util.spec_from_file_location("cortexm.models", pkg / "__init__.py",
                                                      submodule_search_locations=[str(pkg)])
        models = importlib.util.module_from_spec(spec)
        sys.modules["cortexm.models"] = models
        spec.loader.exec_module(models)
        cortexm.models = models
        return models


models = _import_models()

OUTPUT_SHAPES = {
    "deep_autoencoder": [(1, 640)],
    "ds_cnn": [(1, 12)],
    "kws_digits": [(1, 10)],
    "mobilenet_v1_025": [(1, 2)],
    "mobilenet_v2": [(1, 1000)],
    "mobilenet_v2_96": [(1, 1000)],
    "mobilenet_v3_small": [(1, 1000)],
    "mobilenet_v3_small_96": [(1, 1000)],
    "resnet8": [(1, 10)],
    "silero_vad": [(1, 1), (2, 1, 128)],
    "wav2letter": [(10, 4096, 3)],
    "yolo_style": [(1, 84, 20, 20), (1, 84, 10, 10), (1, 84, 5, 5)],
}
INPUT_SHAPES = {
    "deep_autoencoder": [(1, 640)],
    "ds_cnn": [(1, 1, 49, 10)],
    "kws_digits": [(1, 1, 49, 10)],
    "mobilenet_v1_025": [(1, 3, 96, 96)],
    "mobilenet_v2": [(1, 3, 224, 224)],
    "mobilenet_v2_96": [(1, 3, 96, 96)],
    "mobilenet_v3_small": [(1, 3, 224, 224)],
    "mobilenet_v3_small_96": [(1, 3, 96, 96)],
    "resnet8": [(1, 3, 32, 32)],
    "silero_vad": [(1, 576), (2, 1, 128)],
    "wav2letter": [(10, 1, 700)],
    "yolo_style": [(1, 3, 160, 160)],
}
# Parameter counts of the reference definitions (torchvision, MLPerf Tiny Keras trainable params +
# BN gamma/beta, torchaudio, silero's 16 kHz branch).
PARAMETERS = {
    "deep_autoencoder": 267_928,
    "ds_cnn": 23_756,
    "mobilenet_v1_025": 216_322,
    "mobilenet_v2": 3_504_872,
    "mobilenet_v2_96": 3_504_872,
    "mobilenet_v3_small": 2_542_856,
    "mobilenet_v3_small_96": 2_542_856,
    "resnet8": 78_186,
    "silero_vad": 309_633,
    "wav2letter": 34_327_346,
}
IMAGES_01 = {"mobilenet_v1_025", "resnet8", "yolo_style"}
IMAGES_IMAGENET = {"mobilenet_v2", "mobilenet_v2_96", "mobilenet_v3_small", "mobilenet_v3_small_96"}
SOFTMAX_OUTPUT = {"ds_cnn", "kws_digits", "resnet8", "mobilenet_v1_025"}

_cache = {}


@pytest.fixture(autouse=True, scope="module")
def _single_thread():
    """These models are small: one intra-op thread is as fast unloaded and far faster on a busy
    2-core machine (no OpenMP spin-waiting). Restored after this module."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def bundle(name):
    if name not in _cache:
        _cache[name] = models.get(name)
    return _cache[name]


def as_tuple(out):
    return out if isinstance(out, tuple) else (out,)


def run(model, inputs):
    with torch.no_grad():
        return as_tuple(model(*inputs))


def test_names_sorted_and_complete():
    assert models.names() == sorted(OUTPUT_SHAPES)


def test_unknown_name_lists_known_names():
    with pytest.raises(ValueError) as info:
        models.get("resnet9")
    message = str(info.value)
    assert "resnet9" in message
    for name in models.names():
        assert name in message


@pytest.mark.parametrize("name", sorted(OUTPUT_SHAPES))
def test_builds_and_runs(name):
    model, example, calibration = bundle(name)
    assert isinstance(model, nn.Module)
    assert not any(m.training for m in model.modules()), "model and all submodules must be in eval mode"
    assert isinstance(example, tuple) and all(isinstance(t, torch.Tensor) for t in example)
    assert [tuple(t.shape) for t in example] == INPUT_SHAPES[name]
    assert all(t.dtype == torch.float32 and torch.isfinite(t).all() for t in example)
    outputs = run(model, example)
    assert [tuple(o.shape) for o in outputs] == OUTPUT_SHAPES[name]
    assert all(torch.isfinite(o).all() for o in outputs)
    if name in PARAMETERS:
        assert models.count_parameters(model) == PARAMETERS[name]
    if name in SOFTMAX_OUTPUT:
        torch.testing.assert_close(outputs[0].sum(1), torch.ones(1))
    if name == "wav2letter":
        torch.testing.assert_close(outputs[0].exp().sum(1), torch.ones(10, 3), rtol=0, atol=1e-4)
    if name == "silero_vad":
        assert 0 <= outputs[0].item() <= 1


def test_yolo_style_is_small():
    assert 1_000_000 <= models.count_parameters(bundle("yolo_style").model) <= 3_000_000


@pytest.mark.parametrize("name", sorted(OUTPUT_SHAPES))
def test_deterministic_and_leaves_global_rng_alone(name):
    first = bundle(name)
    torch.manual_seed(1234)
    rng_before = torch.get_rng_state()
    second = models.get(name)
    assert torch.equal(rng_before, torch.get_rng_state()), "get() must not consume the global RNG"
    sd1, sd2 = first.model.state_dict(), second.model.state_dict()
    assert sd1.keys() == sd2.keys()
    for key in sd1:
        assert torch.equal(sd1[key], sd2[key]), key
    for a, b in zip(first.example_inputs, second.example_inputs):
        assert torch.equal(a, b)
    for a, b in zip(run(first.model, first.example_inputs), run(second.model, second.example_inputs)):
        assert torch.equal(a, b)
    for s1, s2 in zip(first.calibration(2, seed=7), second.calibration(2, seed=7)):
        for a, b in zip(s1, s2):
            assert torch.equal(a, b)


@pytest.mark.parametrize("name", sorted(OUTPUT_SHAPES))
def test_calibration(name):
    model, example, calibration = bundle(name)
    samples = list(calibration(3))
    assert len(samples) == 3
    for sample in samples:
        assert isinstance(sample, tuple)
        assert [tuple(t.shape) for t in sample] == [tuple(t.shape) for t in example]
        assert all(t.dtype == torch.float32 and torch.isfinite(t).all() for t in sample)
        if name in IMAGES_01:
            assert 0 <= sample[0].min() and sample[0].max() <= 1
        if name in IMAGES_IMAGENET:
            assert -2.2 < sample[0].min() and sample[0].max() < 2.7
        if name in ("wav2letter", "silero_vad"):
            assert sample[0].abs().max() <= 1
    assert not torch.equal(samples[0][0], samples[1][0])
    # sample i depends only on (seed, i); other seeds give other data
    prefix = list(calibration(2))
    for a, b in zip(prefix, samples[:2]):
        assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not torch.equal(next(iter(calibration(1, seed=1)))[0], samples[0][0])
    assert list(calibration(0)) == []
    outputs = run(model, samples[0])
    assert [tuple(o.shape) for o in outputs] == OUTPUT_SHAPES[name]


@pytest.mark.parametrize("name", [n for n in sorted(OUTPUT_SHAPES) if n not in ("silero_vad", "wav2letter")])
def test_batchnorm_statistics_are_nontrivial(name):
    bns = [m for m in bundle(name).model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    assert bns
    for bn in bns:
        assert bn.momentum is not None and bn.num_batches_tracked > 0
        assert bn.running_mean.abs().max() > 1e-3
        assert (bn.running_var - 1).abs().max() > 1e-2
        assert (bn.weight - 1).abs().max() > 1e-2 and bn.bias.abs().max() > 1e-3


def test_torchvision_and_torchaudio_state_dict_names():
    keys = {n: set(bundle(n).model.state_dict()) for n in ("mobilenet_v2", "mobilenet_v3_small", "wav2letter")}
    assert {"features.0.0.weight", "features.1.conv.0.0.weight", "features.2.conv.1.1.running_var",
            "features.18.0.weight", "classifier.1.weight"} <= keys["mobilenet_v2"]
    assert {"features.1.block.1.fc1.weight", "features.4.block.2.fc2.bias", "features.12.0.weight",
            "classifier.0.weight", "classifier.3.weight"} <= keys["mobilenet_v3_small"]
    assert {"acoustic_model.0.0.weight", "acoustic_model.1.0.weight", "acoustic_model.1.20.weight"} <= keys["wav2letter"]
    w2l = bundle("wav2letter").model
    convs = [m for m in w2l.modules() if isinstance(m, nn.Conv1d)]
    assert len(convs) == 12  # the waveform front end + torchaudio's 11-layer acoustic model
    assert (convs[0].kernel_size, convs[0].stride, convs[0].padding) == ((250,), (160,), (45,))
    acoustic = w2l.acoustic_model[1]
    assert isinstance(acoustic[-1], nn.ReLU) and acoustic[-2].out_channels == 4096


# ------------------------------------------------------------------------------------------------
# silero_vad


@pytest.fixture(scope="module")
def silero():
    from cortexm.models import silero_vad

    return silero_vad


@pytest.fixture(scope="module")
def silero_jit(silero):
    return silero.load_jit()


def test_silero_uses_the_real_weights(silero, silero_jit):
    jit_sd = silero_jit.state_dict()
    sd = bundle("silero_vad").model.state_dict()
    assert torch.equal(sd["stft.conv.weight"], jit_sd["_model.stft.forward_basis_buffer"])
    for key, value in sd.items():
        if key != "stft.conv.weight":
            assert torch.equal(value, jit_sd["_model." + key]), key


def test_silero_eager_matches_torchscript_step(silero, silero_jit):
    model, example, calibration = bundle("silero_vad")
    g = torch.Generator().manual_seed(0)
    cases = [example, *calibration(20, seed=3),
             (torch.randn(1, 576, generator=g) * 0.3, torch.randn(2, 1, 128, generator=g) * 0.5),
             (torch.zeros(1, 576), torch.zeros(2, 1, 128))]
    for x, state in cases:
        with torch.no_grad():
            p_jit, s_jit = silero_jit._model(x, state)
            p, s = model(x, state)
        assert p.shape == p_jit.shape and s.shape == s_jit.shape
        torch.testing.assert_close(p, p_jit, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(s, s_jit, rtol=1e-5, atol=1e-5)


def test_silero_streaming_matches_torchscript_wrapper(silero, silero_jit):
    """The JIT wrapper's own context/state bookkeeping (forward(chunk, 16000)) against ``stream``."""
    model = bundle("silero_vad").model
    g = torch.Generator().manual_seed(1)
    from cortexm.models import _data

    audio = torch.cat([_data.audio_clip(g, 512 * 12) for _ in range(4)])
    silero_jit.reset_states()
    with torch.no_grad():
        p_jit = torch.cat([silero_jit(audio[i:i + 512].unsqueeze(0), 16000) for i in range(0, audio.numel(), 512)], 1)
    probs, state, context = silero.stream(model, audio)
    torch.testing.assert_close(probs, p_jit, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(state, silero_jit._state, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(context, silero_jit._context, rtol=0, atol=0)
    silero_jit.reset_states()


def test_silero_missing_package_names_the_pip_command(silero, monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "silero_vad" else real_find_spec(name, *a))
    with pytest.raises(RuntimeError, match="pip install --no-deps silero-vad"):
        models.get("silero_vad")


@pytest.fixture(scope="module")
def espeak_speech(silero):
    try:
        return silero.espeak_speech()
    except RuntimeError as e:
        pytest.skip(str(e))


def test_silero_detects_real_speech(silero, silero_jit, espeak_speech):
    """1 s digital silence + 1.5 s white noise + espeak-ng speech (with the same noise) + 1.5 s noise,
    streamed in 512-sample chunks with 64 samples of context and the carried LSTM state.

    Measured (espeak-ng 1.51, noise sigma 0.01): 176 speech chunks mean 0.948, median 1.00, 95% > 0.5;
    109 silence/noise chunks (excluding 0.5 s of hang-over after the speech) mean 0.010, max 0.046."""
    sr, chunk = 16000, 512
    audio, t_speech, t_end = silero.speech_in_noise(espeak_speech)
    assert len(espeak_speech) > sr * 2, "espeak-ng produced less than 2 s of speech"
    clip = torch.from_numpy(audio)

    probs, _, _ = silero.stream(bundle("silero_vad").model, clip)
    probs = probs[0].numpy()
    centre = (np.arange(len(probs)) * chunk + chunk / 2) / sr
    in_speech = probs[(centre > t_speech) & (centre < t_end)]
    non_speech = probs[(centre < t_speech) | (centre > t_end + 0.5)]  # 0.5 s hang-over after speech

    assert np.mean(in_speech) > 0.75, in_speech
    assert np.median(in_speech) > 0.9, in_speech
    assert np.mean(in_speech > 0.5) > 0.8, in_speech
    assert np.mean(non_speech) < 0.1, non_speech
    assert np.max(non_speech) < 0.35, non_speech
    assert np.mean(in_speech) - np.mean(non_speech) > 0.6

    # and the TorchScript wrapper agrees on this real audio
    silero_jit.reset_states()
    with torch.no_grad():
        p_jit = torch.cat([silero_jit(clip[i:i + chunk].unsqueeze(0), sr)
                           for i in range(0, len(probs) * chunk, chunk)], 1)[0]
    silero_jit.reset_states()
    np.testing.assert_allclose(probs, p_jit.numpy(), rtol=1e-5, atol=1e-5)
