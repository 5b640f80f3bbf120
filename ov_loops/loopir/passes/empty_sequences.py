"""Model workaround: the final states of an RNN/GRU/LSTMSequence-5 run over no time step are its
initial states (every graph of the converted model).

OpenVINO's CPU plugin (2026.4.1) leaves the final hidden and cell states (outputs 1 and 2) of a
recurrent Sequence op unwritten when X has no time step: a later inference returns whatever the
memory held (garbage, or the last run's values), also through `openvino.convert_model` (an ONNX
LSTM from tf2onnx's Keras LSTM, run with T = 0). ONNX's LSTM/GRU/RNN give the initial states
then. So each final state read by some op is read through::

    T = shape(X)[1]                      # X: [batch, time, input]
    final' = Select(T == 0, initial, final)

(ov-loops' own cells, lower/cells.py, select their initial values the same way.)
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops import ovgraph

# per op type: (input of the initial state, output of the final state), each state
STATES = {
    "RNNSequence": ((1, 1),),
    "GRUSequence": ((1, 1),),
    "LSTMSequence": ((1, 1), (2, 2)),
}


def keep_initial_states_of_empty_sequences(model: ov.Model) -> int:
    """Guard the final states of every recurrent Sequence op of `model` and of its Loop and If
    bodies (see the module); the number of states guarded."""
    guarded = 0
    for op in list(ovgraph.all_ops(model)):
        for initial, final in STATES.get(op.get_type_name(), ()):
            readers = list(op.output(final).get_target_inputs())
            if not readers:
                continue
            steps = ops.gather(ops.shape_of(op.input_value(0), ov.Type.i64), _i64(1), _i64(0))
            none = ops.equal(steps, _i64(0))
            kept = ops.select(none, op.input_value(initial), op.output(final)).output(0)
            for reader in readers:
                reader.replace_source_output(kept)
            names = op.output(final).get_names()  # a model output keeps its name
            op.output(final).get_tensor().set_names(set())
            kept.get_tensor().set_names(names)
            guarded += 1
    return guarded


def _i64(value: int) -> ov.Output:
    return ops.constant(np.int64(value)).output(0)
