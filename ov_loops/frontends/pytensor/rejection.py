"""Random draws repeated until accepted, the rejection loop a Loop-5 that draws again only
for the elements still waiting (gammas.py and poisson.py's samplers use it):

    repeat_until(stream, done, state, params, step, bound):   # all of the draw's shape
        finished, new = step(draw of the full shape on stream 0, state, params)    # try 0
        state = where(done, state, new);  done |= finished
        i = 1
        do:                                        # once at least (below)
            left = flat indices of the elements not done (NonZero)
            tries = the draw of shape [len(left)] on the stream mix(stream ^ mix(i + 1))
            finished, new = step(tries, state[left], params[left])
            done[left] = finished;  state[left] = new;  i += 1
        while any(not done) and i < bound
        return state

Try 0 draws for every element (picking the few left would cost more than drawing for all),
the later tries for those left: the i-th try of an element draws from the i-th stream at its
place among those still waiting, a function of the key alone, like every draw. The bound makes
the loop finite whatever the parameters; an element not done after `bound` tries keeps its
state (each sampler states the probability). The Loop runs once whatever `done` is: a Loop
whose initial condition folds to false gets wrong output shapes from OpenVINO (shared notes
on Loop-5); that iteration then draws for no element.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.frontends.pytensor.dispatch import i64
from ov_loops.frontends.pytensor.draws import Draw, substream

Body = Callable[[ov.Output, list, list], tuple[ov.Output, list]]
Step = Callable[[Draw, list, list], tuple[ov.Output, list]]


def where(condition, then, otherwise) -> ov.Output:
    """select(condition, then, otherwise) as an output."""
    return ops.select(condition, then, otherwise).output(0)


def _body_parameter(value: ov.Output) -> ov.Node:
    rank = value.get_partial_shape().rank
    shape = ov.PartialShape.dynamic(rank) if rank.is_static else ov.PartialShape.dynamic()
    return ops.parameter(shape, value.get_element_type())


def while_loop(carried: list, fixed: list, body: Body, bound: int) -> list[ov.Output]:
    """A Loop-5 running body(i, carried, fixed) -> (go on, carried) once, then while it says
    go on, at most `bound` times (i: the iteration, i64; `fixed`: invariant inputs); returns
    the last carried values."""
    iteration = ops.parameter(ov.PartialShape([]), ov.Type.i64)
    merged = [_body_parameter(value) for value in carried]
    invariant = [_body_parameter(value) for value in fixed]
    go_on, after = body(
        iteration.output(0), [p.output(0) for p in merged], [p.output(0) for p in invariant]
    )
    results = [ops.result(value) for value in (go_on, *after)]
    loop = ops.loop(ops.constant(np.int64(bound)).output(0), ops.constant(True).output(0))
    loop.set_function(ov.Model(results, [iteration, *merged, *invariant], "loop_body"))
    loop.set_special_body_ports([0, 0])
    for parameter, value, result in zip(merged, carried, results[1:]):
        loop.set_merged_input(parameter, value, result.output(0))
    for parameter, value in zip(invariant, fixed):
        loop.set_invariant_input(parameter, value)
    return [loop.get_iter_value(result.output(0), -1) for result in results[1:]]


def _first_try(stream, done, state, params, step: Step) -> list[ov.Output]:
    """Try 0, for every element (flat), without picking those left: [done, *state]."""
    shape = ops.shape_of(done, ov.Type.i64).output(0)
    tries = Draw(substream(stream, 0), shape, state[0].get_element_type(), [])
    finished, new = step(tries, state, params)
    kept = [where(done, old, value) for old, value in zip(state, new)]
    return [ops.logical_or(done, finished).output(0), *kept]


def _try_again(step: Step):
    """The loop's body: try i + 1 of the elements left."""

    def body(i, carried, fixed):
        done, *state = carried
        stream, *params = fixed
        left = ops.reshape(ops.non_zero(ops.logical_not(done), ov.Type.i64), i64(-1), False)
        salt = ops.convert(ops.add(i, ops.constant(np.int64(1))), ov.Type.i32).output(0)
        shape = ops.shape_of(left, ov.Type.i64).output(0)
        tries = Draw(substream(stream, salt), shape, state[0].get_element_type(), [])
        finished, new = step(
            tries,
            [ops.gather(value, left, i64(0)).output(0) for value in state],
            [ops.gather(value, left, i64(0)).output(0) for value in params],
        )
        carried = [  # ScatterElementsUpdate: 3 times ScatterNDUpdate's speed on the CPU
            ops.scatter_elements_update(value, left, update, i64(0)).output(0)
            for value, update in zip(carried, (finished, *new))
        ]
        waiting = ops.logical_not(carried[0])
        return ops.reduce_logical_or(waiting, i64(0), False).output(0), carried

    return body


def repeat_until(
    stream: ov.Output, done: ov.Output, state: list, params: list, step: Step, bound: int
) -> list[ov.Output]:
    """The loop of the module docstring; `done`, `state` and `params` of the draw's shape."""

    def flat(value: ov.Output) -> ov.Output:
        return ops.reshape(value, i64(-1), False).output(0)

    shape = ops.shape_of(done, ov.Type.i64)
    params = [flat(p) for p in params]
    carried = _first_try(stream, flat(done), [flat(v) for v in state], params, step)
    final = while_loop(carried, [stream, *params], _try_again(step), bound - 1)
    return [ops.reshape(value, shape, False).output(0) for value in final[1:]]
