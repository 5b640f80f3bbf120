"""`check --specialise`: the device runs the model specialised to the check's inputs, as
`ov_loops.compile` makes it for a call with them (ov_loops.specialising): an .onnx converted
with `input` set to the inputs' shapes and element types, an .xml reshaped to them."""

from __future__ import annotations

from pathlib import Path

import onnx
import openvino as ov

from ov_loops.conversion.report import Conversion
from ov_loops.convert_options import ConvertOptions
from ov_loops.specialising.compiled import OnnxSource, naming, reshaped
from ov_loops.specialising.signature import Signature, call_signature, ir_slots, onnx_slots


def specialised_conversion(
    path: Path, options: ConvertOptions, model: onnx.ModelProto, feeds: dict
) -> tuple[Conversion, Signature]:
    """The conversion of the .onnx at `path` (whose graph is `model`) for `feeds`' signature,
    with `options` otherwise, and that signature."""
    slots = onnx_slots(model)
    signature = call_signature(slots, feeds)
    with naming(signature):
        return OnnxSource(path, options, slots).conversion(signature), signature


def specialised_ir(model: ov.Model, feeds: dict, xml: Path) -> Signature:
    """Write `model` reshaped to `feeds`' signature as the IR `xml` (weights stored as they
    are); the signature."""
    signature = call_signature(ir_slots(model), feeds)
    with naming(signature):
        ov.save_model(reshaped(model, signature), str(xml), compress_to_fp16=False)
    return signature
