"""The ONNX checker, with one-line errors."""

from __future__ import annotations

import onnx

from ov_loops.errors import InputError


def check_model(model: onnx.ModelProto) -> onnx.ModelProto:
    """Run the ONNX checker, which (unlike onnxruntime) insists on typed, shaped graph I/O;
    return the model unchanged.

    Main-graph inputs and outputs without a type or shape are given a placeholder one for the
    duration of the check only.
    """
    patched = []
    for value in (*model.graph.input, *model.graph.output):
        if not value.type.WhichOneof("value"):
            value.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
            patched.append((value, "type"))
        if value.type.HasField("tensor_type") and not value.type.tensor_type.HasField("shape"):
            value.type.tensor_type.shape.SetInParent()
            patched.append((value, "shape"))
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid"
        raise InputError(f"invalid ONNX model: {first}") from None
    except ValueError as exc:  # protobuf too large for the in-memory checker
        raise InputError(f"cannot check model: {exc}") from None
    finally:
        for value, field in reversed(patched):
            if field == "type":
                value.ClearField("type")
            else:
                value.type.tensor_type.ClearField("shape")
    return model
