"""unbounded-carry-lengths: a carried value of static length the body changes enters with a
length OpenVINO cannot bound (OpenVINO's CPU plugin otherwise keeps the entering length inside
the body: ShapeOf gave 3 after the back edge had made the value 4 long, and memory sized for 3
was overrun). The IR-reference equivalence of the pass on every scenario is in test_passes.py."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import ov_loops
from ov_loops.loopir.passes.unbounded_carries import UnboundedCarryLengths
from tests.loop_scenarios import SCENARIOS as LOOP_SCENARIOS
from tests.loopir_scenarios import (
    accumulating_loop,
    constant_controls_if_drops_a_capture,
    growing_vector_of_static_length,
)

ROOT = Path(__file__).resolve().parents[3]


def test_a_growing_value_of_static_length_enters_unbounded():
    loop, _, _ = growing_vector_of_static_length()
    assert loop.outer[2].get_partial_shape().is_static
    after = UnboundedCarryLengths()(loop)
    entering = after.outer[2]
    assert entering.get_node().get_type_name() == "Gather"
    assert str(entering.get_partial_shape()) == "[?]"
    assert after.outer[3] is loop.outer[3]  # the invariant input is left alone


def test_a_value_growing_along_axis_1_enters_unbounded_along_axis_1():
    """[2, 2] growing to [2, 1..]: it enters as [2, ?] (entering [2, 2] with its last value
    unread, the CPU plugin failed: "object is not initialized", issue 20)."""
    made, _ = LOOP_SCENARIOS["loop_in_a_body_with_an_unread_grown_carried_value"]()
    converted = ov_loops.convert(made, optimize="none")
    (top,) = [op for op in converted.get_ordered_ops() if op.get_friendly_name() == "main/top"]
    grown = top.input_value(2)
    assert grown.get_node().get_type_name() == "Gather"
    assert str(grown.get_partial_shape()) == "[2,?]"


def test_a_value_that_keeps_its_static_shape_is_left():
    loop, _, _ = accumulating_loop(3)  # y [2] -> y + x [2]
    assert UnboundedCarryLengths()(loop) is loop


def test_a_value_entering_empty_is_left():
    loop, _, _ = growing_vector_of_static_length(0)  # a list built from SequenceEmpty
    assert UnboundedCarryLengths()(loop) is loop


def test_a_loop_of_constants_is_left():
    loop, _, _ = constant_controls_if_drops_a_capture()  # no Parameter to compute a zero from
    assert UnboundedCarryLengths()(loop) is loop


PROBE = """
import openvino as ov, ov_loops
from tests.sequence_scenarios import SEQUENCE_SCENARIOS
made, runs = SEQUENCE_SCENARIOS["list_starting_non_empty_read_and_written_by_position"]()[:2]
conv = ov_loops.translate(made)
core = ov.Core()
for _ in range(3):
    compiled = core.compile_model(conv.model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    for feed in runs:
        request.infer(feed)
print("ran")
"""


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))


def test_list_editing_loop_runs_when_new_allocations_hold_a_large_int():
    """glibc fills each new allocation with 0x4F bytes (MALLOC_PERTURB_=176): a value read from
    memory never written is 1330597711, and before the pass every first inference of this
    scenario asked for 5.3 GB in a Range (the address space is limited to 3 GB here)."""
    env = dict(os.environ, MALLOC_PERTURB_="176", PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_limit_memory,
    )
    assert done.returncode == 0 and "ran" in done.stdout, done.stderr[-2000:]
