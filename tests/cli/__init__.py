"""Tests of ov_loops/cli."""
