"""Shared plumbing for the model zoo: the bundle type, seeded construction, weight initialisers
and BatchNorm statistics from calibration-like data.

Everything here is plain PyTorch. Randomness comes from explicit ``torch.Generator`` objects; the
few PyTorch calls that can only use the global generator (module constructors' default init) run
inside ``torch.random.fork_rng`` after ``torch.manual_seed``, so building a model is deterministic
and leaves the caller's global RNG state exactly as it was.
"""

from __future__ import annotations

import math
from typing import Callable, Iterator, NamedTuple

import torch
from torch import nn

Sample = tuple  # one input tuple: the positional arguments of the model's forward
SampleFn = Callable[[torch.Generator], Sample]

# Independent random streams derived from one user seed.
_STREAM_CALIBRATION = 0
_STREAM_EXAMPLE = 1
_STREAM_BATCHNORM = 2
_STREAM_WEIGHTS = 3

_EXAMPLE_SEED = 20240613  # the example inputs are one fixed draw, distinct from calibration(…, seed=0)


class ModelBundle(NamedTuple):
    """What ``cortexm.models.get`` returns; unpacks as ``model, example_inputs, calibration``."""

    model: nn.Module
    example_inputs: tuple
    calibration: Callable[..., Iterator[tuple]]


def generator(seed: int, stream: int) -> torch.Generator:
    """A CPU generator for one (seed, stream) pair; distinct pairs give unrelated sequences."""
    mixed = (int(seed) * 0x9E3779B97F4A7C15 + stream * 0xBF58476D1CE4E5B9 + 0x94D049BB133111EB) % (1 << 63)
    return torch.Generator().manual_seed(mixed)


def batch(samples: list[Sample]) -> Sample:
    """Concatenate a list of input tuples along dim 0."""
    return tuple(torch.cat(parts, dim=0) for parts in zip(*samples))


def make_calibration(sample: SampleFn) -> Callable[..., Iterator[tuple]]:
    """``calibration(n, seed=0)`` yielding n input tuples drawn with ``sample``.

    Sample i depends only on (seed, i): ``calibration(5)`` starts with the items of ``calibration(3)``.
    """

    def calibration(n: int, seed: int = 0) -> Iterator[tuple]:
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        g = generator(seed, _STREAM_CALIBRATION)
        for _ in range(n):
            yield sample(g)

    return calibration


def build(
    make_model: Callable[[], nn.Module],
    init: Callable[[nn.Module, torch.Generator], None],
    sample: SampleFn,
    *,
    seed: int = 0,
    bn_samples: int = 32,
    bn_batch: int = 16,
) -> ModelBundle:
    """Construct, initialise and (if it has BatchNorm) calibrate BN statistics; return the bundle."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = make_model()
        with torch.no_grad():
            init(model, generator(seed, _STREAM_WEIGHTS))
        if any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules()):
            g = generator(seed, _STREAM_BATCHNORM)
            batches = []
            for start in range(0, bn_samples, bn_batch):
                batches.append(batch([sample(g) for _ in range(min(bn_batch, bn_samples - start))]))
            calibrate_batchnorm(model, batches)
    return finish(model, sample)


def finish(model: nn.Module, sample: SampleFn) -> ModelBundle:
    """Put ``model`` in eval mode and bundle it with its example inputs and calibration generator."""
    model.eval()
    example = sample(generator(_EXAMPLE_SEED, _STREAM_EXAMPLE))
    return ModelBundle(model, example, make_calibration(sample))


# --------------------------------------------------------------------------------------------
# BatchNorm


@torch.no_grad()
def calibrate_batchnorm(model: nn.Module, batches: list[Sample]) -> None:
    """Set every BN layer's running stats to the (cumulative) batch statistics seen on ``batches``.

    Only the BN layers are put in train mode (dropout stays off), momentum is switched to a
    cumulative average for the passes and restored afterwards.
    """
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    momenta = [bn.momentum for bn in bns]
    model.eval()
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
        bn.train()
    for inputs in batches:
        model(*inputs)
    for bn, momentum in zip(bns, momenta):
        bn.momentum = momentum
    model.eval()


def randomize_batchnorm_affine(model: nn.Module, g: torch.Generator) -> None:
    """gamma ~ U(0.5, 1.5), beta ~ N(0, 0.1^2): non-trivial scale and shift for BN-folding tests."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.affine:
            m.weight.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
            m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)


