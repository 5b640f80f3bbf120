"""The pass protocol: a named transformation of one LoopIR.

    after = pass_(before)  ==  requires(before); after = run(before); ensures(before, after)

`requires` states what the pass needs (by default a LoopIR whose invariants hold), `ensures`
what it promises (by default the invariants again, `LoopIR.check`). The default ones are a
debug switch (`CHECKS`: on in the tests, tests/conftest.py, and with OV_LOOPS_CHECKS=1; off
they cost about 3% of a conversion of many small loops): the lowering checks each loop once
(lower/loop5.py). When on, they are asked once per LoopIR in a pipeline: a pass returning its
loop unchanged promises what it required, and the next pass requires what the one before
ensured (`checked`); the pipeline checks its result once more at the end (a body whose ports a
pass changed in place without a new LoopIR).
A pass must not change what the loop computes: its tests run the loop through the IR
reference before and after it.

A pass that fails names itself: an exception escaping its `run` or `ensures` that is not one
of ours (a fault of the pass, or of OpenVINO under it) becomes a ConversionError naming the
loop and the pass, in one line; a broken invariant after it (SpecError) names the pass too.
The errors a pass raises on purpose (its refusals) pass unchanged.
"""

from __future__ import annotations

import importlib
import os
from typing import ClassVar

from ov_loops.contract.spec import SpecError
from ov_loops.errors import ConversionError, OvLoopsError, message_line
from ov_loops.loopir.loop import LoopIR

# Whether passes check the default `requires` / `ensures` (the invariants): tests turn it on.
CHECKS = os.environ.get("OV_LOOPS_CHECKS") == "1"


class LoopPass:
    """Base of the LoopIR passes. Subclasses set `name` and implement `run`. `level` is the
    optimisation level from which an optimisation runs ("default" or "max"); None marks a
    target workaround, which the target's profile switches on."""

    name: ClassVar[str] = ""
    level: ClassVar[str | None] = None

    def requires(self, loop: LoopIR) -> None:
        """Raise unless `loop` is a valid input of this pass."""
        loop.check()

    def run(self, loop: LoopIR) -> LoopIR:
        """The transformed loop (may rewrite `loop.body` in place)."""
        raise NotImplementedError

    def ensures(self, before: LoopIR, after: LoopIR) -> None:
        """Raise unless `after` keeps this pass's promises."""
        after.check()

    def __call__(self, loop: LoopIR, *, checked: bool = False) -> LoopIR:
        """`run` between `requires` and `ensures`. Of the default ones (the invariants) only
        what is new is asked: not `requires` of a loop already `checked` (a pipeline's loop, which
        the pass before ensured), not `ensures` of the loop itself returned unchanged; none
        of the default ones unless `CHECKS`."""
        own_requires = type(self).requires is not LoopPass.requires
        if own_requires or (CHECKS and not checked):
            self.requires(loop)
        try:
            after = self.run(loop)
            own_ensures = type(self).ensures is not LoopPass.ensures
            if own_ensures or (CHECKS and after is not loop):
                self.ensures(loop, after)
        except SpecError as exc:
            raise SpecError(f"after pass {self.name}: {exc}") from exc
        except OvLoopsError:
            raise
        except Exception as exc:
            raise ConversionError(
                f"{loop.path}: pass {self.name} failed: {message_line(exc)}"
            ) from exc
        return after


class DeferredPass:
    """A pass of the pipeline named by its module and class, imported when first made: the
    optimisations of level max and the workarounds of targets that unroll, which a default CPU
    conversion never runs, so that it does not import them (tests/test_startup.py). It reads as
    the class in the pipeline: `name` and `level` (stated here, checked against the class by
    tests/loopir/passes/test_passes.py), and calling it makes the pass."""

    __slots__ = ("module", "class_name", "name", "level")

    def __init__(self, module: str, class_name: str, name: str, level: str | None) -> None:
        self.module = module
        self.class_name = class_name
        self.name = name
        self.level = level

    def kind(self) -> type[LoopPass]:
        """The pass's class (its module imported)."""
        return getattr(importlib.import_module(self.module), self.class_name)

    def __call__(self, *args: object, **kwargs: object) -> LoopPass:
        return self.kind()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"DeferredPass({self.module}.{self.class_name})"
