"""The contract layer without a device: LoopSpec.check, the port allocator, carried values."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ov_loops.contract.kinds import (
    OPTIONAL,
    OPTIONAL_SEQUENCE,
    SEQUENCE,
    TENSOR,
    CarriedValue,
    kinds_by_suffix,
    kinds_of_parts,
    mark,
    read_mark,
    tensors,
)
from ov_loops.contract.ports import UNNUMBERED, number_ports, with_outputs, without_parameters
from ov_loops.contract.spec import (
    TRIP_COUNT_CONSTANT,
    TRIP_COUNT_INPUT,
    TRIP_COUNT_SOURCES,
    ConcatenatedOutput,
    InvariantInput,
    LastValueOutput,
    LoopSpec,
    MergedInput,
    SlicedInput,
    SpecError,
)
from ov_loops.ir.reader import loop_spec, loops, read_ir

VALID_SAMPLES = Path(__file__).resolve().parents[2] / "ir_samples" / "valid"
# The body of SPEC: Parameters 0 (current_iteration), 1 (merged), 2 (invariant), 3 (sliced);
# Results 0 (back edge, last value), 1 (stacked), 2 (condition).
PARAMETERS, RESULTS = 4, 3
SPEC = LoopSpec(
    trip_count_source=TRIP_COUNT_CONSTANT,
    trip_count=3,
    sliced_inputs=(SlicedInput(4, 3, axis=0),),
    merged_inputs=(MergedInput(2, 1, 0),),
    invariant_inputs=(InvariantInput(3, 2),),
    concatenated_outputs=(ConcatenatedOutput(1, 1, axis=0),),
    last_value_outputs=(LastValueOutput(0, 0),),
    current_iteration=0,
    execution_condition=2,
)


def _changed(**changes) -> LoopSpec:
    return dataclasses.replace(SPEC, **changes)


BROKEN = {
    "input ports not contiguous": (
        _changed(invariant_inputs=(InvariantInput(5, 2),)),
        "port_map input ports [2, 4, 5] are not 2..4",
    ),
    "output ports not contiguous": (
        _changed(last_value_outputs=(LastValueOutput(2, 0),)),
        "output ports [1, 2] are not 0..1",
    ),
    "a Parameter fed twice": (
        _changed(invariant_inputs=(InvariantInput(3, 1),)),
        "body Parameter(s) [1] fed more than once",
    ),
    "a Parameter not fed": (
        _changed(current_iteration=None),
        "body Parameters not fed: [0]",
    ),
    "a Parameter past the body's": (
        _changed(sliced_inputs=(SlicedInput(4, 7, axis=0),)),
        "indices past the body's: [7]",
    ),
    "a negative Parameter index": (
        _changed(sliced_inputs=(SlicedInput(4, -1, axis=0),)),
        "negative body Parameter index",
    ),
    "current_iteration also a port_map input": (
        _changed(current_iteration=3),
        "current_iteration 3 is also a port_map input",
    ),
    "sliced part_size is not |stride|": (
        _changed(sliced_inputs=(SlicedInput(4, 3, axis=0, stride=2),)),
        "part_size must be |stride| != 0",
    ),
    "concatenated part_size is not |stride|": (
        _changed(concatenated_outputs=(ConcatenatedOutput(1, 1, axis=0, stride=-2),)),
        "part_size must be |stride| != 0",
    ),
    "stride 0": (
        _changed(sliced_inputs=(SlicedInput(4, 3, axis=0, stride=0, part_size=0),)),
        "part_size must be |stride| != 0",
    ),
    "negative sliced axis": (
        _changed(sliced_inputs=(SlicedInput(4, 3, axis=-1),)),
        "negative axis",
    ),
    "negative concatenated axis": (
        _changed(concatenated_outputs=(ConcatenatedOutput(1, 1, axis=-2),)),
        "negative axis",
    ),
    "trip_count with a runtime source": (
        _changed(trip_count_source=TRIP_COUNT_INPUT),
        "trip_count 3 with source 'input'",
    ),
    "no trip_count with a constant source": (
        _changed(trip_count=None),
        "trip_count None with source 'constant'",
    ),
    "negative constant trip count": (
        _changed(trip_count=-1),
        "negative constant trip_count -1",
    ),
    "unknown trip count source": (
        _changed(trip_count_source="sometimes", trip_count=None),
        "unknown trip_count_source 'sometimes'",
    ),
    "output reads a Result past the body's": (
        _changed(last_value_outputs=(LastValueOutput(0, 3),)),
        "body Result index out of range in [0, 1, 2, 3] (body has 3)",
    ),
    "condition reads a Result past the body's": (
        _changed(execution_condition=5),
        "body Result index out of range in [0, 1, 5] (body has 3)",
    ),
    "back edge from a negative Result": (
        _changed(merged_inputs=(MergedInput(2, 1, -1),)),
        "body Result index out of range",
    ),
    "no execution condition": (
        _changed(execution_condition=None),
        "no execution_condition",
    ),
}


@pytest.mark.parametrize("spec, message", BROKEN.values(), ids=BROKEN.keys())
def test_check_names_the_broken_invariant(spec: LoopSpec, message: str):
    with pytest.raises(SpecError, match="^LoopSpec: ") as raised:
        spec.check(PARAMETERS, RESULTS, require_condition=True)
    assert message in str(raised.value)


def test_the_spec_the_broken_ones_are_made_from_is_valid():
    SPEC.check(PARAMETERS, RESULTS, require_condition=True)


@pytest.mark.parametrize(
    "spec, counts",
    [
        (_changed(current_iteration=None), {}),  # unfed Parameters: only with the body's count
        (_changed(last_value_outputs=(LastValueOutput(0, 3),)), {"parameters": PARAMETERS}),
        (_changed(execution_condition=None), {"parameters": PARAMETERS, "results": RESULTS}),
    ],
    ids=["unfed Parameter", "Result index", "no condition"],
)
def test_check_only_holds_specs_to_what_it_is_told(spec: LoopSpec, counts: dict):
    spec.check(**counts)


def _sample_loops():
    for xml in sorted(VALID_SAMPLES.glob("*.xml")):
        document = read_ir(xml)
        for path, graph, layer in loops(document):
            if layer.type == "Loop":  # a TensorIterator's ports are numbered from 0
                yield pytest.param(document, graph, layer, id=f"{xml.stem}:{path}")


@pytest.mark.parametrize("document, graph, layer", list(_sample_loops()))
def test_specs_read_back_from_the_valid_samples_pass(document, graph, layer):
    spec = loop_spec(document, graph, layer)
    parameters = len(layer.body.of_type("Parameter"))
    spec.check(parameters, len(layer.body.of_type("Result")), require_condition=True)


def test_reading_the_valid_samples_yields_loops():
    assert len(list(_sample_loops())) >= 6


# -- the port allocator --------------------------------------------------------------------------
def test_number_ports_keeps_the_order_given():
    inputs = [
        SlicedInput(UNNUMBERED, 3, axis=1),
        MergedInput(UNNUMBERED, 0, 1),
        InvariantInput(UNNUMBERED, 2),
        MergedInput(UNNUMBERED, 1, 0),
    ]
    outputs = [
        ConcatenatedOutput(UNNUMBERED, 2, axis=0),
        LastValueOutput(UNNUMBERED, 1),
        ConcatenatedOutput(UNNUMBERED, 0, axis=1),
    ]
    spec = number_ports(inputs, outputs, TRIP_COUNT_CONSTANT, 4, execution_condition=3)
    assert [entry.external_port for entry in spec.inputs()] == [2, 3, 4, 5]
    assert [entry.body_parameter for entry in spec.inputs()] == [3, 0, 2, 1]
    assert [type(entry) for entry in spec.inputs()] == [type(entry) for entry in inputs]
    assert [entry.external_port for entry in spec.outputs()] == [0, 1, 2]
    assert [entry.body_result for entry in spec.outputs()] == [2, 1, 0]
    assert spec.sliced_inputs[0].axis == 1 and spec.concatenated_outputs[1].axis == 1
    assert spec.trip_count == 4
    spec.check(4, 4, require_condition=True)


@pytest.mark.parametrize("source", [s for s in TRIP_COUNT_SOURCES if s != TRIP_COUNT_CONSTANT])
def test_number_ports_drops_the_trip_count_of_a_runtime_source(source: str):
    spec = number_ports([MergedInput(UNNUMBERED, 0, 0)], [], source, trip_count=5)
    assert spec.trip_count is None and spec.trip_count_source == source
    spec.check(1, 1)


# Parameters: 0 merged, 1 invariant, 2 current_iteration, 3 invariant, 4 sliced.
FIVE = number_ports(
    [
        MergedInput(UNNUMBERED, 0, 0),
        InvariantInput(UNNUMBERED, 1),
        InvariantInput(UNNUMBERED, 3),
        SlicedInput(UNNUMBERED, 4, axis=0),
    ],
    [LastValueOutput(UNNUMBERED, 0), ConcatenatedOutput(UNNUMBERED, 1, axis=0)],
    TRIP_COUNT_INPUT,
    current_iteration=2,
    execution_condition=2,
)


def test_without_parameters_moves_indices_down_and_renumbers_ports():
    FIVE.check(5, 3, require_condition=True)
    spec = without_parameters(FIVE, {1, 3})
    assert spec.inputs() == [MergedInput(2, 0, 0), SlicedInput(3, 2, axis=0)]
    assert spec.current_iteration == 1
    assert spec.outputs() == FIVE.outputs() and spec.execution_condition == 2
    spec.check(3, 3, require_condition=True)


def test_without_parameters_moves_current_iteration_past_a_dropped_one():
    spec = without_parameters(FIVE, {0})
    assert spec.current_iteration == 1
    assert [entry.body_parameter for entry in spec.inputs()] == [0, 2, 3]
    assert spec.merged_inputs == ()
    spec.check(4, 3)


def test_without_parameters_refuses_to_drop_current_iteration():
    with pytest.raises(ValueError, match="current_iteration"):
        without_parameters(FIVE, {2})


def test_with_outputs_numbers_added_outputs_after_the_spec_own():
    spec = with_outputs(FIVE, [LastValueOutput(UNNUMBERED, 3), LastValueOutput(UNNUMBERED, 4)])
    assert spec.outputs()[:2] == FIVE.outputs()
    assert spec.last_value_outputs[1:] == (LastValueOutput(2, 3), LastValueOutput(3, 4))
    assert spec.inputs() == FIVE.inputs() and spec.current_iteration == 2
    spec.check(5, 5, require_condition=True)


# -- carried values ------------------------------------------------------------------------------
def test_a_carried_value_of_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="carried value 'h': unknown kind 'map'"):
        CarriedValue("h", (0,), kind="map")


def test_a_sequence_is_carried_by_four_ports():
    assert CarriedValue("s", (2, 3, 4, 5), kind=SEQUENCE).merged == (2, 3, 4, 5)
    with pytest.raises(ValueError, match="a sequence takes 4 merged input"):
        CarriedValue("s", (0,), kind=SEQUENCE)


@pytest.mark.parametrize("merged", [(), (0, 1)])
def test_a_tensor_carried_by_other_than_one_port_is_refused(merged: tuple[int, ...]):
    with pytest.raises(ValueError, match=f"takes 1 merged input\\(s\\), got {len(merged)}"):
        CarriedValue("h", merged)


def test_tensors_are_carried_by_consecutive_merged_inputs():
    assert tensors(["a", "b"], first=2) == (CarriedValue("a", (2,)), CarriedValue("b", (3,)))
    assert all(value.kind == TENSOR for value in tensors(["a"]))
    assert tensors([]) == ()


# -- kinds of carried values -----------------------------------------------------------------------
F32 = np.float32


@pytest.mark.parametrize(
    "kind, value",
    [
        (TENSOR, np.arange(3, dtype=F32)),
        (SEQUENCE, [np.arange(3, dtype=F32), np.ones((2, 2), F32)]),
        (SEQUENCE, []),
        (OPTIONAL, np.ones((2, 1), F32)),
        (OPTIONAL, None),
        (OPTIONAL_SEQUENCE, [np.ones(1, F32)]),
        (OPTIONAL_SEQUENCE, []),
        (OPTIONAL_SEQUENCE, None),
    ],
)
def test_a_kind_packs_a_value_into_its_ports_and_unpacks_it(kind, value):
    parts = kind.pack(value, F32)
    assert len(parts) == kind.ports == len(kind.part_names("x"))
    got = kind.unpack(parts)
    if value is None or isinstance(value, np.ndarray):
        assert (got is None) == (value is None) and np.array_equal(got, value)
    else:
        assert len(got) == len(value)
        assert all(np.array_equal(a, b) and a.shape == b.shape for a, b in zip(got, value))


def test_the_kinds_name_their_parts():
    assert TENSOR.part_names("x") == ("x",)
    assert SEQUENCE.part_names("x") == OPTIONAL.part_names("x")
    assert OPTIONAL_SEQUENCE.part_names("x") == (
        "x",
        "x.sizes",
        "x.ranks",
        "x.shapes",
        "x.present",
    )


def test_a_mark_names_a_kind_and_a_part():
    assert read_mark(mark((OPTIONAL, 2))) == (OPTIONAL, 2)
    assert read_mark("optional two") is None and read_mark("map 0") is None


def test_marked_parts_make_a_value_only_whole_and_in_order():
    """An Optional of a tensor, told from a sequence by its marks; a sequence missing a part
    (removed by a transformation) is read as tensors."""
    parts = [(OPTIONAL, k) for k in range(4)] + [None] + [(SEQUENCE, k) for k in (0, 1, 3)]
    assert kinds_of_parts(parts) == [OPTIONAL, TENSOR, TENSOR, TENSOR, TENSOR]


def test_unmarked_parts_are_grouped_by_their_names():
    """An IR written before the marks: ov-loops' part names make a sequence (an Optional of a
    tensor reads as one)."""
    names = ["h", *OPTIONAL_SEQUENCE.part_names("q"), *SEQUENCE.part_names("s"), "s.sizes"]
    assert kinds_by_suffix(names) == [TENSOR, OPTIONAL_SEQUENCE, SEQUENCE, TENSOR]


# -- properties ----------------------------------------------------------------------------------
ROLES = ("sliced", "merged", "invariant")
OUTPUT_ROLES = ("concatenated", "last")


@st.composite
def _port_lists(draw):
    """(inputs, outputs, trip count source, current_iteration, parameter and result counts)
    for random role lists, the body Parameters fed in a random order."""
    roles = draw(st.lists(st.sampled_from(ROLES), max_size=6))
    output_roles = draw(st.lists(st.sampled_from(OUTPUT_ROLES), max_size=4))
    with_current = draw(st.booleans())
    parameters = len(roles) + with_current
    order = draw(st.permutations(range(parameters)))
    results = draw(st.integers(1, 4))
    result = st.integers(0, results - 1)
    stride = st.sampled_from([-2, -1, 1, 2])
    inputs = []
    for role, parameter in zip(roles, order):
        if role == "sliced":
            step = draw(stride)
            axis = draw(st.integers(0, 3))
            inputs.append(
                SlicedInput(UNNUMBERED, parameter, axis, stride=step, part_size=abs(step))
            )
        elif role == "merged":
            inputs.append(MergedInput(UNNUMBERED, parameter, draw(result)))
        else:
            inputs.append(InvariantInput(UNNUMBERED, parameter))
    outputs = [
        ConcatenatedOutput(UNNUMBERED, draw(result), draw(st.integers(0, 3)))
        if role == "concatenated"
        else LastValueOutput(UNNUMBERED, draw(result))
        for role in output_roles
    ]
    current = order[-1] if with_current else None
    source = draw(st.sampled_from(TRIP_COUNT_SOURCES))
    return inputs, outputs, source, current, parameters, results


@settings(max_examples=150, deadline=None)
@given(lists=_port_lists(), data=st.data())
def test_numbered_ports_pass_check_and_survive_dropping_parameters(lists, data):
    inputs, outputs, source, current, parameters, results = lists
    condition = data.draw(st.integers(0, results - 1))
    spec = number_ports(inputs, outputs, source, 2, current, condition)
    spec.check(parameters, results, require_condition=True)
    for kind in (SlicedInput, MergedInput, InvariantInput):
        count = sum(isinstance(entry, kind) for entry in inputs)
        assert sum(isinstance(entry, kind) for entry in spec.inputs()) == count
    assert len(spec.concatenated_outputs) == sum(
        isinstance(entry, ConcatenatedOutput) for entry in outputs
    )
    assert [entry.body_parameter for entry in spec.inputs()] == [e.body_parameter for e in inputs]

    droppable = sorted(entry.body_parameter for entry in inputs)
    dropped = data.draw(st.sets(st.sampled_from(droppable)) if droppable else st.just(set()))
    smaller = without_parameters(spec, dropped)
    smaller.check(parameters - len(dropped), results, require_condition=True)
    assert len(smaller.inputs()) == len(inputs) - len(dropped)
    assert smaller.outputs() == spec.outputs()
