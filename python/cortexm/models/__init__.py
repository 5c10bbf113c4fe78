"""cortexm.models: a zoo of small PyTorch models to quantize and lower, in pure PyTorch.

    model, example_inputs, calibration = cortexm.models.get("ds_cnn")
    model(*example_inputs)
    for inputs in calibration(100, seed=0):
        model(*inputs)

``get(name)`` builds a fresh model in eval mode with fixed-seed random weights (silero_vad: its real
weights; kws_digits: weights trained by scripts/train_kws_digits.py, shipped with the package),
BatchNorm running statistics measured on calibration-like data, a tuple of example input tensors, and ``calibration(n, seed=0)``, a generator of n input tuples from the same distribution as
the example inputs. The same name gives the same weights and inputs on every call; building a model
leaves the global torch RNG state untouched.

One model per module (``cortexm/models/<name>.py``, each with a ``build()``); this package does not
depend on the rest of cortexm.
"""

from __future__ import annotations

import importlib

from ._common import ModelBundle, count_parameters

_MODELS = (
    "deep_autoencoder",
    "ds_cnn",
    "kws_digits",
    "mobilenet_v1_025",
    "mobilenet_v2",
    "mobilenet_v2_96",
    "mobilenet_v3_small",
    "mobilenet_v3_small_96",
    "resnet8",
    "silero_vad",
    "wav2letter",
    "yolo_style",
)

__all__ = ["ModelBundle", "count_parameters", "get", "names", "state_feedback"]


def names() -> list[str]:
    """The registered model names, sorted."""
    return sorted(_MODELS)


def get(name: str) -> ModelBundle:
    """(model in eval mode, example inputs tuple, calibration(n, seed=0)) for a registered name."""
    return _module(name).build()


def state_feedback(name: str) -> dict:
    """{output index: input index} of a registered model's recurrent state (the output fed back as
    that input at the next step; silero_vad: {1: 1}), {} for a model without one: what
    CortexMQuantizer(precision="auto", state_feedback=...) takes."""
    return dict(getattr(_module(name), "STATE_FEEDBACK", {}))


def _module(name: str):
    """The module of a registered model; ValueError naming the known ones for any other name."""
    if name not in _MODELS:
        raise ValueError(f"unknown model {name!r}; known models: {', '.join(names())}")
    return importlib.import_module(f"{__name__}.{name}")
