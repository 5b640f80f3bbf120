"""The ONNX type rules of Loop and Scan ports, checked as each loop is converted: each op states
its rules (`type_rules`) and checks the ports only it has (`check_own_ports`) in its module;
this module checks the ports they share and holds the checks they use.

ONNX Loop (Inputs, Type Constraints, attribute `body`)::

    M: tensor(int64), cond: tensor(bool), each "should be a scalar"
    body inputs  (iteration_num: int64, condition: bool, v...)
    body outputs (condition: bool, v..., scan outputs...)
    a loop-carried value v has one element type: initial value == body input == body output

ONNX Scan: a state likewise; a scan input's body input has the scan input's element type;
Scan-8's sequence_lens is tensor(int64).

onnxruntime refuses a model that breaks them when it creates the session (a body condition
output of another type fails when it runs). ov-loops refuses it in one line naming the node, the
port and the rule: an ill-typed model is invalid input (InputError, exit 2), as a graph the ONNX
checker rejects. Shapes are judged only where no value could be meant: M and cond must hold one
element (onnxruntime: "should be a scalar tensor"); declared body shapes are not, since bodies
are typed from the values that arrive.
"""

from __future__ import annotations

import math

import openvino as ov

from ov_loops.errors import InputError
from ov_loops.frontends.onnx.ops.layout import OnnxLoopLayout, PlaceholderValues
from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.types import onnx_elem_type
from ov_loops.ovgraph import lengths

T = schema.TensorProto


def type_name(elem_type: int) -> str:
    """An ONNX element type as onnxruntime writes it: tensor(float), tensor(int64)."""
    return f"tensor({T.DataType.Name(elem_type).lower()})"


def ill_typed(layout: OnnxLoopLayout, port: str, found: str, rule: str) -> InputError:
    """The one-line error for `port` of `layout`'s node, which is `found`, against `rule`."""
    return InputError(f"{layout.path}: {port} {found}; ONNX {layout.op}: {layout.type_rules[rule]}")


def check_arriving(layout: OnnxLoopLayout, values: PlaceholderValues) -> None:
    """The ports whose types are known before the body is converted: the loop's inputs as they
    arrive, and the body inputs as the body declares them (the op's own ports first). Raise
    InputError at the first breach (module docstring)."""
    layout.check_own_ports(values)
    for source, name, value in zip(layout.carried_sources, layout.carried_inputs, values.carried):
        _check_alike(layout, value, name, f"input '{source}'", "carried")
    rule = layout.sliced_rule
    for entry, value in zip(layout.sliced if rule else (), values.sliced):
        _check_alike(layout, value, entry.body_input, f"scan input '{entry.source}'", rule)


def check_body_outputs(
    layout: OnnxLoopLayout, carried_elem_types: list[int], body: ov.Model
) -> None:
    """The body's condition output is bool, and each loop-carried output has the element type
    its value enters with (0: unknown), as converted and as the body declares it (onnxruntime
    refuses a declaration its node contradicts, a declared float condition computed bool)."""
    results, names = body.get_results(), [value.name for value in layout.body.output]
    condition = layout.condition_output
    if condition is not None:
        for found, how in _output_types(layout, results, condition):
            if found not in (0, T.BOOL):
                port = f"body output {condition} '{names[condition]}'"
                raise ill_typed(layout, port, f"is {how}{type_name(found)}", "condition_output")
    for entering, out, name in zip(
        carried_elem_types, layout.carried_outputs, layout.carried_inputs
    ):
        for found, how in _output_types(layout, results, out):
            if entering and found and found != entering:
                port = f"body output {out} '{names[out]}'"
                text = f"is {how}{type_name(found)} but its value '{name}' enters as "
                raise ill_typed(layout, port, text + type_name(entering), "carried")


def _output_types(layout: OnnxLoopLayout, results: list, index: int) -> list[tuple[int, str]]:
    """Body output `index`'s element type as converted, then as declared (0: unknown), each
    with the words that say which."""
    declared = layout.body.output[index].type
    declared_type = declared.tensor_type.elem_type if declared.HasField("tensor_type") else 0
    return [(onnx_elem_type(results[index].get_element_type()), ""), (declared_type, "declared ")]


def check_flag(
    layout: OnnxLoopLayout, value, port: str, elem_type: int, rule: str, scalar: bool = True
) -> None:
    """M, cond or sequence_lens (`value`, None when omitted) is of `elem_type`, and with
    `scalar` holds one element when its shape is static."""
    if value is None:
        return
    found = onnx_elem_type(value.get_element_type())
    if found not in (0, elem_type):
        raise ill_typed(layout, port, f"is {type_name(found)}", rule)
    shape = value.get_partial_shape()
    if scalar and shape.is_static and math.prod(lengths(shape)) != 1:
        raise ill_typed(layout, port, f"has shape {lengths(shape)}", rule)


def _check_alike(layout: OnnxLoopLayout, value: ov.Output, body_input: str, port: str, rule: str):
    """The value arriving at `port` has the element type its body input declares."""
    declared = declared_elem_type(layout, body_input)
    found = onnx_elem_type(value.get_element_type())
    if declared and found and declared != found:
        text = (
            f"is {type_name(found)} but body input '{body_input}' is declared {type_name(declared)}"
        )
        raise ill_typed(layout, port, text, rule)


def declared_elem_type(layout: OnnxLoopLayout, name: str | None) -> int:
    """The element type the body declares for its input `name` (0: none)."""
    for value in layout.body.input:
        if value.name == name and value.type.HasField("tensor_type"):
            return value.type.tensor_type.elem_type
    return 0
