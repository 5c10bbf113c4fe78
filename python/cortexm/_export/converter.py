"""The converter: walks an ExportedProgram's FX graph and builds the cortexm.Graph, calling one
handler per torch op from a handler table (handlers.HANDLERS, which the family modules of cortexm.ops fill).

Each FX value maps to one of: a graph Value; a Const (a tensor of the program, added to the graph
only when a node reads it as a tensor, so handlers can read qparams and batch-norm statistics
without making graph constants of them); a Python value (ints, floats, lists, None); a tuple of
those (multi-output ops); or an Unavailable output the graph does not compute.
"""

from __future__ import annotations

import operator

import numpy as np
import torch
from torch.export.graph_signature import InputKind, OutputKind

from .._core import Graph, GraphError, UnsupportedError, Value
from .handlers import Const, Unavailable, refusal, suggestion

DTYPES = {
    torch.float32: "float32",
    torch.int8: "int8",
    torch.uint8: "uint8",
    torch.int16: "int16",
    torch.int32: "int32",
    torch.int64: "int64",
    torch.bool: "bool",
}


class Refused:
    """The value of a node export refused (its problem is listed). A node reading it is skipped,
    and listed only when its own op is unsupported too."""

    __slots__ = ()


REFUSED = Refused()


def reads_refused(node: torch.fx.Node, env: dict) -> bool:
    inputs = []
    torch.fx.node.map_arg((node.args, node.kwargs), inputs.append)
    return any(env.get(n) is REFUSED for n in inputs)


def module_path(node: torch.fx.Node) -> str:
    """The innermost module of node.meta['nn_module_stack'], e.g. 'encoder.3.conv' ('' = the root)."""
    stack = node.meta.get("nn_module_stack")
    return list(stack.values())[-1][0] if stack else ""


def module_class(node: torch.fx.Node) -> str:
    """The class name of the innermost module ('LSTM'), '' for the root."""
    stack = node.meta.get("nn_module_stack")
    if not stack:
        return ""
    cls = list(stack.values())[-1][1]
    return cls.__name__ if isinstance(cls, type) else str(cls).rsplit(".", 1)[-1].strip("'>")


def op_name(target) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return str(target)  # aten.erfinv.default
    if isinstance(target, torch._ops.HigherOrderOperator):
        return f"higher_order.{target.name()}"
    return torch.fx.node._get_qualified_name(target)


