"""`python -m tests.fuzz --minutes 30 [--seed N] [--campaign NAME]`: run the fuzz campaigns
round-robin for the time given, print per-campaign counts and one example per failure class
(with the seed that rebuilds its input), and exit 1 if anything broke the promise.

`--replay SEED --campaign mutate_onnx|mutate_ir|differential --out DIR` writes the input SEED
stands for into DIR (with what was done to it; a differential seed: the model and its runs), to
reproduce an example by hand.
"""

from __future__ import annotations

import argparse
import importlib
import random
import sys
import time
from pathlib import Path

from tests.fuzz import FAILURES, failure_count, merge, new_counts

CAMPAIGNS = ["mutate_onnx", "mutate_ir", "differential", "hostile_check", "hostile_convert"]
ROUND_SECONDS = 120.0  # each campaign's turn before the next one's


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=None, help="default: from the clock")
    parser.add_argument("--campaign", action="append", choices=CAMPAIGNS)
    parser.add_argument("--replay", type=int, metavar="SEED", help="write one input and stop")
    parser.add_argument("--out", type=Path, help="where --replay writes the input")
    return parser.parse_args(argv)


def load_campaigns(names: list[str]) -> dict:
    """The campaign modules present in this tree; absent ones are skipped with a note."""
    found = {}
    for name in names:
        try:
            found[name] = importlib.import_module(f"tests.fuzz.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"tests.fuzz.{name}":
                raise
            print(f"note: campaign {name} is not in this tree, skipped")
    return found


def run_campaigns(campaigns: dict, seconds: float, seed: int) -> dict[str, dict]:
    """Give each campaign turns of ROUND_SECONDS (or less) until `seconds` are spent."""
    results = {name: new_counts() for name in campaigns}
    deadline = time.monotonic() + seconds
    turn = 0
    while campaigns and time.monotonic() < deadline:
        for name, module in campaigns.items():
            left = deadline - time.monotonic()
            if left <= 1:
                break
            part = module.run(min(ROUND_SECONDS, left), seed * 1000 + turn)
            merge(results[name], part)
        turn += 1
    return results


def report(results: dict[str, dict]) -> list[str]:
    """Counts per campaign, then each distinct failure or finding with its seed."""
    lines = []
    for name, counts in results.items():
        numbers = {k: v for k, v in counts.items() if isinstance(v, int)}
        shown = ", ".join(f"{k} {v}" for k, v in numbers.items() if "/" not in k)
        lines.append(f"{name}: {shown}")
        modes: dict[str, list[str]] = {}  # "max/disagreements": the differential's per level
        for key, value in numbers.items():
            if "/" in key:
                mode, _, what = key.partition("/")
                modes.setdefault(mode, []).append(f"{what} {value}")
        lines += [f"  {mode}: {', '.join(parts)}" for mode, parts in modes.items()]
    for name, counts in results.items():
        for example in counts.get("examples", []):
            kind = example.get("class", "?")
            lines.append(
                f"  [{name}] {kind} x{example.get('count', 1)} (seed {example.get('seed')}): "
                f"{example.get('detail', '')}"
            )
            lines.append(f"      input: {str(example.get('input', ''))[:400]}")
            if example.get("command"):
                lines.append(f"      command: {example['command']}")
    return lines


def replay(campaign: str, seed: int, out: Path) -> None:
    """Write the input `seed` stands for into `out` and print how it was made."""
    if campaign == "differential":  # a random model and its runs
        from tests.fuzz.random_models import write_model

        print("\n".join(write_model(seed, out)))
        return
    module = importlib.import_module(f"tests.fuzz.{campaign}")
    out.mkdir(parents=True, exist_ok=True)
    name, mutant = module.make_mutant(seed)[:2]
    path = module.write_mutant(mutant, out)
    print(f"{path}: from {name}")
    for step in mutant.steps:
        print(f"  {step}")


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    names = args.campaign or CAMPAIGNS
    if args.replay is not None:
        if len(names) != 1 or names[0] == "hostile_check" or not args.out:
            print("--replay needs one --campaign (mutate_onnx, mutate_ir, differential), --out DIR")
            return 2
        replay(names[0], args.replay, args.out)
        return 0
    seed = args.seed if args.seed is not None else random.randrange(10**6)
    print(f"fuzzing {', '.join(names)} for {args.minutes:g} min, seed {seed}")
    results = run_campaigns(load_campaigns(names), args.minutes * 60, seed)
    for line in report(results):
        print(line)
    broken = sum(failure_count(counts) for counts in results.values())
    print(f"{broken} input(s) broke the promise ({', '.join(FAILURES)})" if broken else "clean")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
