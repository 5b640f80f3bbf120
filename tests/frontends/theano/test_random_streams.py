"""RandomStreams: the generator computed by OpenVINO equals its definition (the module docstring)
bit for bit; draws have the moments of their distribution within bounds from the sample size;
they differ between steps, calls and seeds, and repeat for a seed and after a reset. And what
OpenVINO's own RandomUniform does inside a Loop, the reason it is not used."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

import ov_loops
from tests.harness import F32 as F32_CONFIG
from tests.harness import compile_f32, core

F32 = np.float32
GOLDEN, MASK = 0x9E3779B9, 0xFFFFFFFF
SIGMAS = 5  # every bound below is 5 standard errors of its statistic


def _mix(h: np.ndarray) -> np.ndarray:
    h = np.asarray(h, np.uint64)
    for shift, multiplier in ((16, 0x85EBCA6B), (13, 0xC2B2AE35), (16, None)):
        h = h ^ (h >> np.uint64(shift))
        if multiplier is not None:
            h = (h * np.uint64(multiplier)) & np.uint64(MASK)
    return h


def _uniform_definition(seed: int, draw: int, counter: int, count: int) -> np.ndarray:
    """The module docstring's uniform on [0, 1): draw is 0 for the first draw of the stream."""
    key = _mix(_mix(seed) ^ np.uint64(GOLDEN * (draw + 1) & MASK))
    stream = _mix(key ^ _mix(counter))
    elements = np.arange(count, dtype=np.uint64)
    bits = _mix((stream + np.uint64(GOLDEN) * elements) & np.uint64(MASK))
    return ((bits >> np.uint64(8)).astype(np.float64) * 2.0**-24).astype(F32)


def _request(outputs, updates, inputs=(), config=F32_CONFIG) -> ov.InferRequest:
    model = ov_loops.function(list(inputs), outputs, updates=updates)
    return core().compile_model(model, "CPU", config).create_infer_request()


def _call(request: ov.InferRequest, feeds=None) -> list[np.ndarray]:
    return [np.array(v) for v in request.infer(feeds or {}).to_tuple()]


def _within(value: float, expected: float, standard_error: float) -> bool:
    return abs(value - expected) <= SIGMAS * standard_error


def _correlation(first: np.ndarray, second: np.ndarray) -> float:
    return float(np.corrcoef(first.ravel(), second.ravel())[0, 1])


@pytest.mark.parametrize("config", [F32_CONFIG, {}], ids=["f32", "default precision"])
def test_draws_equal_the_generator_definition_bit_for_bit(config):
    """Step t of call c reads counter 5c + t inside the scan; the draw outside reads c. Exact
    also in the CPU's default precision (bf16 here): the float steps hold exact integers."""
    streams = ov_loops.RandomStreams(77)
    per_step, updates = ov_loops.scan(lambda: streams.uniform((1000,)), n_steps=5)
    outside = streams.uniform((7,))
    request = _request([per_step, outside], updates, config=config)
    for call in range(2):
        inside_values, outside_values = _call(request)
        for step in range(5):
            expected = _uniform_definition(77, 0, 5 * call + step, 1000)
            np.testing.assert_array_equal(inside_values[step], expected)
        np.testing.assert_array_equal(outside_values, _uniform_definition(77, 1, call, 7))


def test_uniform_moments_and_bounds():
    low, high, n, steps = -1.0, 3.0, 20000, 8
    streams = ov_loops.RandomStreams(5)
    draws, updates = ov_loops.scan(lambda: streams.uniform((n,), low, high), n_steps=steps)
    (values,) = _call(_request(draws, updates))
    assert values.shape == (steps, n) and values.min() >= low and values.max() < high
    width, count = high - low, values.size
    assert _within(values.mean(), (low + high) / 2, width / np.sqrt(12 * count))
    fourth_moment, variance = width**4 / 80, width**2 / 12
    spread = np.sqrt((fourth_moment - variance**2) / count)
    assert _within(values.var(), variance, spread)
    for step in values:  # every step, not only their pool
        assert _within(step.mean(), (low + high) / 2, width / np.sqrt(12 * n))


def test_normal_moments():
    avg, std, n, steps = 2.0, 0.5, 20000, 8
    streams = ov_loops.RandomStreams(6)
    draws, updates = ov_loops.scan(lambda: streams.normal((n,), avg, std), n_steps=steps)
    (values,) = _call(_request(draws, updates))
    count = values.size
    assert _within(values.mean(), avg, std / np.sqrt(count))
    assert _within(values.var(), std**2, std**2 * np.sqrt(2 / count))
    inside_one_std = np.mean(np.abs(values - avg) < std)
    expected = 0.682689492
    assert _within(inside_one_std, expected, np.sqrt(expected * (1 - expected) / count))


