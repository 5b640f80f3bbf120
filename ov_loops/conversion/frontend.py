"""OpenVINO's ONNX frontend as the driver uses it: one FrontEnd per conversion, with an extension
expanding the loop placeholders, that converts a graph partially (ops without a conversion stay
as framework nodes, for the driver to report) and normalises the result."""

from __future__ import annotations

import contextlib
import io
import os
import weakref
from collections.abc import Callable, Iterator

import openvino as ov
from openvino.frontend import FrontEndManager
from openvino.frontend.onnx import ConversionExtension

from ov_loops.errors import ConversionError, message_line
from ov_loops.frontends.onnx.proto import schema


class Frontend:
    """OpenVINO's ONNX FrontEnd whose extension calls `expand` for every placeholder of the
    `ops` (op types) in the placeholders' `domain`."""

    def __init__(self, expand: Callable, ops: list[str], domain: str) -> None:
        self._frontend = FrontEndManager().load_by_framework("onnx")
        callback = _weak_callback(expand)
        for op in ops:
            self._frontend.add_extension(ConversionExtension(op, domain, callback))

    def convert(
        self,
        model: schema.ModelProto,
        path: str,
        input_shapes: dict[str, ov.PartialShape],
        files_root: str | None = None,
    ) -> ov.Model:
        """`model` converted as far as the frontend can (the graph at `path`, for errors), its
        inputs given `input_shapes`; ConversionError when OpenVINO fails. `files_root`: the
        working directory to convert from, the root of the files the model's tensors name
        (weights.refer_to_files); the previous one is restored after."""
        try:
            with _working_directory(files_root):
                loaded = self._frontend.load(io.BytesIO(model.SerializeToString()))
                _set_input_shapes(loaded, input_shapes)
                return self._frontend.convert_partially(loaded)
        except Exception as exc:  # OpenVINO raises plain RuntimeErrors with long messages
            raise ConversionError(f"{path}: OpenVINO cannot convert: {message_line(exc)}") from None

    def normalize(self, model: ov.Model) -> None:
        self._frontend.normalize(model)


@contextlib.contextmanager
def _working_directory(directory: str | None) -> Iterator[None]:
    """Change the process's working directory to `directory` (None: leave it) for the `with`."""
    if directory is None:
        yield
        return
    previous = os.getcwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(previous)


def _set_input_shapes(loaded, shapes: dict[str, ov.PartialShape]) -> None:
    """Give the frontend the main graph's input shapes, bounded dims (which the ONNX model
    cannot state) included; an input nothing reads has no place (with_declared_inputs)."""
    for name, shape in shapes.items():
        place = loaded.get_place_by_tensor_name(name)
        if place is not None:
            loaded.set_partial_shape(place, shape)


def _weak_callback(method):
    """A callable for the frontend's ConversionExtension that does not keep the method's object
    alive: the FrontEnd holds the extension in C++, so a bound method there would make a cycle
    (object -> FrontEnd -> extension -> object) that Python's collector cannot see, and every
    Converter would leak with its models and graphs."""
    reference = weakref.WeakMethod(method)

    def call(*args):
        return reference()(*args)

    return call
