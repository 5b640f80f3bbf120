"""Recurrent ops' sequence lengths in OpenVINO: what a converted model gets, said at conversion.

An ONNX LSTM, GRU or RNN given `sequence_lens` becomes OpenVINO's LSTM/GRU/RNNSequence-5 (by
OpenVINO's own ONNX frontend). With dynamic shapes the CPU plugin (2026.4.1) runs every batch
row over the whole sequence whatever its length: a row of length 3 in a 5-step batch gets its
5-step state (`openvino.convert_model` alike); with static shapes the lengths are honoured
(docs/pitfalls.md, tests/conversion/test_caveats.py).
"""

from __future__ import annotations

import openvino as ov

from ov_loops import ovgraph

SEQUENCE_OPS = frozenset({"LSTMSequence", "GRUSequence", "RNNSequence"})


def sequence_lengths_warning(nodes: list[str], model: ov.Model) -> str | None:
    """One line when ONNX recurrent nodes given `sequence_lens` (`nodes`) became *Sequence ops of
    dynamic shape in `model`: the CPU plugin then runs every row over the whole sequence
    (measured on 2026.4.1; static shapes honour the lengths). None otherwise."""
    if not nodes or not any(
        op.get_type_name() in SEQUENCE_OPS and op.get_input_partial_shape(0).is_dynamic
        for op in ovgraph.all_ops(model)
    ):
        return None
    named = ", ".join(nodes[:3]) + (f" and {len(nodes) - 3} more" if len(nodes) > 3 else "")
    return (
        f"{named}: sequence_lens with dynamic shapes: OpenVINO's CPU plugin runs every row over "
        "the whole sequence (shorter rows differ from ONNX); static shapes (--input) honour them"
    )
