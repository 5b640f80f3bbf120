"""Whether OpenVINO's MOC transformations have nothing for a loop body: passes/simplify.py then
spares it MOC, which costs about 10 ms of CPU on any body, and more for each body nested in it.

Conservative: a body is inert when each op is of a type MOC leaves alone in these forms, and
no op offers it a constant to fold, a chain to fuse or a twin to merge:

    inert(body) = every op of body:
        type in INERT_TYPES
        not every input a Constant                 (constant folding)
        Add/Subtract/Multiply/Divide: no value read twice (x - x); a Constant read is
              not all zeros, nor ones for * and / (x + 0, x * 1), and the other value not of an op
              of its family (+- or */) reading a Constant (a chain MOC folds into one)
        Convert: to another type, not of a Convert; Select: its condition not a Constant
        Unsqueeze: constant axes, not of an Unsqueeze (MOC's Reshape is no op fewer)
        no other op of the same type, attributes and sources (equal Constants)
        Loop (unless `deferred`): every output and body Parameter read, no body Result
              reading a Parameter, its body inert

With `deferred` (a loop nested in another's body), nested Loops are not looked into: each
nested body went through simplify-body itself, and what MOC would still do there (prune a
nested Loop's unread outputs, and its own ops with them) MOC on the outermost loop's body does,
which is looked into to the bottom. The claim is checked in the tests (CHECKS): MOC is run
anyway on a body found inert and must not shrink it (nor, unless `deferred`, its nested
bodies).
"""

from __future__ import annotations

import openvino as ov

from ov_loops.ovgraph import Computations, is_constant

INERT_TYPES = frozenset(
    {
        "Parameter", "Result", "Constant", "Add", "Subtract", "Multiply", "Divide", "Convert",
        "Select", "Equal", "Less", "LessEqual", "GreaterEqual", "Unsqueeze", "Loop",
    }
)  # fmt: skip
_FAMILY = {"Add": "+-", "Subtract": "+-", "Multiply": "*/", "Divide": "*/"}


def moc_inert(body: ov.Model, deferred: bool = False) -> bool:
    """Whether MOC can remove no op of `body` (see the module's docstring); `deferred`: what
    MOC would do in nested Loops is left to MOC on an enclosing body."""
    computed = Computations()
    for node in body.get_ordered_ops():
        kind = node.get_type_name()
        if kind not in INERT_TYPES:
            return False
        if kind in ("Parameter", "Result", "Constant"):
            continue
        if not _inert_op(node, kind):
            return False
        if computed.add(node):
            return False
        if kind == "Loop" and not deferred and not _inert_loop(node):
            return False
    return True


def _inert_op(node: ov.Node, kind: str) -> bool:
    constant = [is_constant(value) for value in node.input_values()]
    if all(constant):
        return False
    if kind in _FAMILY:
        return _inert_arithmetic(node, kind, constant)
    source = node.input_value(0).get_node().get_type_name()
    if kind == "Convert":
        return source != "Convert" and node.get_input_element_type(0) != node.get_element_type()
    if kind == "Select":
        return not constant[0]
    if kind == "Unsqueeze":
        return constant[1] and source != "Unsqueeze"
    return True


def _inert_arithmetic(node: ov.Node, kind: str, constant: list[bool]) -> bool:
    values = node.input_values()
    if len({(value.get_node().get_instance_id(), value.get_index()) for value in values}) < 2:
        return False  # x - x, x * x: one value read twice
    if not any(constant):
        return True
    data = [value.get_node().get_data() for value, known in zip(values, constant) if known]
    one = _FAMILY[kind] == "*/"  # x * 1 (x + 1 is no identity)
    if any(not each.any() or (one and (each == 1).all()) for each in data):
        return False  # x + 0, x * 0, x * 1
    (other,) = (value.get_node() for value, known in zip(values, constant) if not known)
    chained = _FAMILY.get(other.get_type_name()) == _FAMILY[kind]
    return not (chained and any(map(is_constant, other.input_values())))


def _inert_loop(node: ov.Node) -> bool:
    body = node.get_function()
    if any(not output.get_target_inputs() for output in node.outputs()):
        return False
    parameters = body.get_parameters()
    if any(not parameter.output(0).get_target_inputs() for parameter in parameters):
        return False
    if any(result.input_value(0).get_node().get_type_name() == "Parameter"
           for result in body.get_results()):  # fmt: skip
        return False
    return moc_inert(body)
