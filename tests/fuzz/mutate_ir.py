"""Campaign: mutated IR XML through `ov-loops validate` (text, `--show`, json) and `check`.

Seeds are the valid IR samples and the IRs `convert` writes for a few scenarios. Each mutant
gets one or two mutations (`tests/fuzz/ir_mutations.py`). Besides the CLI's promise, the json
output must parse; and, as information only, a mutant of the loop structure that `validate`
passes but OpenVINO cannot read or compile is a "validator_misses", one that `validate` fails
but `check` runs and matches a "validator_false_alarms".
"""

from __future__ import annotations

import contextlib
import functools
import json
import random
import tempfile
from pathlib import Path

from lxml import etree

from tests.fuzz import REPOSITORY, Recorder, fuzz, last_line, run_cli
from tests.fuzz.ir_mutations import TEXT_MUTATIONS, TREE_MUTATIONS, IrMutant, NotApplicable

VALIDATE_TIMEOUT = 30.0
CHECK_TIMEOUT = 90.0
CONVERTED_SCENARIOS = [
    "loop_nested_three_deep_with_captures",
    "scan_inside_loop_and_loop_inside_scan",
    "scan8_sequence_lens_variable_lengths",
    "if_inside_loop_body",
    "loop_reads_capture_at_iteration_number",
    "scan_bidirectional_same_input_twice",
]
VALIDATE_FORMS = [["--show"], ["--format", "json"], ["--show", "--format", "json"]]


@functools.cache
def seeds() -> dict[str, tuple[bytes, bytes]]:
    """Every valid IR sample, and the IRs `convert` writes for a few scenarios: (xml, bin)."""
    found = {}
    for xml in sorted((REPOSITORY / "ir_samples" / "valid").glob("*.xml")):
        found[xml.stem] = (xml.read_bytes(), xml.with_suffix(".bin").read_bytes())
    found.update(_converted_scenarios())
    return found


def _converted_scenarios() -> dict[str, tuple[bytes, bytes]]:
    from tests.scenarios import SCENARIOS

    converted = {}
    with tempfile.TemporaryDirectory(prefix="ov-loops-fuzz-seeds-") as scratch:
        for name in CONVERTED_SCENARIOS:
            model, _ = SCENARIOS[name]()
            onnx_path, xml = Path(scratch) / f"{name}.onnx", Path(scratch) / f"{name}.xml"
            onnx_path.write_bytes(model.SerializeToString())
            if (
                run_cli(
                    ["convert", str(onnx_path), "-o", str(xml), "--compress_to_fp16=False"]
                ).returncode
                == 0
            ):
                converted[name] = (xml.read_bytes(), xml.with_suffix(".bin").read_bytes())
    return converted


def make_mutant(input_seed: int) -> tuple[str, IrMutant]:
    """The mutant `input_seed` stands for: (seed IR name, mutant)."""
    rng = random.Random(input_seed)
    name = rng.choice(sorted(seeds()))
    xml, weights = seeds()[name]
    parser = etree.XMLParser(remove_blank_text=False, resolve_entities=False)
    mutant = IrMutant(etree.ElementTree(etree.fromstring(xml, parser)), weights)
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        for _attempt in range(8):
            key = rng.choice(sorted(TREE_MUTATIONS))
            try:
                mutant.steps.append(f"{key}: {TREE_MUTATIONS[key](mutant, rng)}")
            except NotApplicable:
                continue
            break
    if rng.random() < 0.15:
        key = rng.choice(sorted(TEXT_MUTATIONS))
        with contextlib.suppress(NotApplicable):
            mutant.steps.append(f"{key}: {TEXT_MUTATIONS[key](mutant, rng)}")
    return name, mutant


def write_mutant(mutant: IrMutant, directory: Path) -> Path:
    xml = directory / "model.xml"
    xml.write_bytes(mutant.xml())
    xml.with_suffix(".bin").write_bytes(mutant.bin)
    return xml


def run(budget_seconds: float, seed: int, max_inputs: int | None = None) -> dict:
    """Mutate, validate and check until the budget (or `max_inputs`) is spent; the counts."""
    seeds()  # converting the seed scenarios is not part of the budget
    return fuzz("mutate_ir", try_mutant, budget_seconds, seed, max_inputs)


def try_mutant(input_seed: int, recorder: Recorder) -> None:
    """Validate the mutant `input_seed` as text and in one other form, then check it."""
    name, mutant = make_mutant(input_seed)
    what = f"{name}: {'; '.join(mutant.steps) or 'unmutated'}"
    recorder.counts["inputs"] += 1
    form = random.Random(input_seed).choice(VALIDATE_FORMS)
    with tempfile.TemporaryDirectory(prefix="ov-loops-fuzz-ir-") as scratch:
        directory = Path(scratch)
        xml = write_mutant(mutant, directory)
        validation = None
        for arguments in (["validate", str(xml)], ["validate", str(xml), *form]):
            outcome = run_cli(arguments, VALIDATE_TIMEOUT, cwd=directory, watched=directory)
            recorder.outcome(outcome, input_seed, what)
            answered = not outcome.classes and outcome.returncode in (0, 1)
            if "json" in arguments and answered and not _parses(outcome.stdout):
                detail = f"--format json printed no JSON: {outcome.stdout[:80]!r}"
                recorder.failure("bad_output", input_seed, what, detail, " ".join(arguments))
            validation = validation or outcome
        checked = run_cli(["check", str(xml)], CHECK_TIMEOUT, cwd=directory, watched=directory)
        recorder.outcome(checked, input_seed, what)
    _compare_verdicts(validation.returncode, checked, mutant, input_seed, what, recorder)


def _compare_verdicts(validated, checked, mutant: IrMutant, seed: int, what: str, recorder):
    """Where `validate` and OpenVINO disagree about a loop-structure mutant (information)."""
    if not mutant.loop_only or checked.classes:
        return
    message = last_line(checked.stderr)
    unreadable = "cannot compile" in message or "cannot read" in message
    if validated == 0 and checked.returncode == 2 and unreadable:
        recorder.info("validator_misses", seed, what, message)
    if validated == 1 and checked.returncode == 0:
        recorder.info("validator_false_alarms", seed, what, "check matches the IR reference")


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
