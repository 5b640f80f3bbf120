"""The guide's Gibbs sampler ("Using shared variables - Gibbs sampling"): `OneStep` with shared
W, bvis, bhid and a RandomStreams, run on many chains at once; the mean of every visible unit
after every step agrees with the exact distribution of the chain (its transition matrix over all
visible states, raised to the step), within bounds from the number of chains. Reproducible from
the seed, fresh on every call with the updates, and the same ten draws without them."""

from __future__ import annotations

import itertools

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

import ov_loops
from tests.harness import compile_f32

F32 = np.float32
N_VIS, N_HID, CHAINS, STEPS = 4, 3, 20000, 10
START = np.array([1, 0, 1, 1], F32)
_rng = np.random.default_rng(1)
W_VALUES = _rng.normal(0, 2.0, (N_VIS, N_HID)).astype(F32)
BVIS_VALUES = _rng.normal(0, 0.5, N_VIS).astype(F32)
BHID_VALUES = _rng.normal(0, 0.5, N_HID).astype(F32)


def _gibbs(seed: int = 1234, form: str = "captured", updated: bool = True) -> ov.InferRequest:
    """gibbs10 of the guide, returning values[-1] and every step's sample. `form`: "captured"
    (OneStep reads W, bvis, bhid itself), "strict" (passed as non_sequences, strict=True) or
    "strict without non_sequences"."""
    W = ov_loops.shared(W_VALUES, "W")
    bvis = ov_loops.shared(BVIS_VALUES, "bvis")
    bhid = ov_loops.shared(BHID_VALUES, "bhid")
    trng = ov_loops.RandomStreams(seed)

    def OneStep(vsample, W=W, bvis=bvis, bhid=bhid):  # noqa: N802, N803 - the guide's names
        hmean = ops.sigmoid(ops.add(ops.matmul(vsample, W, False, False), bhid))
        hsample = trng.binomial(size=ops.shape_of(hmean), n=1, p=hmean, dtype=np.float32)
        vmean = ops.sigmoid(ops.add(ops.matmul(hsample, W, False, True), bvis))
        return trng.binomial(size=ops.shape_of(vsample), n=1, p=vmean, dtype=np.float32)

    sample = ops.parameter([-1, N_VIS], F32, name="sample")
    passed = {
        "captured": {},
        "strict": dict(non_sequences=[W, bvis, bhid], strict=True),
        "strict without non_sequences": dict(strict=True),
    }[form]
    values, updates = ov_loops.scan(OneStep, outputs_info=sample, n_steps=STEPS, **passed)
    last = ops.gather(values, ops.constant(np.int64(-1)), ops.constant(np.int64(0)))
    model = ov_loops.function([sample], [last, values], updates=updates if updated else None)
    return compile_f32(model).create_infer_request()


def _run(request: ov.InferRequest) -> tuple[np.ndarray, np.ndarray]:
    last, values = request.infer({"sample": np.tile(START, (CHAINS, 1))}).to_tuple()
    return np.array(last), np.array(values)


def _exact_means() -> np.ndarray:
    """[STEPS, N_VIS]: the mean of each visible unit after each step, from the chain's
    transition matrix T[v, v'] = sum_h P(h | v) P(v' | h) over all 2**N_VIS visible states."""

    def conditional(given, weights, bias, states):  # P(states | given), rows per `given`
        on = 1 / (1 + np.exp(-(given @ weights + bias)))
        return np.prod(np.where(states[None, :, :] == 1, on[:, None, :], 1 - on[:, None, :]), -1)

    visible = np.array(list(itertools.product([0, 1], repeat=N_VIS)), np.float64)
    hidden = np.array(list(itertools.product([0, 1], repeat=N_HID)), np.float64)
    weights = W_VALUES.astype(np.float64)
    transition = conditional(visible, weights, BHID_VALUES, hidden) @ conditional(
        hidden, weights.T, BVIS_VALUES, visible
    )
    distribution = (visible == START).all(axis=1).astype(np.float64)
    means = []
    for _ in range(STEPS):
        distribution = distribution @ transition
        means.append(distribution @ visible)
    return np.array(means)


def _assert_means_match(values: np.ndarray) -> None:
    exact = _exact_means()
    bound = 5 * np.sqrt(exact * (1 - exact) / CHAINS)  # 5 standard errors of each mean
    observed = values.mean(axis=1)
    assert np.all(np.abs(observed - exact) <= bound), (observed, exact, bound)


@pytest.mark.parametrize("form", ["captured", "strict"])
def test_gibbs_means_match_the_exact_chain(form):
    request = _gibbs(form=form)
    for _ in range(2):  # the second call continues the streams: new draws, same distribution
        last, values = _run(request)
        assert set(np.unique(values)) <= {0.0, 1.0} and values.shape == (STEPS, CHAINS, N_VIS)
        np.testing.assert_array_equal(last, values[-1])
        _assert_means_match(values)


def test_gibbs_is_reproducible_from_the_seed_and_fresh_on_each_call():
    request = _gibbs()
    first, second = _run(request)[1], _run(request)[1]
    assert np.mean(first != second) > 0.1  # the updates moved every stream on
    np.testing.assert_array_equal(_run(_gibbs())[1], first)
    np.testing.assert_array_equal(_run(_gibbs(form="strict"))[1], first)  # same draws
    assert np.mean(_run(_gibbs(seed=4321))[1] != first) > 0.1
    request.reset_state()
    np.testing.assert_array_equal(_run(request)[1], first)


def test_gibbs_without_the_updates_repeats_the_same_ten_draws():
    request = _gibbs(updated=False)
    np.testing.assert_array_equal(_run(request)[1], _run(request)[1])


def test_gibbs_strict_without_non_sequences_is_an_error():
    """strict=True with W, bvis, bhid read by OneStep but not passed: one line naming them (the
    random streams' own states are not the user's to pass)."""
    names = r"W(_\d+)?, bhid(_\d+)?, bvis(_\d+)?"
    with pytest.raises(ov_loops.BuilderError, match=f"fn: uses {names} from outside"):
        _gibbs(form="strict without non_sequences")
