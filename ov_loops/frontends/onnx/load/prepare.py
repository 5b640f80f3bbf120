"""The ONNX-level passes every loaded model goes through before conversion, in order.

Each pass takes the model and returns it (changed in place, or a new one). Those before the
ONNX checker make valid models the checker would refuse checkable; those after it may assume
a valid model. The sequence rewrite also records the parts it made of each sequence
(SequenceParts), which come with the model (PreparedModel).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ov_loops.frontends.onnx.load.checker import check_model
from ov_loops.frontends.onnx.load.inline import inline_local_functions
from ov_loops.frontends.onnx.load.order import sort_topologically
from ov_loops.frontends.onnx.load.structure import check_structure
from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.sequence_parts import SequenceParts
from ov_loops.frontends.onnx.rewrites.array_feature_extractor import (
    array_feature_extractor_as_gather,
)
from ov_loops.frontends.onnx.rewrites.empty_constants import (
    expand_to_an_empty_shape_is_identity,
    keep_empty_constants_empty,
)
from ov_loops.frontends.onnx.rewrites.placeholder_domain import refuse_placeholder_domain
from ov_loops.frontends.onnx.rewrites.sequences.sequence_appends import (
    lists_appended_in_loops_become_scan_outputs,
)
from ov_loops.frontends.onnx.rewrites.sequences.sequence_types import has_sequences
from ov_loops.frontends.onnx.rewrites.shapeless_inputs import (
    shapeless_inputs_take_declared_shapes,
)
from ov_loops.record import Record

Rewrite = Callable[[schema.ModelProto], schema.ModelProto]


class PreparedModel(Record):
    """A model ready for conversion, and what its rewrites made that the model cannot say."""

    __slots__ = ("model", "sequences")

    def __init__(self, model: schema.ModelProto, sequences: SequenceParts | None = None) -> None:
        self.model = model
        self.sequences = SequenceParts() if sequences is None else sequences


def _lower_sequences(model: schema.ModelProto, record: SequenceParts) -> schema.ModelProto:
    """rewrites/sequences/sequences.py's lower_sequences, imported for a model that holds
    sequences or optionals (after the fast path of lists appended in loops): a model without
    any does not import the general sequence rewrite (tests/test_startup.py)."""
    if not has_sequences(model):
        return model
    from ov_loops.frontends.onnx.rewrites.sequences.sequences import lower_sequences

    return lower_sequences(model, record=record)


def rewrites(sequences: SequenceParts, check: bool = True) -> tuple[Rewrite, ...]:
    """The rewrites, in order; the sequence rewrite records its parts in `sequences`. Without
    `check`, structural checks stand in for the ONNX checker (load/structure.py), which then
    words a failure only (load.checked_on_failure)."""
    return (
        sort_topologically,
        check_model if check else check_structure,  # not rewrites: the ONNX checker, or
        # the structural checks that stand in for it, on the model as the user wrote it
        inline_local_functions,
        refuse_placeholder_domain,  # after inlining: functions may hold such nodes too
        array_feature_extractor_as_gather,  # ai.onnx.ml ops OpenVINO cannot convert; after
        # inlining too
        shapeless_inputs_take_declared_shapes,  # after inlining: a function's loop may take one
        lists_appended_in_loops_become_scan_outputs,  # the fast path before the general rewrite
        partial(_lower_sequences, record=sequences),  # before the two below: it writes empty
        # constants
        expand_to_an_empty_shape_is_identity,
        keep_empty_constants_empty,
    )


def prepare(model: schema.ModelProto, check: bool = True) -> PreparedModel:
    """Apply the rewrites in order (the ONNX checker among them when `check`)."""
    sequences = SequenceParts()
    for rewrite in rewrites(sequences, check):
        model = rewrite(model)
    return PreparedModel(model, sequences)
