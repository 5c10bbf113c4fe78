"""convert(ep): hand-written layer norms fused (layer_norm_pattern), attention's
fully-masked-row branch and constant masks rewritten (safe_softmax; after the fusion, so a fused
norm's division is no longer a possible source of -inf), then the FX walk of
converter.Converter with HANDLERS, the handlers the family modules of cortexm.ops register (an op
handled twice is an error when it is registered)."""

from __future__ import annotations

import torch

from .. import ops  # noqa: F401  (its family modules register their handlers in HANDLERS)
from .._core import Graph
from .converter import Converter
from .handlers import HANDLERS
from .layer_norm_pattern import fuse_layer_norms
from .safe_softmax import remove_safe_softmax_branches


def convert(ep: torch.export.ExportedProgram) -> Graph:
    fuse_layer_norms(ep)
    return Converter(remove_safe_softmax_branches(ep), HANDLERS).run()
