"""One op per value: the trip counts, guards and post-loop steps of every loop build their own
small constants (0, -1, [0, -1], an axis, ...; 9 of a one-loop model's 22 main-graph ops at
`default`), and loops whose trip counts come from one value each map it again (the same seven
ops per loop). The IR keeps one of each per graph, as the MOC pass of `openvino.convert_model`
(its SharedOpOptimization) does:

    for graph in model and every body in it that holds a Loop, TensorIterator or If,
    in topological order (a pure op is keyed once a second op reads its sources):
        c = a Constant of at most SMALL bytes, unnamed, without runtime info but the
            weightless cache's record, that no Result, Loop or If reads
          -> its readers read the first such Constant of c's type, shape and bytes
        n = an unnamed op of PURE reading no value twice, that no Result reads
          -> its readers read the first such op of n's type, attributes and sources

A body without loops or Ifs holds no post-loop ops and is left alone (at seq1000 that is 1,000
bodies); the graphs come from the driver's one walk of the model (`ovgraph.walk`). A value a
Result reads stays its own: the CPU plugin lets a body Result alias its source (a back edge
from a Constant returns a stale value on a run of no iteration, zero_run_guards.py); a Constant
feeding a Loop and another op crashes the plugin (tests/test_plugin_crashes.py). An op reading
one value twice may be a computed copy the CPU plugin needs (`ovgraph.copy`: Maximum(x, x),
LogicalOr(x, x)), and a Convert to its input's type a node of its own for a name
(`ovgraph.passthrough`): neither is merged.
"""

from __future__ import annotations

import openvino as ov

from ov_loops.ovgraph import Walk, attributes_key, computed_copy, walk

SMALL = 64  # bytes: what the steps and guards make; weights are left alone
PURE = frozenset(
    {
        "Convert", "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
        "Select", "LogicalNot", "LogicalAnd", "LogicalOr", "Minimum", "ShapeOf", "Gather",
    }
)  # fmt: skip
_CACHE_RECORD = "WeightlessCacheAttribute_0"
# A Constant feeding a Loop and another op crashes the CPU plugin (tests/test_plugin_crashes.py
# item 1): a Constant a Loop, TensorIterator or If reads stays its own.
_CONSTANT_KEPT_APART_FROM = frozenset({"Result", "Loop", "TensorIterator", "If"})
_SUB_BYTE_OR_STRING = frozenset({"u1", "u2", "u3", "u4", "u6", "i4", "nf4", "f4e2m1", "string"})


def share_ops(model: ov.Model, walked: Walk | None = None) -> int:
    """Make the readers of equal small Constants and of equal pure ops of `model` (and of each
    body in it that holds a body of its own, per graph) read one of them; the number of ops no
    longer read. `walked`: `model` walked already (`ovgraph.walk`), for its graphs' ops."""
    return sum(_share_in(ops) for ops in (walked or walk(model)).holders)


def _share_in(ops: list[ov.Node]) -> int:
    first: dict[tuple, ov.Node] = {}
    # A pure op is keyed only once a second one reads the same sources: until then it is kept
    # here unkeyed (most read a value of their own; a key costs ~30 us of OpenVINO's Python API)
    alone: dict[tuple, ov.Node | None] = {}
    dropped = 0
    for node in ops:
        kind = node.get_type_name()
        if kind == "Constant":
            key = _constant_key(node) if node.get_byte_size() <= SMALL else None
        elif kind in PURE:
            sources = tuple(
                (value.get_node().get_instance_id(), value.get_index())
                for value in node.input_values()
            )
            earlier = alone.setdefault((kind, sources), node)
            if earlier is node:
                continue
            if earlier is not None:  # its key, as it would have been keyed when first met
                alone[kind, sources] = None
                earlier_key = _op_key(earlier, kind, sources)
                if earlier_key is not None:
                    first.setdefault(earlier_key, earlier)
            key = _op_key(node, kind, sources)
        else:
            continue
        if key is None:
            continue
        kept = first.setdefault(key, node)
        if kept is not node:
            for output, replacement in zip(node.outputs(), kept.outputs()):
                output.replace(replacement)
            dropped += 1
    return dropped


def _constant_key(node: ov.Node) -> tuple | None:
    """(type, shape, bytes) of a Constant that may be shared, else None."""
    kind = node.get_output_element_type(0).get_type_name()
    if kind in _SUB_BYTE_OR_STRING or _has_runtime_info(node):
        return None
    if not _shareable(node, _CONSTANT_KEPT_APART_FROM):
        return None
    data = node.get_data()  # its shape: iterating an ov.Shape costs 28 us
    return "Constant", kind, data.shape, data.tobytes()


def _op_key(node: ov.Node, kind: str, sources: tuple) -> tuple | None:
    """(type, version, sources, attributes) of a pure op that may be shared, else None."""
    if computed_copy(node, sources) or not _shareable(node):
        return None
    return kind, node.get_type_info().version_id, sources, attributes_key(node)


def _shareable(node: ov.Node, readers_kept_apart: frozenset = frozenset({"Result"})) -> bool:
    """Whether no output of `node` has a name or a reader of a type in `readers_kept_apart`."""
    for output in node.outputs():
        if output.get_names():
            return False
        for reader in output.get_target_inputs():
            if reader.get_node().get_type_name() in readers_kept_apart:
                return False
    return True


def _has_runtime_info(node: ov.Node) -> bool:
    """Whether `node` has runtime info besides the weightless cache's record of where a
    constant's bytes came from (the frontend gives every Constant one; equal bytes may share)."""
    info = node.get_rt_info()  # iterating its keys costs 40 us: ask its size and one key
    return len(info) > 1 or (len(info) == 1 and _CACHE_RECORD not in info)
