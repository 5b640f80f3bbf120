"""The random variables that pick or count items on the OPENVINO mode: permutation, choice
without replacement (with and without p), multinomial and hypergeometric. Each draw's
frequencies against the exact probabilities (200k draws), batches and size, and the rng
update semantics; a RandomVariable without a translation is named. Skipped without pytensor."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("pytensor", reason="pytensor is not installed (pip install ov-loops[pytensor])")

import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
from pytensor.tensor.random.op import RandomVariable  # noqa: E402
from scipy import stats  # noqa: E402

import ov_loops.pytensor  # noqa: E402, F401  (registers the mode)
from ov_loops.pytensor import UnsupportedOpError  # noqa: E402

DRAWS = 200_000


def _rng(seed: int = 3):
    return pytensor.shared(np.random.default_rng(seed), name="rng")


def _run(variable, inputs=(), values=()):
    return pytensor.function(list(inputs), variable, mode="OPENVINO")(*values)


def _assert_frequencies(outcomes: np.ndarray, probabilities: dict) -> None:
    """The outcomes (rows) are among `probabilities`' keys, with those frequencies (a
    chi-square test of 200k draws)."""
    keys, counts = np.unique(outcomes, axis=0, return_counts=True)
    seen = {tuple(np.atleast_1d(key).tolist()): count for key, count in zip(keys, counts)}
    assert set(seen) <= set(probabilities), set(seen) - set(probabilities)
    expected = np.array(list(probabilities.values())) * len(outcomes)
    observed = np.array([seen.get(key, 0) for key in probabilities])
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_permutations_of_a_range_are_uniform():
    draws = _run(pt.random.permutation(4, size=(DRAWS,), rng=_rng()))
    assert draws.shape == (DRAWS, 4) and draws.dtype == np.int8
    _assert_frequencies(draws, dict.fromkeys(itertools.permutations(range(4)), 1 / 24))


def test_a_permuted_array_keeps_its_rows():
    x = pt.dmatrix("x")
    rows = np.arange(12.0).reshape(4, 3)
    draws = _run(pt.random.permutation(x, size=(DRAWS // 10,), rng=_rng(5)), [x], [rows])
    assert draws.shape == (DRAWS // 10, 4, 3)
    np.testing.assert_array_equal(np.sort(draws, axis=1), np.broadcast_to(rows, draws.shape))
    _assert_frequencies(draws[:, 0, 0], {(value,): 0.25 for value in rows[:, 0]})


def _ordered_pairs(p: np.ndarray) -> dict:
    """P(first = i, second = j) drawing without replacement in proportion to p."""
    return {(i, j): p[i] * p[j] / (1 - p[i]) for i, j in itertools.permutations(range(len(p)), 2)}


def _choice_without_replacement(a, p, picks, size):
    """PyTensor's Op for choice(a, picks, replace=False, p) with a batch size."""
    op = pt.random.choice(a, size=picks, replace=False, p=p).owner.op
    params = (a, picks) if p is None else (a, p, picks)
    return op(*params, size=size, rng=_rng(7))


def test_choice_without_replacement_with_p_picks_in_proportion_to_what_is_left():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    draws = _run(_choice_without_replacement(4, p, (2,), (DRAWS,)))
    assert draws.shape == (DRAWS, 2)
    _assert_frequencies(draws, _ordered_pairs(p))


def test_choice_without_replacement_without_p_and_from_an_array():
    draws = _run(_choice_without_replacement(5, None, (2,), (DRAWS,)))
    _assert_frequencies(draws, _ordered_pairs(np.full(5, 0.2)))
    a = pt.dmatrix("a")
    rows = np.arange(8.0).reshape(4, 2)
    picked = _run(pt.random.choice(a, size=(3,), replace=False, rng=_rng()), [a], [rows])
    assert picked.shape == (3, 2) and len({tuple(row) for row in picked}) == 3
    assert all(tuple(row) in {tuple(r) for r in rows} for row in picked)


def test_choice_with_replacement_and_p():
    p = np.array([0.5, 0.3, 0.2])
    values = np.array([10.0, 20.0, 30.0])
    draws = _run(pt.random.choice(values, size=(DRAWS,), replace=True, p=p, rng=_rng()))
    _assert_frequencies(draws, {(v,): w for v, w in zip(values, p)})


def test_multinomial_counts_have_their_joint_distribution():
    p = np.array([0.2, 0.3, 0.5])
    draws = _run(pt.random.multinomial(6, p, size=(DRAWS,), rng=_rng()))
    assert draws.shape == (DRAWS, 3) and draws.dtype == np.int64
    law = stats.multinomial(6, p)
    outcomes = [c for c in itertools.product(range(7), repeat=3) if sum(c) == 6]
    _assert_frequencies(draws, {c: law.pmf(c) for c in outcomes})


def test_multinomial_broadcasts_n_and_p():
    n, p = pt.lvector("n"), pt.dmatrix("p")
    probabilities = np.array([[0.5, 0.5, 0.0], [0.1, 0.1, 0.8]])
    draws = _run(pt.random.multinomial(n, p, rng=_rng()), [n, p], [[0, 1000], probabilities])
    assert draws.shape == (2, 3)
    np.testing.assert_array_equal(draws.sum(axis=1), [0, 1000])
    assert abs(draws[1, 2] - 800) < 5 * np.sqrt(1000 * 0.8 * 0.2)


def test_hypergeometric_has_its_distribution_and_broadcasts():
    draws = _run(pt.random.hypergeometric(7, 5, 6, size=(DRAWS,), rng=_rng()))
    assert draws.dtype == np.int64
    law = stats.hypergeom(12, 7, 6)
    _assert_frequencies(draws, {(k,): law.pmf(k) for k in range(1, 7)})
    good, bad, sample = pt.lvector("good"), pt.lvector("bad"), pt.lvector("sample")
    batched = pt.random.hypergeometric(good, bad, sample, size=(DRAWS // 10, 3), rng=_rng())
    values = [np.array([3, 0, 40]), np.array([2, 9, 60]), np.array([5, 4, 0])]
    draws = _run(batched, [good, bad, sample], values)
    np.testing.assert_array_equal(draws[:, :2], np.broadcast_to([3, 0], (DRAWS // 10, 2)))
    assert np.all(draws[:, 2] == 0)


def test_updated_rngs_give_new_draws_and_fixed_ones_repeat_them():
    stream = pt.random.utils.RandomStream(seed=2)
    variables = [
        stream.permutation(6),
        stream.choice(6, size=(3,), replace=False, p=np.full(6, 1 / 6)),
        stream.multinomial(20, np.full(4, 0.25)),
        stream.hypergeometric(20, 20, 10, size=(5,)),
    ]
    updated = pytensor.function([], variables, mode="OPENVINO")
    fixed = pytensor.function([], variables, mode="OPENVINO", no_default_updates=True)
    assert all(not np.array_equal(a, b) for a, b in zip(updated(), updated()))
    for a, b in zip(fixed(), fixed()):
        np.testing.assert_array_equal(a, b)


class _Unknown(RandomVariable):
    name = "unknown_rv"
    signature = "()->()"
    dtype = "floatX"

    @classmethod
    def rng_fn(cls, rng, loc, size):
        return rng.normal(loc, size=size)


def test_random_variables_without_translation_are_named():
    with pytest.raises(UnsupportedOpError, match="unknown_rv"):
        pytensor.function([], _Unknown()(0.0, rng=_rng()), mode="OPENVINO")
