"""docs/validate-rules.md lists exactly the validator's rules, each with its severity, and says
how many there are."""

from __future__ import annotations

import re

from ov_loops.ir.rules import RULES
from ov_loops.ir.validate import BIN_CODE
from tests.docs.blocks import ROOT

PAGE = (ROOT / "docs" / "validate-rules.md").read_text(encoding="utf-8")


def _rows() -> dict[str, str]:
    """Each code the page's tables list (a row may list several: `PM001 / PM002`) -> its
    severity."""
    found = {}
    for codes, severity in re.findall(
        r"^\| ([A-Z]+\d{3}(?: / [A-Z]+\d{3})*) \| (\w+) \|", PAGE, re.M
    ):
        found.update(dict.fromkeys(codes.split(" / "), severity))
    return found


def test_the_page_lists_every_rule_with_its_severity():
    rules = {rule.code: rule.severity for rule in RULES}
    assert _rows() == rules
    assert BIN_CODE in PAGE  # the unreadable .bin: a finding of no rule


def test_the_page_counts_the_rules():
    devices = sum(1 for rule in RULES if rule.target)
    stated = f"It has {len(RULES)} rules: {len(RULES) - devices} always, and {devices} per"
    assert stated in " ".join(PAGE.split())
