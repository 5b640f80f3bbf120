"""Scenarios and fuzz mutations are registered where they are defined: all of them, once."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import ModuleType

import pytest

from tests import loop_scenarios, scan_scenarios, scenarios
from tests.fuzz import ir_mutations, onnx_mutations
from tests.registry import Registry


def _public_functions(module: ModuleType) -> dict[str, Callable]:
    return {
        name: function
        for name, function in inspect.getmembers(module, inspect.isfunction)
        if function.__module__ == module.__name__ and not name.startswith("_")
    }


def _mutations(module: ModuleType) -> set[Callable]:
    """The module's mutations: its public functions that take (mutant, rng)."""
    return {
        function
        for function in _public_functions(module).values()
        if list(inspect.signature(function).parameters) == ["mutant", "rng"]
    }


def test_a_name_registered_twice_raises():
    registry = Registry("thing")

    @registry.register
    def build():
        return 1

    def other():
        return 2

    with pytest.raises(ValueError, match="thing 'build' is registered twice"):
        registry.register(build)
    with pytest.raises(ValueError, match="thing 'build' is registered twice"):
        registry.register_as("build")(other)
    assert registry == {"build": build}


def test_merging_registries_that_share_a_name_raises():
    first, second = Registry("first"), Registry("second")
    first["shared"], second["shared"], second["own"] = 1, 2, 3
    with pytest.raises(ValueError, match="'shared' is registered twice"):
        Registry.merged("both", first, second)


def test_registration_keeps_the_order_of_definition():
    registry = Registry("thing")
    for name in ("b", "c", "a"):
        registry[name] = name
    assert list(registry) == ["b", "c", "a"]


@pytest.mark.parametrize("module", [loop_scenarios, scan_scenarios], ids=lambda m: m.__name__)
def test_every_public_function_of_a_scenario_module_is_a_registered_scenario(module):
    assert dict(module.SCENARIOS) == _public_functions(module)


def test_all_scenarios_are_the_loop_and_scan_scenarios():
    assert list(scenarios.SCENARIOS) == [*loop_scenarios.SCENARIOS, *scan_scenarios.SCENARIOS]


def test_every_onnx_mutation_is_registered():
    assert {function for function, _ in onnx_mutations.MUTATIONS.values()} == _mutations(
        onnx_mutations
    )
    assert len(onnx_mutations.MUTATIONS) == len(_mutations(onnx_mutations))


def test_every_ir_mutation_is_registered():
    registered = [*ir_mutations.TREE_MUTATIONS.values(), *ir_mutations.TEXT_MUTATIONS.values()]
    assert set(registered) == _mutations(ir_mutations)
    assert len(registered) == len(_mutations(ir_mutations))
