"""The translation registry and the walk over a FunctionGraph.

    ov_translate(op, node, inputs) -> one openvino.Output per output of `node`
    translate_graph(fgraph, inputs): for node in fgraph.toposort(): values[node.outputs] =
        ov_translate(node.op, node, values[node.inputs]); return values[fgraph.outputs]

An Op family registers its translation with `@ov_translate.register(OpClass)`; `unsupported`
lists, before anything is built, the Ops of a graph (and of the graphs inside its Ops) that have
none.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import singledispatch

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.convert_options import ConvertOptions
from ov_loops.errors import ConversionError
from ov_loops.frontends.pytensor.generators import key_of

# PyTensor rewrites whose results have no translation here (C-only and BLAS Ops, in-place
# variants, the preallocated scan buffers, solves split into an LU factorisation and triangular
# solves): the mode and the scans' inner graphs exclude them.
INCOMPATIBLE_REWRITES = (
    "cxx_only",
    "BlasOpt",
    "local_careduce_fusion",
    "scan_save_mem_prealloc",
    "inplace",
    "reuse_decomposition_multiple_solves",
    "scan_split_non_sequence_decomposition_and_solve",
)


# Scans are lowered at level max by default: partial unrolling and the other passes cut Loop-5's
# per-iteration cost (a 60-step PyMC logp+dlogp: 1.9 ms at level none, 0.38 ms at max).
DEFAULT_SCAN_OPTIONS = ConvertOptions(optimize="max")
# How the scans of the graph being translated are lowered (the linker's `optimize` and target).
_SCAN_OPTIONS: ContextVar[ConvertOptions] = ContextVar("scan_options", default=DEFAULT_SCAN_OPTIONS)


@contextmanager
def scans_lowered_with(options: ConvertOptions) -> Iterator[None]:
    """Translate the scans inside this block with `options` (`scan_options()` returns them)."""
    token = _SCAN_OPTIONS.set(options)
    try:
        yield
    finally:
        _SCAN_OPTIONS.reset(token)


# The FunctionGraph being translated (translate_graph sets it; an inner graph's within its Op).
_GRAPH: ContextVar[object] = ContextVar("graph", default=None)


def clients(variable) -> list:
    """The (node, input index) pairs reading `variable` in the graph being translated (an
    output of the graph is read by an Output node)."""
    graph = _GRAPH.get()
    return list(graph.clients.get(variable, ())) if graph is not None else []


def scan_options() -> ConvertOptions:
    """The options the scans being translated are lowered with (`scans_lowered_with`)."""
    return _SCAN_OPTIONS.get()


class UnsupportedOpError(ConversionError):
    """A PyTensor graph holds Ops the OpenVINO backend cannot translate: the message names them."""


@singledispatch
def ov_translate(op, node, inputs: list[ov.Output]) -> list[ov.Output]:
    """The OpenVINO values of `node`'s outputs, given its inputs' values."""
    raise UnsupportedOpError(f"no OpenVINO translation for the PyTensor Op {op}")


@singledispatch
def inner_ops(op) -> list:
    """The Ops inside `op` that must be translatable too (an Elemwise's scalar Op, the nodes of
    a Composite's or a Scan's graph)."""
    return []


def translatable(op) -> bool:
    """Whether `op`'s type has a translation of its own (not the failing default)."""
    return ov_translate.dispatch(type(op)) is not ov_translate.dispatch(object)


def graph_ops(fgraph) -> list:
    """The Ops of `fgraph`'s nodes, in order."""
    return [node.op for node in fgraph.toposort()]


def unsupported(ops_found) -> list[str]:
    """The Ops among `ops_found` and inside them with no translation, each named once."""
    found: dict[str, None] = {}
    for op in ops_found:
        if not translatable(op):
            found.setdefault(str(op))
        found.update(dict.fromkeys(unsupported(inner_ops(op))))
    return list(found)


def check_supported(fgraph) -> None:
    """Raise UnsupportedOpError naming every untranslatable Op of `fgraph`, if any."""
    missing = unsupported(graph_ops(fgraph))
    if missing:
        raise UnsupportedOpError(
            f"no OpenVINO translation for the PyTensor Op{'s' if len(missing) > 1 else ''} "
            + ", ".join(missing)
        )


def element_type(dtype) -> ov.Type:
    """The OpenVINO element type of a numpy / PyTensor dtype."""
    return ov.Type(np.dtype(dtype))


def constant(data) -> ov.Output | slice | None:
    """A PyTensor Constant's data as an OpenVINO Constant (a Generator as its key; None, an
    absent argument such as a RandomVariable's size, and a slice, an index of PyTensor 2's
    AdvancedSubtensor, as they are)."""
    if data is None or isinstance(data, slice):
        return data
    if isinstance(data, np.random.Generator):
        data = key_of(data)
    return ops.constant(np.asarray(data)).output(0)


def i64(*values: int) -> ov.Output:
    """Integers as an i64 vector Constant."""
    return ops.constant(np.array(values, np.int64)).output(0)


def cast(value: ov.Output, dtype) -> ov.Output:
    """`value` converted to `dtype` (unchanged if it already is)."""
    target = element_type(dtype)
    if value.get_element_type() == target:
        return value
    return ops.convert(value, target).output(0)


def translate_graph(fgraph, inputs: list[ov.Output]) -> list[ov.Output]:
    """The values of `fgraph`'s outputs given its inputs' values (see the module docstring)."""
    token = _GRAPH.set(fgraph)
    try:
        return _translate_nodes(fgraph, dict(zip(fgraph.inputs, inputs)))
    finally:
        _GRAPH.reset(token)


def _translate_nodes(fgraph, values: dict) -> list[ov.Output]:
    """translate_graph's walk, `values` holding the inputs' values."""

    def value_of(variable) -> ov.Output:
        if variable not in values:  # a Constant
            values[variable] = constant(variable.data)
        return values[variable]

    for node in fgraph.toposort():
        try:
            outputs = ov_translate(node.op, node, [value_of(v) for v in node.inputs])
        except NotImplementedError as error:
            raise UnsupportedOpError(
                f"cannot translate the PyTensor Op {node.op}: {error}"
            ) from None
        for variable, value in zip(node.outputs, outputs):
            values[variable] = cast(value, variable.type.dtype) if _typed(variable) else value
    return [value_of(variable) for variable in fgraph.outputs]


def _typed(variable) -> bool:
    """Whether a variable has a numeric dtype its value must have (tensors and scalars do)."""
    return (
        isinstance(getattr(variable.type, "dtype", None), str) and variable.type.dtype != "object"
    )
