"""Tests of ov_loops/loopir."""
