"""Zoo models exported, quantized and lowered once per pytest session.

Exporting, calibrating and lowering are the expensive part of the suite; tests that only read the
results share them through these caches. Tests must not mutate what they get (copy first).
"""

import functools

import cortexm

CALIBRATION_SAMPLES = 2
# Quantizer settings by name (the caches key on the name): CortexMQuantizer's keyword arguments.
QUANTIZERS = {
    "int8": {},
    "16x8": {"activation_dtype": "int16", "fuse_magnitude": True},  # TFLite's 16x8 mode
    "16x8_gptq": {"activation_dtype": "int16", "fuse_magnitude": True, "weight_rounding": "gptq"},
}


@functools.lru_cache(maxsize=None)
def exported(name):
    """(model, example_inputs, calibration, graph) for a zoo model."""
    model, example, calibration = cortexm.models.get(name)
    return model, example, calibration, cortexm.export(model, example)


@functools.lru_cache(maxsize=None)
def quantized(name, samples=CALIBRATION_SAMPLES, quantizer="int8"):
    """The model quantized with the QUANTIZERS setting named `quantizer`."""
    _, _, calibration, graph = exported(name)
    return cortexm.quantize(graph, calibration(samples),
                            cortexm.CortexMQuantizer(**QUANTIZERS[quantizer]), progress=False)


@functools.lru_cache(maxsize=None)
def lowered(name, target="cortex-m55+int8", samples=CALIBRATION_SAMPLES, quantizer="int8"):
    return cortexm.lower(quantized(name, samples, quantizer), target)


def lowered_with_io(name, io):
    """The cortex-m55 lowering with float io as it is, or a copy with int8 io ("int8")."""
    lowered_graph = lowered(name)
    if io == "int8":
        from cortexm import _core

        lowered_graph = lowered_graph.copy()
        _core.make_io_int8(lowered_graph)
    return lowered_graph


def slow_params(reason):
    """Every zoo model as a pytest param, skipped with `reason` unless CORTEXM_SLOW is set."""
    import os

    import pytest

    skip = pytest.mark.skip(reason=reason)
    return [pytest.param(name, marks=() if os.environ.get("CORTEXM_SLOW") else skip)
            for name in cortexm.models.names()]