def test_binomial_with_per_element_probabilities():
    n, trials, steps = 20000, 3, 4
    p = ops.parameter([n], F32, name="p")
    streams = ov_loops.RandomStreams(7)
    draws, updates = ov_loops.scan(
        lambda p_t: streams.binomial((n,), trials, p_t), non_sequences=p, n_steps=steps
    )
    probabilities = np.random.default_rng(0).uniform(0.05, 0.95, n).astype(F32)
    (values,) = _call(_request(draws, updates, [p]), {"p": probabilities})
    assert values.dtype == np.int64 and set(np.unique(values)) <= set(range(trials + 1))
    deviation = (values - trials * probabilities).mean()
    variance = (trials * probabilities * (1 - probabilities)).sum() * steps
    assert _within(deviation, 0.0, np.sqrt(variance) / values.size)


def test_draws_differ_between_steps_calls_and_seeds_and_repeat_for_a_seed():
    n, steps = 20000, 3

    def sampler(seed: int) -> ov.InferRequest:
        streams = ov_loops.RandomStreams(seed)
        draws, updates = ov_loops.scan(lambda: streams.uniform((n,)), n_steps=steps)
        return _request(draws, updates)

    request = sampler(11)
    (first,), (second,) = _call(request), _call(request)
    bound = SIGMAS / np.sqrt(n)
    for step in range(steps - 1):
        assert abs(_correlation(first[step], first[step + 1])) < bound
    assert abs(_correlation(first, second)) < SIGMAS / np.sqrt(first.size)
    request.reset_state()
    np.testing.assert_array_equal(_call(request)[0], first)
    np.testing.assert_array_equal(_call(sampler(11))[0], first)
    assert abs(_correlation(_call(sampler(12))[0], first)) < SIGMAS / np.sqrt(first.size)


def test_a_draw_outside_scan_advances_once_per_call():
    streams = ov_loops.RandomStreams(3)
    request = _request(streams.normal((5000,)), None)
    (first,), (second,) = _call(request), _call(request)
    assert abs(_correlation(first, second)) < SIGMAS / np.sqrt(first.size)
    request.reset_state()
    np.testing.assert_array_equal(_call(request)[0], first)


@pytest.mark.parametrize("seeds", [(1, 2), (0, 0)], ids=["seeded", "unseeded"])
def test_openvino_random_uniform_inside_a_loop_repeats_on_every_call(seeds):
    """Measured on OpenVINO's CPU plugin: RandomUniform in a Loop body gives new values on each
    iteration, but the same iterations again on every inference call (and in a new request),
    also with seeds 0, 0 ("random"), while outside a Loop it advances per call. So it cannot give
    a Gibbs chain fresh draws per call; RandomStreams uses its own counter-based generator."""
    shape = ops.constant(np.array([1000], np.int64))
    zero, one = ops.constant(F32(0)), ops.constant(F32(1))
    inner = ops.random_uniform(shape, zero, one, "f32", *seeds)
    body = ov.Model([ops.result(ops.constant(True)), ops.result(ops.unsqueeze(inner, 0))], [])
    loop = ops.loop(ops.constant(np.int64(3)), ops.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    stacked = loop.get_concatenated_slices(body.get_results()[1].output(0), 0, 1, 1, -1, 0)
    outside = ops.random_uniform(shape, zero, one, "f32", *seeds)
    compiled = compile_f32(ov.Model([ops.result(stacked), ops.result(outside)], []))
    request = compiled.create_infer_request()
    (loop_1, outside_1), (loop_2, outside_2) = _call(request), _call(request)
    assert abs(_correlation(loop_1[0], loop_1[1])) < SIGMAS / np.sqrt(1000)
    np.testing.assert_array_equal(loop_1, loop_2)
    np.testing.assert_array_equal(_call(compiled.create_infer_request())[0], loop_1)
    assert abs(_correlation(outside_1, outside_2)) < SIGMAS / np.sqrt(1000)


def test_draws_in_an_inner_scan_continue_across_outer_steps_and_calls():
    """The inner scan's counter is carried by the outer scan: outer step t, inner step s of
    call c read counter 6c + 2t + s."""
    streams = ov_loops.RandomStreams(9)

    def outer_step():
        inner, _ = ov_loops.scan(lambda: streams.uniform((100,)), n_steps=2)
        return inner

    draws, updates = ov_loops.scan(outer_step, n_steps=3)
    request = _request(draws, updates)
    for call in range(2):
        (values,) = _call(request)
        assert values.shape == (3, 2, 100)
        for step, inner_step in np.ndindex(3, 2):
            expected = _uniform_definition(9, 0, 6 * call + 2 * step + inner_step, 100)
            np.testing.assert_array_equal(values[step, inner_step], expected)
