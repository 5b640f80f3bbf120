"""Pass (level max): k iterations of the body per Loop-5 iteration, masked past the end; the
choice of k here, the unrolled body in loopir/unrolling.py."""

from __future__ import annotations

import math

import openvino as ov

from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.loopir.unrolling import STRUCTURAL, Plan, UnrolledBody, shapes_kept, unrollable

MAX_FACTOR = 16
TARGET_BODY_OPS = 256  # operations per Loop-5 iteration worth aiming for
# A masked factor is at most sqrt(MASKED_WORK / the body's MatMul multiply-adds); see
# `masked_limit`.
MASKED_WORK = 2**25
# The ops the unrolling of all loops of a model may add, shared evenly by its loops: a loop's
# k copies must fit its share (see `budget_limit`). 16 loops at TARGET_BODY_OPS each: models of
# a few loops are unrolled as before, while 1,000 small loops, each unrolled x16, had made an
# IR of 9x the ops, 6x the memory and 3.8x the time of conversion at level default.
OP_BUDGET = 16 * TARGET_BODY_OPS
# The ops an unrolled loop adds whatever k (the masks' counters, padding of sliced inputs, the
# cut of stacked outputs after the Loop; 27 measured on a loop of a counter and a scan output).
FIXED_OPS = 30
BUDGET = "op budget"  # why the budget left a loop whole, or cut its factor


class UnrollIterations(LoopPass):
    """Run k copies of the body, chained, in each Loop-5 iteration (k from the body's size,
    at most MAX_FACTOR, a divisor of a constant trip count when one is near)::

        for i in range(ceil(n / k)):                # n: the trip count (-1: unbounded)
            active = True
            for j in range(k):                      # copy j sees current_iteration i*k + j
                active = active and i*k + j < n and (j == 0 or cond of copy j-1)
                carried, last values = body(...) if active else unchanged   # Select
                part j of each stacked output = its per-iteration value
            condition = active and cond of copy k-1
        stacked outputs: parts past the last active copy cut off after the Loop (`Unchunk`);
        sliced inputs: padded to a multiple of k and read k parts at a time

    Masking (the Selects and the count of active copies) is left out when neither the trip
    count nor a condition can stop the loop inside a chunk (a constant trip count that k
    divides, a constant true condition).

    Loops left unchanged: a constant trip count below 2; a body with a nested Loop, If or
    TensorIterator, or a single copy as large as the target; a stacked part of rank
    MAX_PORT_RANK or more (a chunk of parts has one axis more); a body Result both stacked and
    read as a last value or back edge; a sliced input of dynamic rank or other than forward
    (start 0, end -1) or backward (start -1, end 0) by one; and, when masked, a body with a
    value of dynamic shape or a carried value whose shape changes (`shapes_kept`).
    """

    name = "unroll-iterations"
    level = "max"

    def __init__(self, factor: int | None = None, loops: int = 1) -> None:
        self.factor = factor
        self.loops = loops  # the loops of the model, sharing OP_BUDGET

    def run(self, loop: LoopIR) -> LoopIR:
        if not unrollable(loop):  # first: a body with a nested loop is common and never unrolled
            return loop
        size = body_size(loop.body)  # counted once for both factors
        factor = self.factor or chosen_factor(loop, self.loops, size)
        wanted = self.factor or (chosen_factor(loop, 1, size) if self.loops > 1 else factor)
        if wanted is None or wanted < 2:
            return loop
        if factor is None:
            return loop.replace(not_unrolled=BUDGET)
        plan = Plan.of(loop, factor)
        if plan.masked and not shapes_kept(loop):
            return loop
        note = f"unrolled x{factor}" + (f" ({BUDGET})" if factor != wanted else "")
        unrolled = UnrolledBody(loop, plan).loop().noting(note)
        return unrolled if plan.masking is None else unrolled.noting(plan.masking)


def body_size(body: ov.Model) -> int:
    """The body's operations, not counting Parameters, Results and Constants."""
    return sum(1 for op in body.get_ordered_ops() if op.get_type_name() not in STRUCTURAL)


