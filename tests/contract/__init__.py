"""Tests of ov_loops/contract."""
