"""Tests of ov_loops/ir."""
