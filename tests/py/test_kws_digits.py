"""The trained spoken-digit model (cortexm.models.kws_digits) and the demo that says a digit to it:
numpy features equal to the zoo's torch front end, the int8 program as accurate as float on voices
it never heard, bit-identical on QEMU's M55, and the demo hearing the word it said."""

import shutil

import numpy as np
import pytest
import torch

import cortexm
from cortexm import demo, qemu
from cortexm.models import _data
from cortexm.models import kws_digits as kws

needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng")
needs_qemu = pytest.mark.skipif(shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
                                reason="needs qemu-system-arm and arm-none-eabi-gcc")


def test_numpy_features_equal_the_torch_front_end():
    rng = np.random.default_rng(0)
    t = np.arange(kws.SAMPLE_RATE) / kws.SAMPLE_RATE
    clip = (0.3 * np.sin(2 * np.pi * 440 * t) * np.exp(-3 * t) + 0.01 * rng.standard_normal(len(t))).astype(np.float32)
    ours = kws.features(clip)[0, 0]
    reference = _data.kws_mfcc(torch.from_numpy(clip)).numpy()
    assert ours.shape == (49, 10)
    np.testing.assert_allclose(ours, reference, rtol=1e-4, atol=1e-3)
    with pytest.raises(ValueError, match=r"clip: shape \(8000,\)"):
        kws.features(clip[:8000])


def test_one_second_places_and_crops_the_word():
    word = np.concatenate([np.zeros(100), np.ones(4000), np.zeros(50)]).astype(np.float32)
    clip = kws.one_second(word)
    assert clip.shape == (16000,) and np.flatnonzero(clip)[[0, -1]].tolist() == [6000, 9999]
    assert np.flatnonzero(kws.one_second(word, 0))[0] == 0
    assert np.flatnonzero(kws.one_second(word, 99999))[-1] == 15999
    long_word = 0.5 + np.arange(20000, dtype=np.float32) / 40000
    assert kws.one_second(long_word)[0] == long_word[2000]


def test_the_shipped_weights_build_a_deterministic_zoo_model():
    model, example, calibration = cortexm.models.get("kws_digits")
    again = cortexm.models.get("kws_digits")
    assert torch.equal(example[0], again.example_inputs[0])
    with torch.no_grad():
        p = model(*example)
    assert p.shape == (1, 10) and torch.allclose(p.sum(), torch.tensor(1.0))
    assert [tuple(c[0].shape) for c in calibration(3)] == [(1, 1, 49, 10)] * 3


@pytest.fixture(scope="module")
def held_out():
    """Two words per digit from each of three voices the training never used."""
    if shutil.which("espeak-ng") is None:
        pytest.skip("needs espeak-ng")
    voices = ["en-us+Andy", "en-gb-scotland+Henrique", "en-029+f4"]
    rng = np.random.default_rng(5)
    xs, ys = [], []
    for label, word in enumerate(kws.WORDS):
        for voice in voices:
            for speed in (130, 185):
                speech = kws.speak(word, voice, speed, int(rng.integers(20, 80)))
                room = max(kws.SAMPLE_RATE - len(kws.trim(speech)), 0)
                xs.append(kws.features(kws.one_second(speech, int(rng.integers(room + 1)))))
                ys.append(label)
    return np.concatenate(xs), np.array(ys)


@pytest.fixture(scope="module")
def program():
    model, example, calibration = cortexm.models.get("kws_digits")
    qgraph = cortexm.quantize(cortexm.export(model, example), calibration(64), progress=False)
    return cortexm.to_program(cortexm.lower(qgraph, target="cortex-m55+int8"))


@needs_espeak
def test_the_int8_program_is_as_accurate_as_float_on_unseen_voices(held_out, program):
    x, y = held_out
    model, _, _ = cortexm.models.get("kws_digits")
    with torch.no_grad():
        float_accuracy = float((model(torch.from_numpy(x)).argmax(1).numpy() == y).mean())
    outputs = program.run_batch([(x[i:i + 1],) for i in range(len(x))])
    int8_accuracy = float(np.mean([np.argmax(o) == label for o, label in zip(outputs, y)]))
    assert float_accuracy >= 0.9, float_accuracy
    assert int8_accuracy >= float_accuracy - 0.02, (int8_accuracy, float_accuracy)


@needs_espeak
@needs_qemu
def test_the_program_hears_the_same_on_the_m55(held_out, program):
    x, _ = held_out
    cases = [(x[i:i + 1],) for i in range(0, len(x), 3)]
    host = program.run_batch(cases)
    target = qemu.run_cases(program, cases, cpu="cortex-m55")
    assert len(target) == len(host)
    for a, b in zip(host, target):
        assert a.tobytes() == b.tobytes()


@needs_espeak
@needs_qemu
def test_the_demo_hears_the_word_it_says(tmp_path, program, capsys):
    path = tmp_path / "kws_digits.cmpte"
    program.save(path)
    assert demo.main([str(path), "--word", "three"]) == 0
    out = capsys.readouterr().out
    assert out.count('heard "three"') == 2, out
    assert "identical with the host's" in out and "instructions" in out and f"arena {program.arena_size:,} B" in out


def test_speech_needs_espeak_ng(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="apt-get install espeak-ng"):
        kws.speak("one")


def one_error_line(capsys, *parts):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    for part in parts:
        assert part in err, err


def test_the_demo_refuses_a_missing_or_wrong_program_and_an_unknown_cpu(tmp_path, capsys):
    """Exit status 2 and one 'error:' line, before any speech or compilation."""
    g = cortexm.Graph()
    g.outputs = [g.call("aten.relu.default", [g.add_input("x", [2, 3])], {})]
    relu = tmp_path / "relu.cmpte"
    cortexm.to_program(g).save(relu)
    (tmp_path / "notes.txt").write_text("not a program")

    assert demo.main([str(tmp_path / "missing.cmpte")]) == 2
    one_error_line(capsys, "cannot read program", "missing.cmpte", "No such file or directory")
    assert demo.main([str(tmp_path / "notes.txt")]) == 2
    one_error_line(capsys, "notes.txt")
    assert demo.main([str(relu)]) == 2
    one_error_line(capsys, "relu.cmpte' is not a kws_digits program: it takes float32[2, 3] and gives float32[2, 3]")
    assert demo.main([str(relu), "--cpu", "cortex-m99"]) == 2
    one_error_line(capsys, "--cpu 'cortex-m99' has no QEMU machine")


@needs_espeak
def test_the_demo_refuses_an_unknown_voice_and_an_absurd_speed(capsys):
    assert demo.main(["--voice", "xx-nowhere", "--cpu", ""]) == 2
    one_error_line(capsys, "espeak-ng cannot say 'seven' with voice 'xx-nowhere'", "espeak-ng --voices")
    for speed in ("100000000", "0", "-5"):
        assert demo.main(["--speed", speed, "--cpu", ""]) == 2
        one_error_line(capsys, f"speed {speed}: espeak-ng speaks 80 to 450 words per minute")


@needs_espeak
def test_speech_refuses_what_espeak_cannot_say():
    with pytest.raises(ValueError, match="speed 100000: espeak-ng speaks 80 to 450"):
        kws.speak("one", speed=100000)
    with pytest.raises(ValueError, match="pitch 120"):
        kws.speak("one", pitch=120)
    with pytest.raises(ValueError, match="with voice 'xx-nowhere'"):
        kws.speak("one", voice="xx-nowhere")
