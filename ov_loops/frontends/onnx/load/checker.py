"""The ONNX checker, with one-line errors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ov_loops.errors import InputError
from ov_loops.frontends.onnx.load.weights import external_tensors
from ov_loops.frontends.onnx.proto import schema


def check_model(model: schema.ModelProto) -> schema.ModelProto:
    """Run the ONNX checker, which (unlike onnxruntime) insists on typed, shaped graph I/O;
    return the model unchanged.

    Main-graph inputs and outputs without a type or shape are given a placeholder one for the
    duration of the check only; so are tensors kept in files an empty value (the checker finds
    files relative to the current directory; loading checked them: frontends.onnx.load.weights).
    """
    import onnx.checker  # onnx's C++ extension and op-schema registry (proto/schema.py)

    patched = []
    for value in (*model.graph.input, *model.graph.output):
        if not value.type.WhichOneof("value"):
            value.type.tensor_type.elem_type = schema.TensorProto.FLOAT
            patched.append((value, "type"))
        if value.type.HasField("tensor_type") and not value.type.tensor_type.HasField("shape"):
            value.type.tensor_type.shape.SetInParent()
            patched.append((value, "shape"))
    try:
        with _external_tensors_empty(model):
            onnx.checker.check_model(model)
    except onnx.checker.ValidationError as exc:
        raise InputError(f"invalid ONNX model: {one_line(str(exc))}") from None
    except ValueError as exc:  # protobuf too large for the in-memory checker
        raise Unchecked(f"cannot check model: {exc}") from None
    finally:
        for value, field in reversed(patched):
            if field == "type":
                value.ClearField("type")
            else:
                value.type.tensor_type.ClearField("shape")
    return model


class Unchecked(InputError):
    """The checker could not check the model (not a refusal of it)."""


def one_line(message: str, limit: int = 400) -> str:
    """The checker's message on one line: its lines joined (the node it names is often on the
    second, its "==> Context:" after a blank one), cut at `limit` characters."""
    text = " ".join(line.strip() for line in message.splitlines() if line.strip()) or "invalid"
    return text if len(text) <= limit else text[: limit - 3] + "..."


@contextmanager
def _external_tensors_empty(model: schema.ModelProto) -> Iterator[None]:
    """Each tensor kept in a file made an empty tensor of its type ([0], no data) meanwhile."""
    saved = []
    for tensor in external_tensors(model):
        kept = schema.TensorProto()
        kept.CopyFrom(tensor)
        saved.append((tensor, kept))
        tensor.ClearField("external_data")
        tensor.ClearField("data_location")
        del tensor.dims[:]
        tensor.dims.append(0)
    try:
        yield
    finally:
        for tensor, kept in saved:
            tensor.CopyFrom(kept)
