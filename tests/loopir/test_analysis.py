"""`is_read` and `computes_from_constants` answer what `read_parameters` (the walk of the whole
body from its Results) says: forward from one Parameter, and value by value."""

from __future__ import annotations

import pytest

from ov_loops.loopir.analysis import (
    computed_from_constants,
    computes_from_constants,
    is_read,
    read_parameters,
)
from ov_loops.loopir.loop import LoopIR
from tests.loopir_scenarios import SCENARIOS


def _whole_body_answer(loop: LoopIR, shapes: bool) -> bool:
    """computes_from_constants as it was: every outer value the body reads, in one walk."""
    read, parameters = read_parameters(loop.body), loop.body.get_parameters()
    outer = [
        loop.outer[entry.external_port]
        for entry in loop.spec.inputs()
        if parameters[entry.body_parameter].get_instance_id() in read
    ]
    return computed_from_constants([loop.trip.value, loop.start.value, *outer], shapes)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_is_read_finds_the_parameters_read_parameters_finds(name):
    loop = SCENARIOS[name]()[0]
    read = read_parameters(loop.body)
    for parameter in loop.body.get_parameters():
        assert is_read(loop.body, parameter) == (parameter.get_instance_id() in read)


@pytest.mark.parametrize("shapes", [False, True])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_computes_from_constants_answers_as_the_whole_body_walk(name, shapes):
    loop = SCENARIOS[name]()[0]
    assert computes_from_constants(loop, shapes) == _whole_body_answer(loop, shapes)


def test_a_capture_only_an_unused_if_output_reads_is_not_read():
    """x_in enters the If only for an output nothing reads (OpenVINO drops that input): the
    forward walk meets the If and asks read_parameters."""
    loop = SCENARIOS["constant_controls_if_drops_a_capture"]()[0]
    parameters = loop.body.get_parameters()
    assert not is_read(loop.body, parameters[2])
    assert is_read(loop.body, parameters[0])
    # the run-time input x reaches only that If input: the loop is computed from constants
    assert computes_from_constants(loop)
