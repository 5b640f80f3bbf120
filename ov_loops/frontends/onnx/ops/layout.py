"""The layout of an ONNX loop node: what Loop and Scan have in common.

A layout names the body's inputs (iteration number, condition, loop-carried values, sliced
parts) and indexes its outputs (condition, loop-carried values, stacked outputs); values the body
reads from enclosing scopes (captures) become extra inputs. Each op's module (loop.py, scan.py,
scan8.py) reads its node into a layout; body.py types and converts the body it describes, and
to_loop_ir.py maps the layout to Loop-5 ports, once for every op:

    port_map inputs:  merged (carried) | invariant (captures) | sliced (parts, axis, direction)
    port_map outputs: last value (carried) | concatenated (stacked, axis)
    special ports:    iteration number -> current_iteration; condition output -> execution_condition
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from ov_loops.contract.kinds import CarriedKind, CarriedValue, grouped, tensors
from ov_loops.errors import ConversionError, UnsupportedItem
from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.scopes import read_names
from ov_loops.record import Record


class SlicedRead(Record):
    """The body reads `source` one part at a time along `axis` (which the body does not see).

    `axis` is as written in the model (possibly negative) until normalised against the rank.
    """

    __slots__ = ("source", "body_input", "axis", "reverse")

    def __init__(self, source: str, body_input: str, axis: int = 0, reverse: bool = False) -> None:
        self.source = source
        self.body_input = body_input
        self.axis = axis
        self.reverse = reverse


class StackedOutput(Record):
    """Body output `index` is stacked over the iterations along `axis` (prepended if reverse)."""

    __slots__ = ("index", "axis", "reverse")

    def __init__(self, index: int, axis: int = 0, reverse: bool = False) -> None:
        self.index = index
        self.axis = axis
        self.reverse = reverse


def refuse_omitted_inputs(
    path: str, op: str, inputs: list[str], first: int, body_inputs: list[str], role: str
) -> None:
    """Raise ConversionError naming the node when one of `inputs` (the node's inputs from index
    `first` on, each a `role` feeding the body input of `body_inputs` at its position) is
    omitted: an empty name, which Loop and Scan allow only for their optional inputs."""
    for offset, (name, body_input) in enumerate(zip(inputs, body_inputs)):
        if not name:
            raise ConversionError(
                f"{path}: {op} input {first + offset} ({role} for body input '{body_input}') "
                "is omitted (empty name); it is required"
            )


def refuse_surplus_outputs(
    path: str, op: str, outputs: int, kept: int, kept_role: str, scans: int
) -> None:
    """Raise ConversionError naming the node when it has more than the `kept` values (each a
    `kept_role`) and `scans` scan outputs its body yields."""
    if outputs > kept + scans:
        raise ConversionError(
            f"{path}: {op} has {outputs} outputs but its body yields "
            f"{kept} {kept_role} and {scans} scan outputs"
        )


def flag_shape(declared: schema.ValueInfoProto, fed: tuple[int, ...] = ()) -> tuple[int, ...]:
    """The shape a Loop body's iteration-number or condition input is fed with: () when the body
    declares a scalar, (1,) when it declares any other rank (an old form declares [1];
    onnxruntime feeds [1] whatever the rank, and OpenVINO's frontend reads [1]), and `fed` (the
    shape of the value the loop receives, as onnxruntime passes it on) when it declares none."""
    tensor = declared.type.tensor_type
    if not tensor.HasField("shape"):
        return fed
    return (1,) if tensor.shape.dim else ()


class PlaceholderValues(NamedTuple):
    """The values arriving at a placeholder, by role (whatever their type)."""

    trip_count: object
    condition: object
    carried: list
    captures: list
    sliced: list
    sequence_lens: object


class OnnxLoopLayout(Record):
    """An ONNX loop node and the roles of its body's inputs and outputs. Each op's class (a
    subclass registered with its opsets, registry.py) reads its node into one (`read`) and
    translates the loop (`loop_ir`, body.py)."""

    # the kind of each logical carried value (a sequence takes several inputs); None: tensors.
    # whether the node is one of the main graph's own (not in a body or an If branch); set
    # by the driver when it registers the node (node names may hold '/', as paths do)
    __slots__ = (
        "node",
        "path",
        "opset",
        "body",
        "captures",
        "sliced",
        "carried_sources",
        "carried_inputs",
        "carried_outputs",
        "stacked_outputs",
        "trip_source",
        "condition_source",
        "iteration_input",
        "condition_input",
        "condition_output",
        "sequence_lens_source",
        "carried_kinds",
        "in_main_graph",
        "in_loop_body",
        "_reads",  # the names the body reads, once asked (a memo: not a field)
    )

    def __init__(
        self,
        node: schema.NodeProto,
        path: str,
        opset: int | None,
        body: schema.GraphProto,
        captures: list[str],
        sliced: list[SlicedRead],
        carried_sources: list[str],
        carried_inputs: list[str],
        carried_outputs: list[int],
        stacked_outputs: list[StackedOutput],
        trip_source: str | None = None,
        condition_source: str | None = None,
        iteration_input: str | None = None,
        condition_input: str | None = None,
        condition_output: int | None = None,
        sequence_lens_source: str | None = None,
        carried_kinds: list[CarriedKind] | None = None,
        in_main_graph: bool = False,
        in_loop_body: bool = False,
        body_reads: frozenset[str] | None = None,
    ) -> None:
        self.node = node
        self.path = path
        self.opset = opset
        self.body = body
        self.captures = captures
        self.sliced = sliced
        self.carried_sources = carried_sources  # outer names of the initial loop-carried values
        self.carried_inputs = carried_inputs  # body inputs receiving them
        self.carried_outputs = carried_outputs
        self.stacked_outputs = stacked_outputs
        self.trip_source = trip_source  # outer name of the trip count, if any
        self.condition_source = condition_source  # outer name of the initial condition, if any
        self.iteration_input = iteration_input
        self.condition_input = condition_input
        self.condition_output = condition_output
        # Scan-8's outer name of the sequence lengths
        self.sequence_lens_source = sequence_lens_source
        self.carried_kinds = carried_kinds
        self.in_main_graph = in_main_graph
        # a node of a loop's body (any depth; set with in_main_graph)
        self.in_loop_body = in_loop_body
        self._reads = body_reads  # scopes.read_names(body), when the reader knows them

    op = ""  # the op type, set when the class is registered (registry.loop_op)
    # Scan requires every sliced input to have the same length; Loop stops at the shortest.
    sliced_lengths_must_agree = False
    # The ONNX type rules of the op's ports by name (port_types.py), and the one a sliced input
    # breaks (None: sliced inputs are the op's own reads, not ports of the node).
    type_rules: ClassVar[dict[str, str]] = {}
    sliced_rule: ClassVar[str | None] = None
    # The attributes the op defines (load/structure.py refuses others).
    attributes: ClassVar[frozenset[str]] = frozenset({"body"})

    # -- layout ------------------------------------------------------------------------------
    @property
    def carried_count(self) -> int:
        return len(self.carried_inputs)

    def reads_iteration_number(self) -> bool:
        return self.iteration_input is not None and self.iteration_input in self._body_reads

    def reads_condition(self) -> bool:
        return self.condition_input is not None and self.condition_input in self._body_reads

    @property
    def _body_reads(self) -> frozenset[str]:
        """The names the body reads (scopes.read_names), asked several times per loop."""
        if self._reads is None:
            self._reads = frozenset(read_names(self.body))
        return self._reads

    def placeholder_inputs(self) -> list[str]:
        """Inputs of the placeholder: [M] [cond] carried... captures... sliced... [sequence_lens]"""
        present = [name for name in (self.trip_source, self.condition_source) if name]
        sources = [entry.source for entry in self.sliced]
        lengths = [self.sequence_lens_source] if self.sequence_lens_source else []
        return present + self.carried_sources + self.captures + sources + lengths

    def split(self, values: list) -> PlaceholderValues:
        """The placeholder's input values by role (absent ones are None)."""
        values = list(values)
        trip_count = values.pop(0) if self.trip_source else None
        condition = values.pop(0) if self.condition_source else None
        sequence_lens = values.pop() if self.sequence_lens_source else None
        carried, values = values[: self.carried_count], values[self.carried_count :]
        captures, sliced = values[: len(self.captures)], values[len(self.captures) :]
        return PlaceholderValues(trip_count, condition, carried, captures, sliced, sequence_lens)

    def carried_values(self) -> tuple[CarriedValue, ...]:
        """One CarriedValue per logical carried value, its merged inputs numbered in the node's
        order: a sequence's parts are one (the sequence rewrite's record, read by `read`)."""
        if self.carried_kinds is None:
            return tensors(list(self.carried_sources))
        return grouped(list(self.carried_sources), self.carried_kinds)

    def declared_flag_shape(self, name: str | None, fed: tuple[int, ...] = ()) -> tuple[int, ...]:
        """`flag_shape` of the body input `name` (the iteration number or the condition)."""
        declared = [value for value in self.body.input if value.name == name]
        return flag_shape(declared[0], fed) if declared else fed

    @classmethod
    def declared_feeds(
        cls, node: schema.NodeProto
    ) -> list[tuple[str, schema.ValueInfoProto, int | None]]:
        """(outer name, the body input it feeds, the axis along which the body reads it a part
        at a time, None when whole) for each node input whose body input declares what it
        receives, before the node is read (rewrites/shapeless_inputs.py); none by default."""
        return []

    # -- checks ------------------------------------------------------------------------------
    def check_own_ports(self, values: PlaceholderValues) -> None:
        """Check the types of the ports only this op has (port_types.py; the shared ones are
        checked after them); InputError at the first breach."""

    def unsupported_types(self, outer_types: dict[str, schema.TypeProto]) -> list[UnsupportedItem]:
        """Loop-carried values that are not tensors once the ONNX rewrites ran, by the body's
        declared types and the outer value's inferred one: the sequence rewrite
        (rewrites/sequences/) makes tensors of the sequences and optionals it can and refuses
        the others, so what is left here (a map, say) has no Loop-5 form."""
        items = []
        inputs = {value.name: value.type for value in self.body.input}
        for outer, body_in, out in zip(
            self.carried_sources, self.carried_inputs, self.carried_outputs
        ):
            types = [inputs[body_in], self.body.output[out].type, outer_types.get(outer)]
            kinds = {t.WhichOneof("value") for t in types if t is not None}
            for kind in sorted(kinds - {None, "tensor_type"}):
                readable = kind.replace("_type", "")
                reason = f"{readable}-typed loop-carried value '{outer}' is not supported yet"
                items.append(
                    UnsupportedItem(self.op, self.node.domain, self.opset, self.path, reason)
                )
        return items
