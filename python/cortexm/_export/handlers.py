"""The export tables, and the values handlers return besides graph Values. It needs no torch: the
family modules of cortexm.ops register their handlers here with @handles (and keep_whole,
makes_infinity) when cortexm is imported; convert.py walks a captured program with HANDLERS."""

from __future__ import annotations


class HandlerTable(dict):
    """torch op name -> handler(cx, args), filled by @handles decorators."""

    def handles(self, *names):
        def register(fn):
            for name in names:
                if name in self:
                    raise ValueError(f"{name} has two handlers: {self[name].__name__} and {fn.__name__}")
                self[name] = fn
            return fn

        return register


HANDLERS = HandlerTable()
handles = HANDLERS.handles

# aten ops the capture keeps whole, though torch's default decompositions would expand them: the graph
# has them as single ops (capture.decomposition_table).
KEPT_WHOLE: set[str] = set()
# torch ops that give an infinity for some finite input (log(0), x / 0, 0 ** -1, exp(100)): what
# safe_softmax must rule out before it drops softmax's fully-masked-row branch.
INFINITY_MAKING: set[str] = set()


def keep_whole(*ops: str) -> None:
    KEPT_WHOLE.update(ops)


def makes_infinity(*ops: str) -> None:
    INFINITY_MAKING.update(ops)


# What to do instead of a torch op export refuses, registered by its family module with @instead:
# op -> text, and (op, module class name) -> text where the op comes from inside a known module
# (the flip of a bidirectional nn.LSTM).
INSTEAD: dict = {}
# An op with no known rewrite.
GENERIC_INSTEAD = ("rewrite it with ops docs/ops.md lists as exported, or compute it outside the model "
                   "(cortexm.check(model, example_inputs) lists every such op at once)")


def instead(op: str, text: str, module: str | None = None) -> None:
    key = op if module is None else (op, module)
    if key in INSTEAD:
        raise ValueError(f"{key} has two suggestions")
    INSTEAD[key] = text


def suggestion(op: str, module_class: str = "") -> str:
    """What to do instead of op (found inside a module of class module_class)."""
    return INSTEAD.get((op, module_class)) or INSTEAD.get(op) or GENERIC_INSTEAD


def refusal(message: str, instead_text: str) -> str:
    """One refusal: what is wrong, then what to do instead."""
    return f"{message}: {instead_text}"


class Const:
    """A tensor of the program (parameter, buffer, lifted constant, get_attr)."""

    __slots__ = ("tensor", "name", "value")

    def __init__(self, tensor, name: str):
        self.tensor = tensor.detach()
        self.name = name
        self.value = None  # its graph constant, once used


class Unavailable:
    """An output the graph does not compute (max-pool indices, batch-norm statistics)."""

    __slots__ = ("what",)

    def __init__(self, what: str):
        self.what = what


# --- argument helpers handlers share ----------------------------------------------------------


def ints(v, n: int | None = None) -> list[int]:
    """An int or int list as a list (a single int repeated n times when n is given)."""
    if isinstance(v, (list, tuple)):
        return [int(x) for x in v]
    return [int(v)] * (n or 1)


def dim(d: int, rank: int) -> int:
    if not -max(rank, 1) <= d < max(rank, 1):
        raise IndexError(f"dim {d} is out of range for rank {rank}")
    return d % rank if rank else 0


def is_scalar(x) -> bool:
    return isinstance(x, (bool, int, float))


def scalar_value(cx, v, what: str):
    """A Python number, or the value of a one-element constant tensor."""
    if v is None or is_scalar(v):
        return v
    data = cx.const(v)
    if data is None or data.numel() != 1:
        raise cx.unsupported(f"{cx.node.target} with a {what} computed at run time",
                             f"make the {what} a Python number or a constant of the model (a parameter or buffer)")
    return data.item()


def require_float_dtype(cx, dtype):
    """A dtype argument (softmax's, a reduction's) must be absent or float32."""
    if dtype is not None and cx.graph_dtype(dtype) != "float32":
        raise cx.unsupported(f"{cx.node.target} with dtype={dtype}",
                             "drop the dtype argument (float32) and cast the result outside the model")
