"""Tests of ov_loops/conversion."""
