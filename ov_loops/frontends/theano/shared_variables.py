"""Theano's shared variables on OpenVINO Variables: `shared(value, name)` is a value that persists
across inference calls (ReadValue of a Variable), `function(inputs, outputs, updates)` the model
whose Assigns store the updates when it runs.

Semantics (Theano's scan guide, "Using shared variables", ../shared/specs/theano-scan.zh-en.txt)::

    a = shared(value)                 # state[a] = value until the first update (or after a reset)
    model = function(inputs, outputs, updates={a: new_a})
    request.infer(x):                 # every output reads state[a] as it was before the call
        outs = outputs(x, state)
        state[a] = new_a(x, state)    # all updates at once, after the outputs
        return outs
    request.reset_state()             # state[a] = value again, for every shared variable

After `reset_state()` (or `query_state()[i].reset()` for one variable) the next call reads the
initial value; `query_state` shows zeros until that call runs (OpenVINO computes the initial
value lazily). The state lives in an OpenVINO InferRequest (`request.query_state()`, one
VariableState per shared variable, named by its variable id), not in the Python object: two
requests of one compiled model hold two states; `state.state = ov.Tensor(...)` sets it, as
Theano's `set_value`. A shared variable whose draws advance by default (a random stream's
counter outside a scan) has a `default_update`, which `function` applies when `updates` does not
name it, as Theano's function applies default updates.

Nothing is kept on the side: a shared variable is recognised from the graph, by rt_info marks on
the node `shared` returns (its variable id; a default increment), and an Assign takes the
Variable of its ReadValue. Variable ids are unique within a model (`function` checks).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from openvino.op.util import Variable, VariableInfo

from ov_loops.errors import OvLoopsError

# The CPU plugin keeps no 64-bit state: such values are stored in 32 bits and converted on read.
_STORED = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.float64): np.dtype(np.float32)}


class SharedVariableError(OvLoopsError):
    """An update or a model that shared variables cannot give: the message names the variable."""


# rt_info marks: the graph itself says which nodes are shared variables (no registry).
_SHARED = "ov_loops.shared"  # on the node `shared` returned: its variable id
_INCREMENT = "ov_loops.default_increment"  # on it too: its default update is value + this


@dataclass
class SharedVariable:
    """One shared variable, as the graph marks it: `value` is the node fn and graphs read (what
    `shared` returned: a ReadValue, or a Convert of one), carrying the variable id in rt_info."""

    value: ov.Node

    @property
    def name(self) -> str:
        return str(self.value.get_rt_info()[_SHARED].value)

    @property
    def read(self) -> ov.Node:
        """The ReadValue of the variable (`value`, or the node `value` converts)."""
        if self.value.get_type_name() == "ReadValue":
            return self.value
        return self.value.input_value(0).get_node()

    @property
    def default_increment(self) -> int:
        """Its default update is value + this (a random stream's counter made outside a scan);
        0: unchanged."""
        rt_info = self.value.get_rt_info()
        return int(rt_info[_INCREMENT].value) if _INCREMENT in rt_info else 0

    @default_increment.setter
    def default_increment(self, step: int) -> None:
        self.value.get_rt_info()[_INCREMENT] = int(step)

    def default_update(self) -> ov.Output:
        """Its value after a call when no update names it."""
        value = self.value.output(0)
        if not self.default_increment:
            return value
        step = np.array(self.default_increment, value.get_element_type().to_dtype())
        return ops.add(value, ops.constant(step)).output(0)

    def check(self, new_value: ov.Output, where: str) -> None:
        """`new_value` can be stored: the variable's element type, a compatible shape."""
        expected, got = self.value.get_output_element_type(0), new_value.get_element_type()
        if got != expected:
            raise SharedVariableError(
                f"{where}: the new value of shared variable {self.name} is "
                f"{got.get_type_name()}, the variable is {expected.get_type_name()}"
            )
        shape, declared = new_value.get_partial_shape(), self.read.get_output_partial_shape(0)
        if not shape.compatible(declared):
            raise SharedVariableError(
                f"{where}: the new value of shared variable {self.name} has shape {shape}, "
                f"the variable {declared}"
            )

    def assign(self, new_value: ov.Output, where: str) -> ov.Node:
        """The Assign storing `new_value`, after `check` (`where` names it in errors). Its
        Variable is the ReadValue's: a model of that ReadValue alone declares it."""
        self.check(new_value, where)
        read = self.read
        variable = ov.Model([read.output(0)], [], "read").get_variable_by_id(self.name)
        stored = read.get_output_element_type(0)
        # Assign takes a Node: the Convert (to the stored type; none when it is already) is one.
        return ops.assign(ops.convert(new_value, stored), variable)


def shared(value, name: str | None = None) -> ov.Node:
    """A shared variable holding `value` (array-like): the node graphs read it from, usable in
    any opset call. 64-bit values are stored in 32 bits (the CPU plugin keeps no 64-bit state)
    and read back in their own type. `name` is the OpenVINO variable id (unique in a model;
    without a name, `shared/` and a fresh suffix)."""
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise SharedVariableError(f"shared {name!r}: values of dtype {array.dtype} cannot be held")
    stored = _STORED.get(array.dtype, array.dtype)
    if array.dtype.kind in "iu" and not np.array_equal(array.astype(stored), array):
        raise SharedVariableError(f"shared {name!r}: {array.dtype} values beyond {stored}")
    variable_id = name or fresh_name("shared")
    info = VariableInfo()
    info.data_shape = ov.PartialShape(list(array.shape))
    info.data_type = ov.Type(stored)
    info.variable_id = variable_id
    read = ops.read_value(ops.constant(array.astype(stored)), Variable(info))
    read.set_friendly_name(variable_id if stored == array.dtype else f"{variable_id}/stored")
    node = read if stored == array.dtype else ops.convert(read, ov.Type(array.dtype))
    node.set_friendly_name(variable_id)
    node.get_rt_info()[_SHARED] = variable_id
    return node


def fresh_name(prefix: str) -> str:
    """`prefix` and a random suffix: a variable id no other variable has."""
    return f"{prefix}/{uuid.uuid4().hex[:12]}"


def shared_variable(value) -> SharedVariable | None:
    """The shared variable `value` (a node or output) is, or None."""
    node = value.get_node() if isinstance(value, ov.Output) else value
    if not isinstance(node, ov.Node) or _SHARED not in node.get_rt_info():
        return None
    return SharedVariable(node)


def update_pairs(updates, where: str) -> dict[int, tuple[SharedVariable, ov.Output]]:
    """Theano's updates (a dict, or a list of (shared, new value) pairs) by the shared
    variable's id; a key that is not a shared variable is an error naming `where`."""
    pairs = updates.items() if isinstance(updates, dict) else list(updates or ())
    parsed = {}
    for key, new_value in pairs:
        found = shared_variable(key)
        if found is None:
            raise SharedVariableError(f"{where}: update key {key!r} is not a shared variable")
        parsed[found.value.get_instance_id()] = (found, _as_output(new_value, found))
    return parsed


def _as_output(value, variable: SharedVariable) -> ov.Output:
    """A new value as an Output: a number or array becomes a constant of the variable's type."""
    if isinstance(value, ov.Output):
        return value
    if isinstance(value, ov.Node):
        return value.output(0)
    element = variable.value.get_output_element_type(0).to_dtype()
    return ops.constant(np.asarray(value, element)).output(0)


def function(inputs, outputs, updates=None, name: str = "function") -> ov.Model:
    """Theano's `function`: an ov.Model of `inputs` (Parameters) and `outputs` (one value or a
    list) whose Assigns store `updates` ({shared: new value}, or pairs) after each inference,
    and the default updates of the shared variables the graph reads that `updates` leaves out
    (the others keep their value)."""
    parameters = [value.get_node() if isinstance(value, ov.Output) else value for value in inputs]
    for index, parameter in enumerate(parameters):
        if not isinstance(parameter, ov.Node) or parameter.get_type_name() != "Parameter":
            raise SharedVariableError(f"function: inputs[{index}] is not a Parameter")
    outputs_list = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    results = [ops.result(value) for value in outputs_list]
    explicit = update_pairs(updates, "updates")
    read = {v.value.get_instance_id() for v in read_by([*results, *_nodes(explicit)])}
    sinks = [
        variable.assign(new_value if key in read else _reading(variable, new_value), "updates")
        for key, (variable, new_value) in explicit.items()
    ]
    read_by_model = read_by([*results, *sinks])
    _check_unique_ids(read_by_model)
    for variable in read_by_model:
        if variable.value.get_instance_id() not in explicit:
            # The CPU plugin needs an Assign for every ReadValue: unchanged, it stores the value.
            sinks.append(variable.assign(variable.default_update(), "default update"))
    return ov.Model(results, sinks, parameters, name)


def _check_unique_ids(variables: list[SharedVariable]) -> None:
    """Two shared variables of one model need two variable ids (OpenVINO pairs by id)."""
    by_id: dict[str, int] = {}
    for variable in variables:
        if by_id.setdefault(variable.name, variable.value.get_instance_id()) != (
            variable.value.get_instance_id()
        ):
            raise SharedVariableError(
                f"function: two shared variables named {variable.name}: a model needs unique names"
            )


def _nodes(updates: dict[int, tuple[SharedVariable, ov.Output]]) -> list[ov.Node]:
    return [new_value.get_node() for _, new_value in updates.values()]


def _reading(variable: SharedVariable, new_value: ov.Output) -> ov.Output:
    """`new_value`, computed so that the model reads `variable`: the CPU plugin refuses an
    Assign whose variable no ReadValue reads ("uninitialized assigned memory"). select(v < v, v,
    new) is `new` (also for NaN) and OpenVINO does not fold it away."""
    value = variable.value.output(0)
    return ops.select(ops.less(value, value), value, new_value).output(0)


def read_by(roots: list[ov.Node]) -> list[SharedVariable]:
    """The shared variables the graph of `roots` reads, in the order first met."""
    seen, found, pending = set(), [], list(roots)
    while pending:
        node = pending.pop()
        if node.get_instance_id() in seen:
            continue
        seen.add(node.get_instance_id())
        variable = shared_variable(node)
        if variable is not None:
            found.append(variable)
        pending.extend(value.get_node() for value in node.input_values())
    return found
