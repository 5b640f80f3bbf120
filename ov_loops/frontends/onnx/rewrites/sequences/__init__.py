"""Sequence- and Optional-typed values become tensors (sequences.py); lists a loop only appends
to become scan outputs (sequence_appends.py)."""
