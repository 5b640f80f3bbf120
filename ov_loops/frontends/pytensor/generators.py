"""Random generators as keys: a PyTensor random generator (a numpy Generator, the value of an
rng variable) is an i32 key in the model (random.py draws from it).

    key_of(g)       = copy(g).integers(2**31)   (g itself is left as it is)
    generator_of(k) = numpy.random.default_rng(k)
"""

from __future__ import annotations

import copy

import numpy as np
from pytensor.tensor.random.type import RandomType


def is_random_type(variable) -> bool:
    """Whether a PyTensor variable holds a random generator (a key in the model)."""
    return isinstance(variable.type, RandomType)


def key_of(generator: np.random.Generator) -> np.ndarray:
    """The i32 key of a numpy Generator (drawn from a copy: the Generator is unchanged)."""
    return np.array(copy.deepcopy(generator).integers(2**31), np.int32)


def generator_of(key) -> np.random.Generator:
    """The numpy Generator of an i32 key."""
    return np.random.default_rng(int(np.asarray(key)) & 0xFFFFFFFF)
