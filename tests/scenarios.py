"""Every Loop and Scan scenario in one registry (a name in both would raise)."""

from __future__ import annotations

from tests import loop_scenarios, scan_scenarios
from tests.registry import Registry

SCENARIOS: Registry = Registry.merged(
    "scenario", loop_scenarios.SCENARIOS, scan_scenarios.SCENARIOS
)
