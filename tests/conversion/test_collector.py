"""While a model converts, the objects that existed before are kept out of garbage collections
(conversion/collector.py), and the collector is as it was afterwards."""

from __future__ import annotations

import gc

from ov_loops.conversion.collector import existing_objects_frozen


def test_objects_are_frozen_while_converting_and_thawed_after():
    assert gc.get_freeze_count() == 0
    before: list = []  # a container: tracked by the collector
    assert any(each is before for each in gc.get_objects())
    with existing_objects_frozen():
        assert gc.get_freeze_count() > 0
        assert not any(each is before for each in gc.get_objects())  # frozen: not tracked
    assert gc.get_freeze_count() == 0


def test_a_freeze_of_the_caller_is_left_alone():
    """Neither frozen again nor thawed (frozen objects that die leave the count: it may only
    fall, never rise or drop to 0)."""
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        made_after = [[] for _ in range(100)]  # tracked: a second freeze would count them
        with existing_objects_frozen():
            assert 0 < gc.get_freeze_count() <= frozen
        assert 0 < gc.get_freeze_count() <= frozen
        assert any(each is made_after[0] for each in gc.get_objects())
    finally:
        gc.unfreeze()
