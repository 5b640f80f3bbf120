"""Writing a caller's model in place and putting it back as it was: `ov_loops.save` without
`ov.save_model`'s clone.

`owned_save.save_owned` writes the files save_model writes but changes the model. Found by
experiment (OpenVINO 2026.4, every export of tests/models/exporters and benchmarks/models at
default and max): the f16 compression replaces each f32 Constant by an f16 Constant and a
Convert, which takes the Constant's readers and tensor names (a Constant a Result reads loses
them), adds rt_info to the new ops and `DisablePrecisionConversion` to some Constants; the
fused-names cleanup drops every op's `fused_names`; the runtime's version is added to the
model's rt_info. `BorrowedModel` records before what those steps touch and `save` undoes them
after, in a `finally` (an error while compressing or serialising leaves the model as it was
too):

- each f32 Constant (the Python reference keeps it and its data alive while the f16 copy is
  written), the inputs that read it and its tensor names: the inputs are reconnected to it, its
  names set back; the f16 Constants and Converts, read by nothing, are freed;
- every op's rt_info (bodies' too) and the model's: keys added are removed, the values recorded
  (the same `OVAny`s, so the same C++ attributes) set back. An op that had no rt_info is not
  recorded; a last walk removes what it was given (none was, in the experiments).

What the tests compare before and after (tests/test_borrowed_save.py): `ov.serialize`'s XML
and .bin, every op's type, names, output types, shapes and tensor names, inputs and rt_info in
`get_ordered_ops` order (bodies' too), the model's rt_info, what the compiled model computes.
The cost (seq1000: 17,016 ops, 3,006 with rt_info, 2,002 f32 Constants; CPU time, load 2-7):
recording 0.2-0.36 s (RTMap.items() costs ~30 us a map, whence only the non-empty ones),
putting back 0.11-0.18 s; the save 0.9-1.2 s against save_model's 0.65-0.93 s, for 37 MiB
less peak RSS. Putting back costs about 1 MiB of its own (`PUT_BACK_BYTES`): a model whose
clone costs less (a few hundred ops) is written by save_model (ov_loops.staging).
"""

from __future__ import annotations

from pathlib import Path

import openvino as ov

from ov_loops import ovgraph
from ov_loops.owned_save import save_owned

PUT_BACK_BYTES = 1 << 20  # what putting a model back costs beyond the in-place save: ~1 MiB
# (torch_rnn_stack, 69 ops: peak RSS +1.0 MiB against save_model's +0.25; the first
# RTMap.items() call of a process alone +0.5, OpenVINO's code it runs)


class BorrowedModel:
    """A caller's model and what `save_owned` would change in it, recorded to be put back (see
    the module)."""

    def __init__(self, model: ov.Model) -> None:
        self.model = model
        self.model_rt = dict(model.get_rt_info().items())
        self.rt_infos: dict[int, tuple[ov.Node, dict]] = {}  # by instance id; not the empty
        self.constants: list[tuple[ov.Node, list[tuple[ov.Node, int]], set[str]]] = []
        self.converts: set[str] = set()  # the unique names of the Converts
        for op in ovgraph.all_ops(model):
            self._record(op)

    def _record(self, op: ov.Node) -> None:
        """Record `op`'s rt_info, a Convert's name, an f32 Constant's readers and names."""
        rt_info = op.get_rt_info()
        if len(rt_info):  # RTMap.items() costs ~30 us, len() ~0.5 us
            self.rt_infos[op.get_instance_id()] = (op, dict(rt_info.items()))
        kind = op.get_type_name()
        if kind == "Convert":
            self.converts.add(op.get_name())
        elif kind == "Constant" and op.get_output_element_type(0) == ov.Type.f32:
            output = op.output(0)
            readers = [(each.get_node(), each.get_index()) for each in output.get_target_inputs()]
            self.constants.append((op, readers, output.get_names()))

    def save(self, xml: Path, compress_to_fp16: bool) -> None:
        """Write the model as `ov.save_model(model, xml, compress_to_fp16)` writes it (what
        `save_owned` writes), without its clone, and put it back as it was (see the module), on
        an error too. Once: what is recorded is the model as it was before."""
        try:
            save_owned(self.model, xml, compress_to_fp16, self.converts)
        finally:
            self._restore()

    def _restore(self) -> None:
        """Put back what was recorded: the Constants' readers and names, the rt_info."""
        for constant, readers, names in self.constants:
            output, identity = constant.output(0), constant.get_instance_id()
            for node, index in readers:
                port = node.input(index)
                if port.get_source_output().get_node().get_instance_id() != identity:
                    port.replace_source_output(output)
            output.get_tensor().set_names(names)
        _restore_rt_info(self.model, self.model.get_rt_info(), self.model_rt)
        for op, recorded in self.rt_infos.values():
            _restore_rt_info(op, op.get_rt_info(), recorded)
        for op in ovgraph.all_ops(self.model):  # rt_info added to an op that had none
            rt_info = op.get_rt_info()
            if len(rt_info) and op.get_instance_id() not in self.rt_infos:
                _restore_rt_info(op, rt_info, {})


def _restore_rt_info(owner: ov.Node | ov.Model, rt_info: ov.RTMap, recorded: dict) -> None:
    """Remove the keys of `rt_info` (`owner`'s) not `recorded`, set the recorded values back:
    each `OVAny` (the same C++ value), a map (a model's, read as a dict of them) where it is
    missing (nothing changes a map in place)."""
    if len(rt_info) != len(recorded) or any(key not in rt_info for key in recorded):
        for key in list(rt_info.keys()):
            if key not in recorded:
                del rt_info[key]
    for key, value in recorded.items():
        if not isinstance(value, dict) or key not in rt_info:
            owner.set_rt_info(value, key)
