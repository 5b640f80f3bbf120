"""The Theano-style frontend: `scan` and its kin build a LoopIR from a Python `fn`, with shared
variables on OpenVINO Variables (shared_variables.py) and random streams on a shared counter
(random_streams.py).

scan.py holds the public functions, the order of the steps and the one lowering call; the steps
are arguments.py (what scan's arguments say), body.py (Parameters, the call to fn, Results),
updates.py (implicit updates, shared carries), captures.py (outer values fn reads) and
loop_ir.py (trip count, LoopIR).
"""
