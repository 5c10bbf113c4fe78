"""The host kernels' x86 variants (cortexm.set_host_kernels / CORTEXM_HOST_KERNELS): each one the CPU
has gives the scalar kernels' bytes on whole zoo programs and on awkward single layers; a variant
the CPU lacks, or an unknown name, is refused by name."""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import torch

import cortexm
from cortexm import ops

import zoo

VARIANTS = cortexm.available_host_kernels()
ALL = ["scalar", "avx2", "avx512vnni"]


@pytest.fixture(autouse=True)
def restore_variant():
    before = cortexm.host_kernels()
    yield
    cortexm.set_host_kernels(before)


def test_the_default_is_the_richest_variant_and_scalar_is_always_there():
    assert VARIANTS[0] == "scalar"
    assert VARIANTS == ALL[:len(VARIANTS)]
    assert cortexm.host_kernels() == (os.environ.get("CORTEXM_HOST_KERNELS") or VARIANTS[-1])


def test_bad_names_and_missing_variants_are_refused():
    with pytest.raises(ValueError, match=r"variant = 'avx3': must be 'scalar', 'avx2' or 'avx512vnni'"):
        cortexm.set_host_kernels("avx3")
    for missing in ALL[len(VARIANTS):]:
        with pytest.raises(ValueError, match=f"variant = '{missing}': this CPU runs at most"):
            cortexm.set_host_kernels(missing)


def test_the_environment_variable_picks_the_variant():
    env = dict(os.environ, CORTEXM_HOST_KERNELS="scalar")
    code = "import cortexm; print(cortexm.host_kernels())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "scalar"


def outputs_per_variant(program, cases):
    """{variant: the bytes of every output of every case}."""
    got = {}
    for v in VARIANTS:
        cortexm.set_host_kernels(v)
        runs = [program.run(*c) for c in cases]
        got[v] = [np.ascontiguousarray(o).tobytes() for r in runs for o in (r if isinstance(r, tuple) else (r,))]
    return got


@pytest.mark.parametrize("name", ["ds_cnn", "mobilenet_v2_96", "resnet8"])
def test_zoo_programs_give_the_same_bytes_on_every_variant(name):
    program = cortexm.to_program(zoo.lowered(name))
    _, example, _ = cortexm.models.get(name)
    rng = np.random.default_rng(5)
    cases = [tuple(rng.standard_normal(x.shape).astype(np.float32) * 2 for x in example) for _ in range(2)]
    got = outputs_per_variant(program, cases)
    for v in VARIANTS[1:]:
        assert got[v] == got["scalar"], v