def chosen_factor(loop: LoopIR, loops: int = 1, size: int | None = None) -> int | None:
    """k: TARGET_BODY_OPS over the body's size, at most MAX_FACTOR, the trip count and what
    the loop's share of OP_BUDGET allows (`loops`: the model's loops); with a constant trip
    count its largest divisor between k/2 and k instead, if there is one; when the copies
    need masking, at most `masked_limit` of the body. A runtime trip count known to be a
    multiple of some k (the first loop of a split loop, lower/remainder.py) gets that k; one
    known to be at most some bound (its second loop) at most that bound. `size`: the body's
    `body_size` when the caller has it."""
    if loop.trip.multiple_of > 1:
        return loop.trip.multiple_of
    size = body_size(loop.body) if size is None else size
    factor = min(MAX_FACTOR, TARGET_BODY_OPS // max(1, size))
    if loops > 1:
        factor = min(factor, budget_limit(loop, loops, size))
    if loop.trip.most is not None:
        factor = min(factor, loop.trip.most)
    count = loop.trip.constant
    if count is not None:
        factor = min(factor, count)
        lowest = max(2, (factor + 1) // 2)
        divisors = [d for d in range(factor, lowest - 1, -1) if count % d == 0]
        factor = divisors[0] if divisors else factor
    if factor >= 2 and Plan.of(loop, factor).masked:
        factor = min(factor, masked_limit(loop.body))
    return factor if factor >= 2 else None


def budget_limit(loop: LoopIR, loops: int, size: int | None = None) -> int:
    """The largest k whose copies fit `loop`'s share of OP_BUDGET among `loops` loops:

        FIXED_OPS + k * (ops of the body + one per body Result + 2) <= OP_BUDGET / loops

    a copy's ops: the body's, its Results' masks (Select) or stacked parts, and the running
    "still going" flag (measured: 7 a copy for a body of 2 ops and 3 Results). The IR at
    max then has at most about OP_BUDGET ops more than at default, whatever the model.
    `size`: the body's `body_size` when the caller has it.
    """
    size = body_size(loop.body) if size is None else size
    per_copy = size + loop.body.get_output_size() + 2
    return (OP_BUDGET // loops - FIXED_OPS) // per_copy


def masked_limit(body: ov.Model) -> int:
    """The largest factor worth masking for `body`: sqrt(MASKED_WORK / w), w the multiply-adds
    of its MatMuls (of static shapes), at least 2; MAX_FACTOR without MatMuls.

    A masked loop runs (k - 1) / 2 copies past its end on average, each a whole body's work,
    while unrolling saves (1 - 1/k) of Loop-5's overhead per iteration: the best k falls as the
    square root of the body's work. Measured (benchmarks/sequence_loops.py's RNN, a runtime
    trip count of 100, CPU f32, one thread, medians of 15 per-round ratios to onnxruntime on CPU
    time): [16, 256] x [256, 256] twice (2M multiply-adds; limit 4): x16 1.32, x8 1.19, x4 1.16,
    x2 1.21, no unrolling 1.18; [16, 64] x [64, 64] twice (131K; limit 16): x16 1.00, x8 0.92,
    x4 0.95; one row (8K): x16 0.47, x8 0.47, x4 0.52, x2 0.67.
    """
    matmuls = [op for op in body.get_ordered_ops() if op.get_type_name() == "MatMul"]
    work = sum(_multiply_adds(op) for op in matmuls)
    return MAX_FACTOR if work == 0 else max(2, math.isqrt(MASKED_WORK // work))


def _multiply_adds(matmul: ov.Node) -> int:
    """Output elements times the contracted dim of a MatMul of static shapes (else 0)."""
    left, output = matmul.get_input_partial_shape(0), matmul.get_output_partial_shape(0)
    if left.is_dynamic or output.is_dynamic:
        return 0
    dims = left.to_shape()
    transposed = matmul.get_attributes()["transpose_a"] and len(dims) > 1
    return math.prod(output.to_shape()) * dims[-2 if transposed else -1]
