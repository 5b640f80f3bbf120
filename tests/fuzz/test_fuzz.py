"""Bounded fuzz campaigns on fixed seeds: no input may break the CLI's promise (a traceback, a
native crash, a hang, an undocumented exit code, output left half-written) and no IR that
`convert` writes may fail to load and run on the CPU or disagree with onnxruntime.

`python -m tests.fuzz --minutes 30` runs the same campaigns, longer and on fresh seeds.
"""

from __future__ import annotations

import pytest

from tests.fuzz import FAILURES, failure_count, hostile_convert, mutate_ir, mutate_onnx

pytestmark = pytest.mark.fuzz


def _failures(counts: dict) -> str:
    lines = [f"{k}={counts[k]}" for k in FAILURES if counts.get(k)]
    for example in counts["examples"]:
        if example["class"] in FAILURES:
            lines.append(f"{example['class']} (seed {example['seed']}): {example['detail']}")
            lines.append(f"    {example['input'][:300]}")
    return "\n".join(lines)


def test_mutated_onnx_loops_convert_cleanly_to_runnable_ir():
    counts = mutate_onnx.run(budget_seconds=25, seed=1, max_inputs=14)  # with the others: ~75 s
    assert counts["inputs"] > 0
    assert failure_count(counts) == 0, _failures(counts)


def test_mutated_ir_port_maps_validate_and_check_cleanly():
    counts = mutate_ir.run(budget_seconds=25, seed=1, max_inputs=6)
    assert counts["inputs"] > 0
    assert failure_count(counts) == 0, _failures(counts)


def test_hostile_convert_arguments_are_refused_in_one_line_or_converted():
    counts = hostile_convert.run(budget_seconds=25, seed=1, max_inputs=120)
    assert counts["inputs"] > 0
    assert failure_count(counts) == 0, _failures(counts)
