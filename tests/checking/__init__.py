"""Tests of ov_loops/checking."""