def random_conv(rng, c_in, c_out, h, w, groups):
    x = rng.integers(-128, 128, (1, h, w, c_in), dtype=np.int8)
    weight = rng.integers(-128, 128, (c_out, 1, 1, c_in // groups), dtype=np.int8)
    bias = rng.integers(-(1 << 20), 1 << 20, c_out, dtype=np.int32)
    mult = rng.integers(1 << 29, 1 << 31, c_out, dtype=np.int64).astype(np.int32)
    shift = rng.integers(-12, 3, c_out).astype(np.int32)
    return x, weight, bias, mult, shift


@pytest.mark.parametrize("variant", VARIANTS[1:])
@pytest.mark.parametrize("c_in,c_out,h,w,stride,groups", [
    (16, 96, 7, 9, 1, 1), (33, 5, 5, 3, 2, 1), (96, 17, 4, 4, 1, 1), (64, 64, 1, 13, 1, 2),
    (960, 31, 3, 3, 1, 1), (3, 8, 6, 6, 3, 1), (31, 4, 2, 9, 1, 1)])
def test_pointwise_convs_match_the_scalar_kernel(variant, c_in, c_out, h, w, stride, groups):
    rng = np.random.default_rng(c_in * 1000 + c_out)
    x, weight, bias, mult, shift = random_conv(rng, c_in, c_out, h, w, groups)
    args = dict(stride=(stride, stride), padding=(0, 0), dilation=(1, 1), input_offset=int(rng.integers(-127, 129)),
                output_offset=int(rng.integers(-128, 128)), requantize_multipliers=mult, requantize_shifts=shift,
                activation_min=-100, activation_max=120)
    cortexm.set_host_kernels("scalar")
    want = ops.quantized_conv2d(x, weight, bias, **args)
    cortexm.set_host_kernels(variant)
    got = ops.quantized_conv2d(x, weight, bias, **args)
    np.testing.assert_array_equal(got, want)


class FlipNet(torch.nn.Module):
    """Every kernel with x86 variants: im2col and pointwise convs, depthwise, an add, a linear."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 32, 3, padding=1)
        self.depthwise = torch.nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.pointwise = torch.nn.Conv2d(32, 32, 1)
        self.head = torch.nn.Linear(32 * 24 * 24, 24)

    def forward(self, x):
        y = torch.relu(self.stem(x))
        y = y + self.pointwise(torch.relu(self.depthwise(y)))
        return self.head(torch.flatten(y, 1))


@pytest.fixture(scope="module")
def flip_graph():
    torch.manual_seed(0)
    model = FlipNet().eval()
    example = (torch.randn(1, 3, 24, 24),)  # runs of a few ms: the flips land inside them
    calibration = [(torch.randn(1, 3, 24, 24),) for _ in range(2)]
    return cortexm.lower(cortexm.quantize(cortexm.export(model, example), calibration, progress=False))


@pytest.mark.skipif(len(VARIANTS) < 2, reason="this CPU runs only the scalar kernels")
@pytest.mark.parametrize("loaded_under", ["scalar", VARIANTS[-1]])
def test_set_host_kernels_from_another_thread_never_changes_a_run(flip_graph, loaded_under):
    cortexm.set_host_kernels(loaded_under)  # the variant the load packs the weights for
    program = cortexm.to_program(flip_graph)
    rng = np.random.default_rng(3)
    cases = [rng.standard_normal((1, 3, 24, 24)).astype(np.float32) * 2 for _ in range(6)]
    want = [program.run(x).tobytes() for x in cases]  # serial, one variant (all give these bytes)

    stop = threading.Event()

    def flip():
        while not stop.is_set():
            for v in VARIANTS:
                cortexm.set_host_kernels(v)

    flipper = threading.Thread(target=flip)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # the flipper runs between and during (GIL released) the runs
    flipper.start()
    wrong = []
    try:
        deadline = time.monotonic() + 3.0
        for i in range(300):
            c = i % len(cases)
            if i % 4 == 3:
                program.profile(cases[c])  # (times only: must not fail)
            got = program.run_batch([cases[c]], threads=1)[0] if i % 2 else program.run(cases[c])
            if got.tobytes() != want[c]:
                wrong.append(i)
            if time.monotonic() > deadline:
                break
        batch = program.run_batch(cases * 10, threads=2)
        wrong += [f"batch {k}" for k, got in enumerate(batch) if got.tobytes() != want[k % len(cases)]]
    finally:
        stop.set()
        flipper.join()
        sys.setswitchinterval(interval)
    assert not wrong, f"runs whose outputs changed while the variant flipped: {wrong}"


def weights_from_the_arena(kernel, operand, rng):
    """A linear or conv whose weights or bias (`operand`) is a program input, not a constant: its
    bytes exist only at run time (the fuzzer's program had a conv's bias moved into the arena).
    Returns the graph and its inputs."""
    g = cortexm.Graph()
    rows, c_in, c_out = 5, 19, 12
    if kernel == "linear":
        x = rng.integers(-128, 128, (rows, c_in), dtype=np.int8)
        weight = rng.integers(-128, 128, (c_out, c_in), dtype=np.int8)
    else:
        k = 1 if kernel == "pointwise_conv" else 3
        x = rng.integers(-128, 128, (1, c_in, 4, rows), dtype=np.int8)
        weight = rng.integers(-128, 128, (c_out, k, k, c_in), dtype=np.int8)
    bias = rng.integers(-(1 << 16), 1 << 16, c_out, dtype=np.int32)
    feeds = [x]
    values = [g.add_input("x", list(x.shape), "int8")]
    for name, value in (("weight", weight), ("bias", bias)):
        if name == operand:
            values.append(g.add_input(name, list(value.shape), str(value.dtype)))
            feeds.append(value)
        else:
            values.append(g.add_constant(name, value))
    quant = dict(input_offset=5, output_offset=-3, requantize_multipliers=[int(m) for m in rng.integers(1 << 30, 1 << 31, c_out)],
                 requantize_shifts=[int(s) for s in rng.integers(-12, -8, c_out)])
    if kernel == "linear":
        y = g.call("cortex_m.quantized_linear.default", values, {**quant, "filter_offset": 0})
    else:
        values[0] = g.call("dim_order_ops._clone_dim_order.default", [values[0]], {"dim_order": [0, 2, 3, 1]})
        pad = (weight.shape[1] - 1) // 2
        y = g.call("cortex_m.quantized_conv2d.default", values,
                   {**quant, "stride": [1, 1], "padding": [pad, pad], "dilation": [1, 1],
                    "activation_min": -128, "activation_max": 127})
        y = g.call("dim_order_ops._clone_dim_order.default", [y], {"dim_order": [0, 1, 2, 3]})
    g.outputs = [y]
    return g, feeds


@pytest.mark.parametrize("variant", VARIANTS[1:])
@pytest.mark.parametrize("operand", ["bias", "weight"])
@pytest.mark.parametrize("kernel", ["linear", "pointwise_conv", "conv3x3"])
def test_weights_or_bias_in_the_arena_give_the_scalar_bytes(variant, kernel, operand):
    # The load packs constant weights for the variant in use, the bias folded in; an arena operand
    # has no bytes then: packing it gave outputs without the run's bias (or read a null filter).
    rng = np.random.default_rng(7)
    graph, feeds = weights_from_the_arena(kernel, operand, rng)
    cortexm.set_host_kernels(variant)  # the variant the load packs for
    program = cortexm.to_program(graph)
    assert [t["location"] for t in program.tensors() if t["name"] == operand] == ["arena"]
    got = outputs_per_variant(program, [tuple(feeds)])
    assert got[variant] == got["scalar"]
    cortexm.set_host_kernels("scalar")
    assert program.run(*feeds).tobytes() == graph.run(*feeds).tobytes()  # (the graph's own kernels)
