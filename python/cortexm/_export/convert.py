"""convert(ep): hand-written layer norms fused (layer_norm_pattern), then the FX walk of
converter.Converter with the handler tables of ops, quant and batchnorm, merged explicitly (an op
handled twice is an error)."""

from __future__ import annotations

import torch

from .._core import Graph
from . import batchnorm, ops, quant
from .converter import Converter, merge_tables
from .layer_norm_pattern import fuse_layer_norms

HANDLERS = merge_tables(ops.HANDLERS, quant.HANDLERS, batchnorm.HANDLERS)


def convert(ep: torch.export.ExportedProgram) -> Graph:
    fuse_layer_norms(ep)
    return Converter(ep, HANDLERS).run()
