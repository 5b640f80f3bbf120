"""--stateful for the recurrent ops of the main graph: ONNX RNN, GRU and LSTM ops (tf2onnx makes
one of a Keras LSTM, torch's dynamo export of nn.GRU), which OpenVINO's frontend converts to
RNN/GRU/LSTMSequence-5, not loops. Their initial states are kept as a loop's carried values
are (lower/stateful.py)::

    h0' = ReadValue(variable, init=h0)        # the op's initial hidden (and cell) state
    Y, Ho, Co = LSTMSequence(X, h0', c0', ...)
    Assign(variable, Ho)                      # the final state, for the next call

so the chunks of X fed one call each give the whole pass. An op whose initial state is already
read from a Variable (a loop lowered to it at --optimize max keeps its states itself) is left
alone. Refused (one line naming the op): a reverse or bidirectional one, which cannot stream
(chunks arrive first to last).
"""

from __future__ import annotations

import openvino as ov

from ov_loops.errors import ConversionError
from ov_loops.lower.stateful import assign_states, kept_state, read_from_variables

# Per op, each state: its name, its input (the initial value) and output (the final value).
STATES = {
    "RNNSequence": (("h", 1, 1),),
    "GRUSequence": (("h", 1, 1),),
    "LSTMSequence": (("h", 1, 1), ("c", 2, 2)),
}


def stream_recurrent_ops(model: ov.Model) -> tuple[tuple[ov.Node, ...], tuple[str, ...]]:
    """Keep the states of `model`'s recurrent ops (its own ops, not its bodies') in Variables:
    the Assigns to add as the model's sinks, and one line per op naming its states (see the
    module)."""
    assigns, lines = [], []
    for op in model.get_ordered_ops():
        pairs = STATES.get(op.get_type_name())
        if pairs is None or _keeps_state(op, pairs):
            continue
        path, kind = f"main/{_name(op)}", op.get_type_name().removesuffix("Sequence")
        if op.get_attributes()["direction"] != "forward":
            raise ConversionError(
                f"{path}: --stateful: a {op.get_attributes()['direction']} {kind} op cannot "
                "stream (chunks arrive first to last, so each would be reversed on its own)"
            )
        states, named = [], []
        for index, (name, state_input, state_output) in enumerate(pairs):
            start = op.input_value(state_input)
            shape = op.get_output_partial_shape(state_output)
            read, state = kept_state(start, f"{path}/{name}", shape, index, path)
            op.input(state_input).replace_source_output(read)
            states.append(state)
            named.append(f"'{name}' {start.get_element_type().get_type_name()}{shape}")
        outputs = [op.output(state_output) for _, _, state_output in pairs]
        assigns.extend(assign_states(outputs, tuple(states)))
        named_states = ", ".join(named)
        lines.append(f"{path}: {kind} -> {op.get_type_name()}-5; --stateful states: {named_states}")
    return tuple(assigns), tuple(lines)


def _keeps_state(op: ov.Node, pairs: tuple) -> bool:
    """Whether the op's initial states are read from Variables already (a lowered loop's
    states: ReadValue, Convert, Unsqueeze)."""
    return read_from_variables([op.input_value(state_input) for _, state_input, _ in pairs])


def _name(op: ov.Node) -> str:
    """The name of the ONNX op's first output (OpenVINO's frontend gives it to the op that
    reads the Sequence op's first output: a Transpose), else the Sequence op's own."""
    names = [
        name
        for reader in op.output(0).get_target_inputs()
        for name in sorted(reader.get_node().output(0).get_names())
    ]
    return names[0] if names else op.get_friendly_name()
