"""precision="auto" above the quantizer: cortexm.quantize, and the lowering the search of
quantizer/auto.py measures its candidate graphs with (lower, to_program, QEMU). The quantizer
package imports nothing of the pipeline; cortexm.quantize hands it LOWERING."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from . import qemu
from .passes import DATA_MOVEMENT, lower
from .build import to_program
from .quantizer import CortexMQuantizer
from .quantizer import quantize as _quantize

__all__ = ["Costs", "LOWERING", "Lowering", "quantize"]


@dataclass
class Costs:
    """A candidate graph lowered for the cost target: arena and constants are None when no program
    runs it (to_program raised NotImplementedError), instructions None when not counted."""

    float_ops: list
    arena: Optional[int]
    constants: Optional[int]
    instructions: Optional[int]


class Lowering:
    """What quantizer/auto.py's search asks of the pipeline (quantize_auto's docstring)."""

    @staticmethod
    def float_ops(qgraph, target, lowered=None) -> list:
        """The float compute ops left when qgraph is lowered for target."""
        lowered = lowered or lower(qgraph, target)
        return sorted(n.op for n in lowered.nodes if n.op.startswith("aten.") and n.op not in DATA_MOVEMENT)

    def costs(self, qgraph, target, inputs=None) -> Costs:
        """qgraph lowered for target, its program's sizes and, with inputs, the instructions its
        program executes on target's core under QEMU."""
        lowered = lower(qgraph, target)
        floats = self.float_ops(qgraph, target, lowered)
        try:
            program = to_program(lowered, target=target)
        except NotImplementedError:
            return Costs(floats, None, None, None)
        instructions = None
        if inputs is not None:
            instructions = qemu.run(program, inputs, target.split("+")[0], count_instructions=True).instructions
        return Costs(floats, program.arena_size, program.constant_size, instructions)


LOWERING = Lowering()


def quantize(graph, calibration, quantizer: CortexMQuantizer | None = None, *, progress: bool = True,
             precision: str | None = None):
    return _quantize(graph, calibration, quantizer, progress=progress, precision=precision, lowering=LOWERING)


quantize.__doc__ = _quantize.__doc__
