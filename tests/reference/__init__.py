"""Tests of ov_loops/reference."""