def concrete(x):
    """A symbolic size is fixed at its example value: cortexm graphs are static."""
    if isinstance(x, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        hint = x.node.hint
        if hint is None:
            raise UnsupportedError(refusal(f"cortexm.export: the data-dependent size {x} is not supported",
                                           "give every size and scalar as a number, or compute it from input "
                                           "shapes (x.shape[1]), not from input values (.item())"))
        return {torch.SymInt: int, torch.SymFloat: float, torch.SymBool: bool}[type(x)](hint)
    if isinstance(x, (list, tuple)):
        return type(x)(concrete(v) for v in x)
    return x


def dtype_name(dtype: torch.dtype, what: str) -> str:
    if dtype not in DTYPES:
        raise UnsupportedError(refusal(f"cortexm.export: {what} has dtype {dtype}, which cortexm does not support",
                                       f"give it as one of {', '.join(sorted(set(DTYPES.values())))} "
                                       "(float32 for float models)"))
    return DTYPES[dtype]


class Converter:
    """Handlers see this as `cx`: tensor(), const(), call(), shape() and friends."""

    def __init__(self, ep: torch.export.ExportedProgram, handlers: dict):
        self.ep = ep
        self.handlers = handlers
        self.graph = Graph()
        self.env: dict[torch.fx.Node, object] = {}
        self.node: torch.fx.Node | None = None  # the FX node being converted
        self.source = ""
        self.problems: list[tuple[str, str, str]] = []  # (op, module path, message), in graph order

    # --- the walk -------------------------------------------------------------------------------

    def run(self) -> Graph:
        """Converts every node it can; raises one UnsupportedError listing every unsupported op (its
        ``problems`` attribute: [(op, module path, message)])."""
        specs = {spec.arg.name: spec for spec in self.ep.graph_signature.input_specs}
        for node in self.ep.graph.nodes:
            self.node, self.source = node, module_path(node)
            try:
                if node.op == "placeholder":
                    self.env[node] = self.placeholder(node, specs[node.name])
                elif node.op == "get_attr":
                    self.env[node] = self.get_attr(node)
                elif node.op == "call_function":
                    self.env[node] = self.call_function(node)
                elif node.op == "output":
                    if not self.problems:
                        self.set_outputs(node)
                else:
                    raise self.unsupported(f"FX {node.op} node '{node.name}'",
                                           "export the model with torch.export.export (its nodes are "
                                           "call_function, placeholder, get_attr and output)")
            except UnsupportedError as e:
                self.refuse(node, str(e))
        if self.problems:
            raise self.all_problems()
        self.graph.dead_code_elimination()
        self.graph.verify()
        return self.graph

    def refuse(self, node, message: str):
        op = op_name(node.target) if node.op == "call_function" else f"FX {node.op}"
        problem = (op, self.source, message)
        if problem not in self.problems:
            self.problems.append(problem)
        self.env[node] = REFUSED

    def all_problems(self) -> UnsupportedError:
        if len(self.problems) == 1:
            error = UnsupportedError(self.problems[0][2])
        else:
            lines = [m.removeprefix("cortexm.export: ") for _, _, m in self.problems]
            error = UnsupportedError(f"cortexm.export: {len(lines)} unsupported ops:\n  " + "\n  ".join(lines))
        error.problems = list(self.problems)
        return error

    def placeholder(self, node, spec):
        if spec.kind == InputKind.USER_INPUT:
            val = node.meta.get("val")
            if not isinstance(val, torch.Tensor):
                return concrete(val)  # a non-tensor input, specialized by torch.export
            return self.graph.add_input(node.name, list(concrete(tuple(val.shape))),
                                        dtype_name(val.dtype, f"input '{node.name}'"))
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            store = self.ep.state_dict if spec.target in self.ep.state_dict else self.ep.constants
            tensor = store[spec.target]
            if isinstance(tensor, torch.Tensor):
                return Const(tensor, spec.target)
        raise self.unsupported(f"program input '{node.name}' ({spec.kind.name})",
                               "make it a tensor input, parameter, buffer or constant tensor")

    def get_attr(self, node):
        obj = self.ep.graph_module
        for part in node.target.split("."):
            obj = getattr(obj, part)
        if not isinstance(obj, torch.Tensor):
            raise self.unsupported(f"get_attr of {type(obj).__name__} '{node.target}'",
                                   "make it a tensor (a parameter or buffer) of the model")
        return Const(obj, node.target)

    def call_function(self, node):
        val = node.meta.get("val")
        if isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return concrete(val)  # size arithmetic (sym_size, operator.mul, ...)
        getitem = node.target is operator.getitem
        handler = None if getitem else self.handlers.get(op_name(node.target))
        if handler is None and not getitem:
            raise self.unsupported()
        if reads_refused(node, self.env):
            return REFUSED  # an input was refused: its problem is already listed
        if getitem:
            return self.getitem(node)
        result = handler(self, self.bind(node))
        self.check(result, val)
        return result

    def getitem(self, node):
        src, index = node.args
        parts = self.env[src]
        if not isinstance(parts, (tuple, list)):
            raise self.unsupported(f"{op_name(node.target)} of a {type(parts).__name__}",
                                   "index only the tuple outputs of ops (torch.split, max with dim)")
        item = parts[index]
        if isinstance(item, Unavailable) and node.users:
            self.source = module_path(src)
            raise UnsupportedError(refusal(f"cortexm.export: {op_name(src.target)}{self.where()}: its {item.what} "
                                           "output is used, which cortexm does not compute",
                                           f"use only its first output (return_indices=False for a max pool), "
                                           f"and compute the {item.what} outside the model if you need it"))
        return item

    def set_outputs(self, node):
        outputs = []
        for spec, arg in zip(self.ep.graph_signature.output_specs, node.args[0]):
            if spec.kind != OutputKind.USER_OUTPUT:
                raise UnsupportedError(refusal(f"cortexm.export: the program updates '{spec.target}' "
                                               f"({spec.kind.name}); cortexm graphs have no state",
                                               "give the state as an input and return its new value as an "
                                               "output (the caller feeds it back: state_feedback in "
                                               "CortexMQuantizer)"))
            value = self.env[arg] if isinstance(arg, torch.fx.Node) else arg
            if not isinstance(value, (Value, Const)):
                raise UnsupportedError(refusal(f"cortexm.export: output '{spec.arg.name}' is {value!r}, not a tensor",
                                               "return only tensors computed from the inputs; give constants "
                                               "outside the model"))
            outputs.append(self.tensor(value))
        self.graph.outputs = outputs

    def bind(self, node) -> dict:
        """The op's arguments by schema name, defaults filled, FX nodes replaced by their values."""
        args = {}
        for i, arg in enumerate(node.target._schema.arguments):
            if i < len(node.args) and not arg.kwarg_only:
                v = node.args[i]
            elif arg.name in node.kwargs:
                v = node.kwargs[arg.name]
            else:
                v = arg.default_value if arg.has_default_value() else None
            args[arg.name] = torch.fx.node.map_arg(v, self.env.__getitem__)
        return args

    def check(self, result, val):
        """Graph inference must agree with torch's shapes and dtypes."""
        pairs = zip(result, val) if isinstance(result, tuple) and isinstance(val, (tuple, list)) else [(result, val)]
        for got, want in pairs:
            if isinstance(got, Value) and isinstance(want, torch.Tensor):
                shape, dtype = tuple(concrete(tuple(want.shape))), DTYPES.get(want.dtype, str(want.dtype))
                if got.shape != shape or got.dtype != dtype:
                    raise GraphError(f"cortexm.export: {op_name(self.node.target)}{self.where()}: the graph gives "
                                     f"{got.dtype}{list(got.shape)}, torch {dtype}{list(shape)}")

    # --- for handlers ---------------------------------------------------------------------------

    def where(self) -> str:
        return f" in module '{self.source}'" if self.source else " in the top-level module"

    def unsupported(self, what: str | None = None, instead: str | None = None) -> UnsupportedError:
        """The error for what the node does (default: its op), naming the module it came from, then
        what to do instead (default: the op's registered suggestion, handlers.INSTEAD)."""
        if instead is None:
            instead = suggestion(op_name(self.node.target), module_class(self.node))
        what = what or op_name(self.node.target)
        return UnsupportedError(refusal(f"cortexm.export: {what}{self.where()} is not supported", instead))

    def tensor(self, x) -> Value | None:
        """x as a graph value (None stays None); a Const enters the graph here."""
        if x is None or isinstance(x, Value):
            return x
        if isinstance(x, Const):
            if x.value is None:
                data = x.tensor.cpu().contiguous()
                dtype_name(data.dtype, f"constant '{x.name}'")
                x.value = self.graph.add_constant(x.name, data.numpy())
            return x.value
        if isinstance(x, Unavailable):
            raise self.unsupported(f"use of the {x.what} output",
                                   f"use only the op's first output, and compute the {x.what} outside the "
                                   "model if you need it")
        raise self.unsupported(f"{op_name(self.node.target)} with a {type(x).__name__} where a tensor is expected",
                               "pass a tensor there (torch.tensor / torch.full as a buffer of the model)")

    def const(self, x) -> torch.Tensor | None:
        """The data of a program constant, None for values computed at run time."""
        return x.tensor if isinstance(x, Const) else None

    def shape(self, x) -> tuple:
        return tuple(x.tensor.shape) if isinstance(x, Const) else self.tensor(x).shape

    def out_shape(self) -> list:
        """The shape torch gives the node's (first) output."""
        val = self.node.meta["val"]
        val = val[0] if isinstance(val, (tuple, list)) else val
        return list(concrete(tuple(val.shape)))

    def out_dtype(self) -> torch.dtype:
        val = self.node.meta["val"]
        return (val[0] if isinstance(val, (tuple, list)) else val).dtype

    def dtype(self, x) -> str:
        return DTYPES.get(x.tensor.dtype, str(x.tensor.dtype)) if isinstance(x, Const) else self.tensor(x).dtype

    def op_name(self, fx_node: torch.fx.Node | None = None) -> str:
        """The op of the node being converted (or of fx_node, one of its inputs), e.g. 'aten.conv2d.default'."""
        return op_name((self.node if fx_node is None else fx_node).target)

    def graph_dtype(self, dtype: torch.dtype) -> str | None:
        """The graph's name of a torch dtype ('float32'), None for a dtype the graph does not have."""
        return DTYPES.get(dtype)

    def full(self, value) -> Const:
        """A program constant of the node's output shape and dtype, every element `value`."""
        return Const(torch.full(self.out_shape(), value, dtype=self.out_dtype()), self.node.name)

    def add_constant(self, name: str, data: np.ndarray) -> Value:
        return self.graph.add_constant(name, data)

    def call(self, op: str, inputs: list, attrs: dict | None = None):
        """Adds a graph node for the current FX node; returns its Value (or tuple of Values)."""
        ins = [self.tensor(x) for x in inputs]
        try:
            return self.graph.call(op, ins, attrs or {}, name=self.node.name, source=self.source)
        except (UnsupportedError, GraphError) as e:
            raise type(e)(f"cortexm.export: {op_name(self.node.target)}{self.where()}: {e}") from e