# --------------------------------------------------------------------------------------------
# Weight initialisers (all draw from an explicit generator)


def fans(w: torch.Tensor) -> tuple[int, int]:
    """PyTorch's (fan_in, fan_out) for a Linear / ConvNd weight."""
    receptive = w[0][0].numel() if w.dim() > 2 else 1
    return w.shape[1] * receptive, w.shape[0] * receptive


def default_bias_(b: torch.Tensor | None, w: torch.Tensor, g: torch.Generator) -> None:
    """PyTorch's default bias init, U(-1/sqrt(fan_in), 1/sqrt(fan_in)). Used for every bias so
    that bias paths carry non-zero values, as they do in trained networks."""
    if b is not None:
        bound = 1.0 / math.sqrt(fans(w)[0]) if fans(w)[0] > 0 else 0.0
        nn.init.uniform_(b, -bound, bound, generator=g)


def torch_default_(m: nn.Module, g: torch.Generator) -> None:
    """PyTorch's own reset_parameters for Conv/Linear: kaiming_uniform(a=sqrt(5)) + uniform bias."""
    nn.init.kaiming_uniform_(m.weight, a=math.sqrt(5), generator=g)
    default_bias_(m.bias, m.weight, g)


def keras_he_normal_(w: torch.Tensor, g: torch.Generator) -> None:
    """Keras 'he_normal': truncated normal (±2σ) with variance 2/fan_in after truncation."""
    std = math.sqrt(2.0 / fans(w)[0]) / 0.87962566103423978
    nn.init.trunc_normal_(w, 0.0, std, -2 * std, 2 * std, generator=g)


def keras_glorot_uniform_(w: torch.Tensor, g: torch.Generator) -> None:
    nn.init.xavier_uniform_(w, generator=g)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


# --------------------------------------------------------------------------------------------
# Keras 'same' padding for ported TensorFlow models


def tf_same_padding(size: int, kernel: int, stride: int) -> tuple[int, int]:
    """(before, after) zero padding of TF/Keras padding='same' along one axis of length ``size``:
    total = max((ceil(size / stride) - 1) * stride + kernel - size, 0), the odd pixel goes after."""
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def conv2d_same(in_ch: int, out_ch: int, kernel: int | tuple[int, int], stride: int, in_size: tuple[int, int],
                groups: int = 1, bias: bool = True) -> tuple[nn.Module, tuple[int, int]]:
    """A Conv2d reproducing Keras padding='same' for a fixed input size, and its output size.

    Symmetric padding goes into the Conv2d itself; asymmetric padding (stride 2 with an even input)
    becomes an explicit ``nn.ZeroPad2d`` in front of an unpadded Conv2d, returned as
    ``nn.Sequential(pad, conv)``. (A lowering folds that pad into the kernel's top/left padding: the
    extra bottom/right row is what a CMSIS-NN/TFLite convolution reads as implicit zeros.)
    """
    kh, kw = (kernel, kernel) if isinstance(kernel, int) else kernel
    ph, pw = tf_same_padding(in_size[0], kh, stride), tf_same_padding(in_size[1], kw, stride)
    out_size = (-(-in_size[0] // stride), -(-in_size[1] // stride))
    if ph[0] == ph[1] and pw[0] == pw[1]:
        return nn.Conv2d(in_ch, out_ch, (kh, kw), stride, (ph[0], pw[0]), groups=groups, bias=bias), out_size
    conv = nn.Conv2d(in_ch, out_ch, (kh, kw), stride, 0, groups=groups, bias=bias)
    return nn.Sequential(nn.ZeroPad2d((pw[0], pw[1], ph[0], ph[1])), conv), out_size


def keras_init_(model: nn.Module, g: torch.Generator, conv_init, dense_init) -> None:
    """Keras-style weight init for a ported TF model; biases PyTorch-default uniform (non-zero),
    BN affine randomised."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            conv_init(m.weight, g)
            default_bias_(m.bias, m.weight, g)
        elif isinstance(m, nn.Linear):
            dense_init(m.weight, g)
            default_bias_(m.bias, m.weight, g)
    randomize_batchnorm_affine(model, g)
