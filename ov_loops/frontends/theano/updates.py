"""The shared variables a scan carries: the updates fn names, the ones it makes without naming
them (random draws' counters, inner scans' final values, found in the graph fn built), each a
carried value of the body, and the final values the scan returns as its updates."""

from __future__ import annotations

import openvino as ov
import openvino.opset15 as ops

from ov_loops.frontends.theano.arguments import BuilderError
from ov_loops.frontends.theano.body import Body
from ov_loops.frontends.theano.shared_variables import SharedVariable, read_by, shared_variable

# rt_info mark on a scan's final value of a shared variable: the instance id of the variable's
# node, so that the scan whose fn built this one finds and carries it.
_FINAL_OF = "ov_loops.final_of"


def implicit_updates(roots: list[ov.Output], first_body_node: int) -> dict:
    """The updates fn makes without naming them, found in the graph it built (the nodes from
    `first_body_node` on, connected to `roots`): a random draw's counter advances by its default
    increment per step (the scan carries it: `function` no longer advances it), and an inner
    scan's final value of a shared variable is that variable's value after the step."""
    counters, finals = [], {}
    seen, pending = set(), [root.get_node() for root in roots]
    while pending:
        node = pending.pop()
        key = node.get_instance_id()
        if key < first_body_node or key in seen:
            continue
        seen.add(key)
        variable = shared_variable(node)
        if variable is not None and variable.default_increment:
            counters.append(variable)
        for output in node.outputs():
            if _FINAL_OF in output.get_rt_info():
                finals[int(output.get_rt_info()[_FINAL_OF].value)] = output
            pending.extend(target.get_node() for target in output.get_target_inputs())
        pending.extend(value.get_node() for value in node.input_values())
    updates = {}
    for variable in counters:
        updates[variable.value.get_instance_id()] = (variable, variable.default_update())
        variable.default_increment = 0
    for key, final in finals.items():
        updates[key] = (_variable_upstream(final, key), final)
    return updates


def _variable_upstream(value: ov.Output, key: int) -> SharedVariable:
    """The shared variable whose node has instance id `key`, among those `value` is computed
    from (a scan's final value depends on the variable's value)."""
    for variable in read_by([value.get_node()]):
        if variable.value.get_instance_id() == key:
            return variable
    raise BuilderError(
        f"fn: an inner scan's update {value.get_node().get_friendly_name()} reads no shared "
        "variable"
    )


def carry_shared(updates: dict, body: Body, results: list[ov.Node], strict: set) -> None:
    """Each updated shared variable becomes a carried value of `body`: its Parameter (fn's
    non_sequences argument when it was passed, else a new one), its update a Result. `strict`:
    the ids of the variables fn named in its updates, which must then be non_sequences."""
    passed = {value.get_node().get_instance_id(): p for p, value in body.invariant}
    for key, (variable, new_value) in updates.items():
        variable.check(new_value, "fn")
        parameter = passed.get(key)
        if parameter is None and key in strict:
            raise BuilderError(
                f"fn: updates shared variable {variable.name}, not in non_sequences (strict=True)"
            )
        if parameter is None:
            value = variable.value.output(0)
            parameter = ops.parameter(value.get_partial_shape(), value.get_element_type())
        body.invariant = [(p, v) for p, v in body.invariant if p is not parameter]
        results.append(ops.result(new_value))
        body.shared.append((parameter, variable, len(results) - 1))


def final_updates(body: Body, finals: list[ov.Output]) -> dict[ov.Node, ov.Output]:
    """The scan's updates: each carried shared variable's value after the last step, marked so
    that a scan whose fn built this one finds and carries it."""
    updates = {}
    for (_, variable, _), final in zip(body.shared, finals):
        updates[variable.value] = final
        final.get_rt_info()[_FINAL_OF] = variable.value.get_instance_id()  # for enclosing scans
    return updates
