"""Rewrite: a graph input typed without a shape takes the shape the loop body it enters declares.

onnxruntime's test harness (and some hand-written models) types graph inputs with an element
type and no shape, and the Loop or Scan body with shapes. onnxruntime runs them: it feeds the
values and the body reads them as its types say. OpenVINO makes such an input a Parameter of
dynamic rank, which a Loop-5 port (and the CPU plugin's Parameter) cannot have::

    x: float (no shape)  -> Loop(M, cond, x) whose body input 2 is float[2]
        => x: float[2]
    M: int64, cond: bool (no shapes) -> Loop(M, cond, ...) whose body inputs 0 and 1 (the
        iteration number and condition) are declared [] (or [1])
        => M: int64[], cond: bool[]   (or [1]: onnxruntime takes either, OpenVINO one of them)
    x: float (no shape)  -> Scan-9+ (..., x) scanning x along axis a (scan_input_axes, 0 by
        default), whose body reads float[3, ?] parts
        => x: float[?, 3, ?]   (a = 0: the parts' dims with an unknown one inserted at a)

Only main-graph inputs without any shape change, and only when every loop that takes one
declares the same shape for it (else it is left as it is). The dims a loop-carried value
gets are the body's numbers (symbols become unknown dims): a value fed with other dims is then
refused by OpenVINO when the request is made, as for any input of a declared shape.
"""

from __future__ import annotations

from ov_loops.errors import ConversionError
from ov_loops.frontends.onnx.ops.registry import is_loop_op, lookup
from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.opsets import opset_version
from ov_loops.frontends.onnx.proto.scopes import all_graphs

Dims = tuple[int | None, ...]


def shapeless_inputs_take_declared_shapes(model: schema.ModelProto) -> schema.ModelProto:
    """Give each shapeless tensor input of the main graph the shape the loop bodies that take
    it declare (module docstring); the model, changed in place."""
    shapeless = {
        value.name: value
        for value in model.graph.input
        if value.type.HasField("tensor_type") and not value.type.tensor_type.HasField("shape")
    }
    if not shapeless:
        return model
    wanted: dict[str, set[Dims | None]] = {}
    for graph, _ in all_graphs(model.graph, "main"):
        for node in graph.node:
            for name, dims in _declared_feeds(model, node):
                if name in shapeless:
                    wanted.setdefault(name, set()).add(dims)
    for name, shapes in wanted.items():
        if len(shapes) == 1 and None not in shapes:
            _declare(shapeless[name], next(iter(shapes)))
    return model


def _declared_feeds(
    model: schema.ModelProto, node: schema.NodeProto
) -> list[tuple[str, Dims | None]]:
    """(input name, the shape the node's body declares for it, or None) for each input of a
    loop op that says what its body receives (its class in the registry: `declared_feeds`);
    a scanned input has the part's dims with an unknown one inserted at its scan axis."""
    if not is_loop_op(node):
        return []
    try:
        op = lookup(node, opset_version(model, node.domain))
    except ConversionError:  # not in this opset: the driver refuses it
        return []
    feeds = []
    for name, value, axis in op.declared_feeds(node):
        dims = _dims(value)
        if axis is not None and dims is not None:
            at = axis % (len(dims) + 1)
            dims = (*dims[:at], None, *dims[at:])
        feeds.append((name, dims))
    return feeds


def _dims(value: schema.ValueInfoProto) -> Dims | None:
    tensor = value.type.tensor_type
    if not (value.type.HasField("tensor_type") and tensor.HasField("shape")):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim)


def _declare(value: schema.ValueInfoProto, dims: Dims) -> None:
    shape = value.type.tensor_type.shape
    shape.SetInParent()
    for length in dims:
        dim = shape.dim.add()
        if length is not None:
            dim.dim_value = length
