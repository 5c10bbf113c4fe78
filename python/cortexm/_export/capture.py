"""Capture: an nn.Module or ExportedProgram -> an ExportedProgram in core ATen (plus the ops the
family modules keep whole, handlers.KEPT_WHOLE, which the cortexm graph has as single ops)."""

from __future__ import annotations

import warnings

import torch

from .handlers import KEPT_WHOLE


def decomposition_table() -> dict:
    table = torch.export.default_decompositions()
    for name in sorted(KEPT_WHOLE):
        _, packet, overload = name.split(".")
        table.pop(getattr(getattr(torch.ops.aten, packet), overload), None)
    return table


def capture(module_or_ep, example_inputs=None, dynamic_shapes=None, *, decompose: bool = True):
    """torch.export (strict=False, eval mode) unless given an ExportedProgram, then decompositions."""
    with warnings.catch_warnings():
        # torch.export's own use of deprecated pytree APIs.
        warnings.filterwarnings("ignore", message=r".*LeafSpec.*", category=FutureWarning)
        # nn.LSTM / GRU re-assign their _flat_weights list in forward; the weights are captured.
        warnings.filterwarnings("ignore", message=r"The tensor attributes (self\.\w+\._flat_weights\[\d+\](, )?)+ "
                                r"were assigned during export", category=UserWarning)
        if isinstance(module_or_ep, torch.export.ExportedProgram):
            if example_inputs is not None or dynamic_shapes is not None:
                raise ValueError("cortexm.export: an ExportedProgram carries its own inputs and shapes; "
                                 "pass it without example_inputs or dynamic_shapes")
            ep = module_or_ep
        elif isinstance(module_or_ep, torch.nn.Module):
            if example_inputs is None:
                raise ValueError("cortexm.export: example_inputs are needed to capture an nn.Module")
            if not isinstance(example_inputs, (tuple, list)):
                example_inputs = (example_inputs,)
            module = module_or_ep
            training = {m: m.training for m in module.modules()}
            for m in module.modules():  # not module.eval(): PT2E-converted graphs refuse it
                m.training = False
            try:
                ep = torch.export.export(module, tuple(example_inputs), dynamic_shapes=dynamic_shapes,
                                         strict=False)
            finally:
                for m, mode in training.items():
                    m.training = mode
        else:
            raise TypeError("cortexm.export takes a torch.nn.Module or a torch.export.ExportedProgram, got "
                            f"{type(module_or_ep).__name__}")
        if decompose:
            ep = ep.run_decompositions(decomposition_table())
    return ep
