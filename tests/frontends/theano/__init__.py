"""Tests of ov_loops/frontends/theano."""
