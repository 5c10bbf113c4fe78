"""convert(ep): hand-written layer norms fused (layer_norm_pattern), attention's
fully-masked-row branch and constant masks rewritten (safe_softmax; after the fusion, so a fused
norm's division is no longer a possible source of -inf), then the FX walk of
converter.Converter with the handler tables of ops, quant and batchnorm, merged explicitly (an op
handled twice is an error)."""

from __future__ import annotations

import torch

from .._core import Graph
from . import batchnorm, ops, quant
from .converter import Converter, merge_tables
from .layer_norm_pattern import fuse_layer_norms
from .safe_softmax import remove_safe_softmax_branches

HANDLERS = merge_tables(ops.HANDLERS, quant.HANDLERS, batchnorm.HANDLERS)


def convert(ep: torch.export.ExportedProgram) -> Graph:
    fuse_layer_norms(ep)
    return Converter(remove_safe_softmax_branches(ep), HANDLERS).run()
