"""The Theano-style frontend: `scan` and its kin build a LoopIR from a Python `fn` (scan.py),
with shared variables on OpenVINO Variables (shared_variables.py) and random streams on a
shared counter (random_streams.py).

scan.py (the public functions, the order of the steps, the one lowering call) <- arguments.py
(what scan's arguments say) <- body.py (Parameters, the call to fn, the Results) <- captures.py
(outer values fn reads), updates.py (implicit updates, shared carries) <- loop_ir.py (the
LoopIR).
"""
