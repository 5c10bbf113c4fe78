"""convert(ep): the FX walk of converter.Converter with the handler tables of ops, quant and
batchnorm, merged explicitly (an op handled twice is an error), after the FX rewrite of
safe_softmax (attention's fully-masked-row branch)."""

from __future__ import annotations

import torch

from .._core import Graph
from . import batchnorm, ops, quant
from .converter import Converter, merge_tables
from .safe_softmax import remove_safe_softmax_branches

HANDLERS = merge_tables(ops.HANDLERS, quant.HANDLERS, batchnorm.HANDLERS)


def convert(ep: torch.export.ExportedProgram) -> Graph:
    return Converter(remove_safe_softmax_branches(ep), HANDLERS).run()
