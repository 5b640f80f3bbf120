"""Random variables on the OPENVINO mode: normal and uniform draws from the rng's key, the rng
update semantics (an updated rng gives new draws, a fixed one repeats them), draws inside a
scan, and the RandomVariables without a translation named. Skipped without pytensor."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytensor", reason="pytensor is not installed (pip install ov-loops[pytensor])")

import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402

from ov_loops.pytensor import UnsupportedOpError  # noqa: E402

DRAWS = 200_000


def test_normal_and_uniform_draws_have_their_distributions_and_change_every_call():
    stream = pt.random.utils.RandomStream(seed=11)
    loc, scale = pt.dscalar("loc"), pt.dscalar("scale")
    normal = stream.normal(loc, scale, size=(DRAWS,))
    uniform = stream.uniform(-1.0, 3.0, size=(DRAWS // 1000, 1000))
    function = pytensor.function([loc, scale], [normal, uniform], mode="OPENVINO")
    first, second = function(1.0, 2.0), function(1.0, 2.0)
    draws, units = first
    assert draws.shape == (DRAWS,) and units.shape == (DRAWS // 1000, 1000)
    assert abs(draws.mean() - 1.0) < 5 * 2.0 / np.sqrt(DRAWS)
    assert abs(draws.std() - 2.0) < 0.02
    assert abs(np.mean(draws < 1.0) - 0.5) < 0.01
    assert units.min() >= -1.0 and units.max() < 3.0
    assert abs(units.mean() - 1.0) < 5 * (4 / np.sqrt(12)) / np.sqrt(DRAWS)
    histogram = np.histogram(units, bins=8, range=(-1, 3))[0] / DRAWS
    np.testing.assert_allclose(histogram, 1 / 8, atol=0.005)
    assert not np.any(first[0] == second[0]) and not np.any(first[1] == second[1])


def test_a_fixed_rng_repeats_its_draws_and_broadcasts_its_parameters():
    rng = pytensor.shared(np.random.default_rng(4), name="rng")
    loc = pt.dvector("loc")
    function = pytensor.function([loc], pt.random.normal(loc, 1e-3, rng=rng), mode="OPENVINO")
    centres = np.array([0.0, 10.0, 20.0])
    first = function(centres)
    np.testing.assert_array_equal(first, function(centres))
    np.testing.assert_allclose(first, centres, atol=0.01)
    assert len(set(first - centres)) == 3


def test_draws_in_a_scan_differ_per_step_and_per_call_with_the_rng_update():
    rng = pytensor.shared(np.random.default_rng(190), name="rng")

    def draw(generator):
        next_generator, x = pt.random.normal(rng=generator, size=(2,)).owner.outputs
        return x, {generator: next_generator}

    xs, updates = pytensor.scan(
        draw, outputs_info=[None], non_sequences=[rng], strict=True, n_steps=10
    )
    function = pytensor.function([], xs, updates=updates, mode="OPENVINO")
    first, second = function(), function()
    assert first.shape == (10, 2)
    assert len(np.unique(first)) == 20
    assert not np.any(first == second)
    repeat = pytensor.function([], xs, mode="OPENVINO")
    np.testing.assert_array_equal(repeat(), repeat())


def test_random_variables_without_translation_are_named():
    rng = pytensor.shared(np.random.default_rng(0))
    with pytest.raises(UnsupportedOpError, match="gamma"):
        pytensor.function([], pt.random.gamma(2.0, 1.0, rng=rng), mode="OPENVINO")
