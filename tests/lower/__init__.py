"""Tests of ov_loops/lower."""
