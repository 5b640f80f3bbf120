"""Writing the IR of a model nobody else holds without `ov.save_model`'s clone.

`ov.save_model` clones the model, marks its f32 Constants for a postponed f16 compression and
serialises the clone: on a graph of many ops (seq1000: 19,017 layers) the clone is the largest
part of the save's peak memory (+47 MiB over 122). `save_owned` writes the same files in place:
OpenVINO's f16 compression (`compress_model_transformation`, what save_model runs but not
postponed), the fused-names cleanup, the runtime version save_model records, `ov.serialize`.
The model is changed (its f32 weights become f16 Constants with a Convert): a caller that owns
it writes it so (`ov-loops convert`, which drops the model once it is written); `ov_loops.save`,
whose caller holds the model, records what changes and puts it back after
(`ov_loops.borrowed_save`).

The compression in place is not postponed: it makes an f16 copy of every compressed weight (half
its f32 size; the f32 data may stay alive, shared with the ONNX model's buffer), where the
postponed form converts each weight as it is written. `in_place_is_cheaper` weighs that copy
against the clone: a model of big weights (big300: 150 MiB of copies against a clone of 0.3 MiB)
is saved by save_model.

Two differences to save_model's files are OpenVINO's, not ours: its clone drops the second name
of a loop body's output that has two (big300's RNN body, `r_h_out,r_scan`; in place keeps
both); and a body's Constant output (a Constant read by a Result) compressed postponed writes
the Convert's output and the Result's input as FP16, though the Convert makes f32 (in place:
FP32). And at `--optimize max` a few body Results get an `output_names` attribute from the
clone that in place leaves out; read back, both IRs have the same ops, names and types
(torch_rnn_stack, torch_ts_two_layer_gru_by_hand).
"""

from __future__ import annotations

from pathlib import Path

import openvino as ov

from ov_loops import ovgraph
from ov_loops.record import Record

RUNTIME_KEY = "OpenVINO Runtime"  # the rt_info key ov.save_model adds (the runtime's version)
CLONE_BYTES_PER_OP = 2500  # a clone's cost per op (seq1000: +47 MiB for 19,017 layers)


class Weights(Record):
    """What `census` counts: the model's ops (bodies' too), its f32 Constants' bytes, whether
    it has f64 Constants."""

    __slots__ = ("ops", "f32_bytes", "has_f64")

    def __init__(self, ops: int, f32_bytes: int, has_f64: bool) -> None:
        self.ops, self.f32_bytes, self.has_f64 = ops, f32_bytes, has_f64

    def in_place_is_cheaper(self, compress_to_fp16: bool, fixed_bytes: int = 0) -> bool:
        """Whether writing in place costs less memory than save_model's clone of the graph:
        an f16 copy of the f32 weights when compressing, and `fixed_bytes`."""
        copy = self.f32_bytes // 2 if compress_to_fp16 else 0
        return copy + fixed_bytes < self.ops * CLONE_BYTES_PER_OP


def census(model: ov.Model) -> Weights:
    """Count `model`'s ops and weights (one walk over the bodies too)."""
    ops = f32_bytes = 0
    has_f64 = False
    for op in ovgraph.all_ops(model):
        ops += 1
        if op.get_type_name() != "Constant":
            continue
        kind = op.get_output_element_type(0)
        if kind == ov.Type.f32:
            f32_bytes += op.get_byte_size()
        elif kind == ov.Type.f64:
            has_f64 = True
    return Weights(ops, f32_bytes, has_f64)


def save_owned(
    model: ov.Model, xml: Path, compress_to_fp16: bool, converts: set[str] | None = None
) -> None:
    """Write `model` as `ov.save_model(model, xml, compress_to_fp16)` writes it, changing the
    model instead of a clone of it (see the module): the caller must own it and not use it
    after, or put it back (`borrowed_save.BorrowedModel`). `converts`: the unique names of the
    model's Converts (bodies' too) when the caller has them (a walk over the model saved)."""
    from openvino._offline_transformations import (
        apply_fused_names_cleanup,
        compress_model_transformation,
    )

    if compress_to_fp16:
        before = _convert_names(model) if converts is None else converts
        compress_model_transformation(model)
        _names_back_to_constants(model, before)
    apply_fused_names_cleanup(model)
    model.set_rt_info(ov.get_version(), RUNTIME_KEY)
    ov.serialize(model, str(xml))


def _convert_names(model: ov.Model) -> set[str]:
    """The unique names of `model`'s Converts (bodies' too)."""
    return {op.get_name() for op in ovgraph.all_ops(model) if op.get_type_name() == "Convert"}


def _names_back_to_constants(model: ov.Model, before: set[str]) -> None:
    """Give the tensor names the compression moved onto each new Convert back to its f16
    Constant, where save_model's postponed compression leaves them (the Constant's output) but
    where the Convert feeds a Result: a body's output, whose names stay with the Result's input
    there too."""
    for op in ovgraph.all_ops(model):
        if op.get_type_name() != "Convert" or op.get_name() in before:
            continue
        constant = op.input_value(0).get_node()
        names = op.output(0).get_names()
        if constant.get_type_name() != "Constant" or not names or _feeds_result(op):
            continue
        constant.output(0).get_tensor().set_names(names)
        op.output(0).get_tensor().set_names(set())


def _feeds_result(op: ov.Node) -> bool:
    """Whether a Result reads `op`'s output."""
    return any(
        target.get_node().get_type_name() == "Result" for target in op.output(0).get_target_inputs()
    )
