"""Structural checks of a model, without onnx's checker (which needs its C++ extension and
op-schema registry: proto/schema.py).

`ov_loops.convert` runs the ONNX checker only when reading or converting fails, to word the
refusal (load.checked_on_failure). Models the checker refuses and OpenVINO's frontend converts
anyway are refused here instead, for the faults the fuzz campaign of mutated loop models found
in them (docs/reliability.md), each as the ONNX IR spec states it:

    1 <= ir_version <= the newest this onnx knows; before IR 3 there is no opset_import
    ir_version < 4: every initializer of the main graph is also a graph input
    a tensor's raw_data holds at least the bytes its element type and dims need
    a graph defines each name once (SSA): its inputs differ, and node outputs differ from each
        other and from the graph's inputs and initializers
    a Loop or Scan node has no attribute its op does not define (registry: layout.attributes)

What still needs the op schemas (an op its opset does not have yet, a required attribute of
another op missing, an attribute of the wrong type) is left to OpenVINO's frontend: it refuses
most of them (the checker then words the refusal) and converts a few.
"""

from __future__ import annotations

from ov_loops.errors import ConversionError, InputError
from ov_loops.frontends.onnx.load.weights import all_tensors, byte_size
from ov_loops.frontends.onnx.ops.registry import is_loop_op, lookup
from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.opsets import opset_version
from ov_loops.frontends.onnx.proto.schema import IR_VERSION
from ov_loops.frontends.onnx.proto.scopes import all_graphs, node_label

_INITIALIZERS_AS_INPUTS = 4  # IR 4 let initializers be other than graph inputs


def check_structure(model: schema.ModelProto) -> schema.ModelProto:
    """Raise InputError ("invalid ONNX model: ...") for the first fault of the module docstring;
    return the model unchanged."""
    fault = _version_fault(model) or _tensor_fault(model) or _graph_fault(model)
    if fault:
        raise InputError(f"invalid ONNX model: {fault}")
    return model


def _version_fault(model: schema.ModelProto) -> str | None:
    version = model.ir_version
    if not 3 <= version <= IR_VERSION:
        return f"ir_version {version} is not one of 3 to {IR_VERSION} (this onnx's newest)"
    if version < _INITIALIZERS_AS_INPUTS:
        inputs = {value.name for value in model.graph.input}
        for tensor in model.graph.initializer:
            if tensor.name not in inputs:
                return f"initializer '{tensor.name}' is not a graph input (ir_version {version})"
    return None


def _tensor_fault(model: schema.ModelProto) -> str | None:
    for tensor in all_tensors(model):
        if not tensor.HasField("raw_data") or tensor.data_location == schema.TensorProto.EXTERNAL:
            continue
        needed = byte_size(tensor)
        if needed is not None and len(tensor.raw_data) < needed:
            return (
                f"tensor '{tensor.name}' has {len(tensor.raw_data)} bytes of raw_data, its type "
                f"and dims need {needed}"
            )
    return None


def _graph_fault(model: schema.ModelProto) -> str | None:
    for graph, path in all_graphs(model.graph, "main"):
        defined: set[str] = set()
        for value in graph.input:
            if value.name in defined:
                return f"{path}: input '{value.name}' is declared twice (not SSA)"
            defined.add(value.name)
        defined.update(tensor.name for tensor in graph.initializer)
        for index, node in enumerate(graph.node):
            label = f"{path}/{node_label(node, index)}"
            for name in filter(None, node.output):
                if name in defined:
                    return f"{label}: '{name}' is defined twice in its graph (not SSA)"
                defined.add(name)
            if is_loop_op(node):
                fault = _attribute_fault(node, label, opset_version(model, node.domain))
                if fault:
                    return fault
    return None


def _attribute_fault(node: schema.NodeProto, label: str, opset: int | None) -> str | None:
    try:
        known = lookup(node, opset).attributes
    except ConversionError:  # not translated in this opset: the conversion refuses it
        return None
    for attr in node.attribute:
        if attr.name not in known:
            return f"{label}: {node.op_type} has no attribute '{attr.name}'"
    return None
