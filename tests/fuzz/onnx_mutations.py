"""Structure-aware mutations of ONNX models with Loop and Scan nodes.

Each mutation edits a ModelProto in place and returns what it did, or raises `NotApplicable`.
`keeps_valid` marks the mutations after which onnxruntime should still run the model (node
order, odd but legal names, external data beside the model): a refusal of those is worth a look.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper

from ov_loops.frontends.onnx.ops.placeholders import PLACEHOLDER_DOMAIN
from tests.registry import Registry

BAD_UTF8_MARKER = "@@BAD-UTF8@@"  # replaced by invalid UTF-8 bytes after serialisation
ODD_NAMES = [" ", "a b", "名前", "x" * 3000, "/..", "a:0", "%", "\t", "0", "-", "a\nb", "..\\x"]
ODD_ELEMENT_TYPES = [
    TensorProto.STRING,
    TensorProto.BFLOAT16,
    TensorProto.FLOAT4E2M1,
    TensorProto.FLOAT8E4M3FN,
    TensorProto.FLOAT8E5M2,
    TensorProto.INT4,
    TensorProto.UINT4,
    TensorProto.COMPLEX64,
    TensorProto.FLOAT16,
    TensorProto.DOUBLE,
    TensorProto.INT32,
    TensorProto.BOOL,
    TensorProto.UNDEFINED,
    99,
]
BAD_INTS = [-1, -3, 0, 2, 5, 2**31, 2**40, -(2**63), 2**63 - 1]
UNSUPPORTED_OPS = [
    ("FuzzOp", "com.fuzz"),
    ("SequenceLength", ""),
    ("TfIdfVectorizer", ""),
    ("RegexFullMatch", ""),
    ("StringNormalizer", ""),
    ("ImageDecoder", ""),
    ("Optional", ""),
]


class NotApplicable(Exception):
    """The mutation has nothing to act on in this model."""


@dataclass
class Mutant:
    """A mutated model, the files to put beside it, and how it was made."""

    model: onnx.ModelProto
    steps: list[str] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    keeps_valid: bool = True
    feeds: dict = field(default_factory=dict)
    must_refuse: bool = False  # invalid by the spec itself: converting it is a defect


Mutation = Callable[[Mutant, random.Random], str]
MUTATIONS: Registry[tuple[Mutation, bool]] = Registry("ONNX mutation")  # (mutation, keeps_valid)


def mutation(keeps_valid: bool) -> Callable[[Mutation], Mutation]:
    """A decorator that registers its mutation in MUTATIONS under the mutation's name;
    `keeps_valid`: onnxruntime should still run the mutated model."""

    def register(function: Mutation) -> Mutation:
        MUTATIONS[function.__name__] = (function, keeps_valid)
        return function

    return register


# -- walking a model -----------------------------------------------------------------------------
def graphs(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    """`graph` and every subgraph inside it, outermost first."""
    yield graph
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                yield from graphs(attribute.g)
            for sub in attribute.graphs:
                yield from graphs(sub)


def loop_nodes(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    return [n for g in graphs(model.graph) for n in g.node if n.op_type in ("Loop", "Scan")]


def bodies(model: onnx.ModelProto) -> list[onnx.GraphProto]:
    return list(graphs(model.graph))[1:]


def _pick(rng: random.Random, items: list):
    if not items:
        raise NotApplicable
    return rng.choice(items)


def _body(node: onnx.NodeProto) -> onnx.GraphProto:
    return next(a.g for a in node.attribute if a.name == "body")


def _values(graph: onnx.GraphProto) -> list[str]:
    names = [v.name for v in graph.input] + [i.name for i in graph.initializer]
    return names + [o for n in graph.node for o in n.output if o]


# -- Loop / Scan inputs and outputs --------------------------------------------------------------
@mutation(keeps_valid=False)
def loop_inputs(mutant: Mutant, rng: random.Random) -> str:
    node = _pick(rng, loop_nodes(mutant.model))
    inputs = list(node.input)
    action = rng.choice(["drop", "empty", "swap", "add", "drop_outputs", "add_output"])
    if action in ("drop", "empty", "swap") and not inputs:
        raise NotApplicable
    index = rng.randrange(max(len(inputs), 1))
    if action == "drop":
        del inputs[index]
    elif action == "empty":
        inputs[index] = ""
    elif action == "swap":
        other = rng.randrange(len(inputs))
        inputs[index], inputs[other] = inputs[other], inputs[index]
    elif action == "add":
        inputs.append(rng.choice([*_values(mutant.model.graph), "dangling_input"]))
    else:
        outputs = list(node.output)
        outputs = outputs[:-1] if action == "drop_outputs" else [*outputs, "extra_output"]
        del node.output[:]
        node.output.extend(outputs)
        return f"{node.op_type} {action}: outputs {outputs}"
    del node.input[:]
    node.input.extend(inputs)
    return f"{node.op_type} input {action} at {index}: inputs {inputs}"


@mutation(keeps_valid=False)
def loop_attributes(mutant: Mutant, rng: random.Random) -> str:
    node = _pick(rng, loop_nodes(mutant.model))
    names = [
        "num_scan_inputs",
        "scan_input_axes",
        "scan_output_axes",
        "scan_input_directions",
        "scan_output_directions",
        "directions",
        "body",
    ]
    name = rng.choice(names)
    kept = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend(kept)
    if name == "body":
        if rng.random() < 0.5:
            node.attribute.append(helper.make_attribute("body", 3))
        return f"{node.op_type} attribute body replaced or removed"
    if name == "num_scan_inputs":
        value = rng.choice(BAD_INTS)
    else:
        value = [rng.choice(BAD_INTS) for _ in range(rng.randrange(0, 4))]
    if rng.random() < 0.1:
        value = rng.choice([1.5, "x", [1.0, 2.0]])
    kind = onnx.AttributeProto.INTS if value == [] else None
    node.attribute.append(helper.make_attribute(name, value, attr_type=kind))
    return f"{node.op_type} attribute {name}={value!r}"


# -- bodies --------------------------------------------------------------------------------------
@mutation(keeps_valid=False)
def body_interface(mutant: Mutant, rng: random.Random) -> str:
    body = _body(_pick(rng, loop_nodes(mutant.model)))
    side = rng.choice(["input", "output"])
    values = body.input if side == "input" else body.output
    if not values:
        raise NotApplicable
    index = rng.randrange(len(values))
    if rng.random() < 0.5:
        del values[index]
        return f"body {side} {index} dropped"
    copy = onnx.ValueInfoProto()
    copy.CopyFrom(values[index])
    values.insert(rng.randrange(len(values) + 1), copy)
    return f"body {side} '{copy.name}' duplicated"


@mutation(keeps_valid=False)
def loop_port_types(mutant: Mutant, rng: random.Random) -> str:
    """A Loop body's iteration number and condition ill-typed, as the spec forbids: the two
    inputs swapped, the condition (in or out) float, the iteration number int32."""
    body = _body(_pick(rng, [n for n in loop_nodes(mutant.model) if n.op_type == "Loop"]))
    if len(body.input) < 2 or not body.output:
        raise NotApplicable
    action = rng.choice(["swap", "float_cond_in", "float_cond_out", "int32_iteration"])
    if action == "swap":
        first, second = onnx.ValueInfoProto(), onnx.ValueInfoProto()
        first.CopyFrom(body.input[1])
        second.CopyFrom(body.input[0])
        body.input[0].CopyFrom(first)
        body.input[1].CopyFrom(second)
    else:
        value = {"float_cond_in": body.input[1], "float_cond_out": body.output[0]}.get(
            action, body.input[0]
        )
        to = TensorProto.INT32 if action == "int32_iteration" else TensorProto.FLOAT
        value.type.tensor_type.elem_type = to
    mutant.must_refuse = True
    return f"Loop body ports: {action}"


@mutation(keeps_valid=False)
def value_type(mutant: Mutant, rng: random.Random) -> str:
    where = rng.choice(["body", "body", "main", "unused main"])
    graph = mutant.model.graph if "main" in where else _pick(rng, bodies(mutant.model))
    if where == "unused main":
        graph.input.append(helper.make_tensor_value_info("unused", TensorProto.FLOAT, [2]))
    value = graph.input[-1] if where == "unused main" else _pick(rng, [*graph.input, *graph.output])
    tensor = value.type.tensor_type
    action = rng.choice(["elem_type", "elem_type", "shape", "no_type"])
    if action == "elem_type":
        tensor.elem_type = rng.choice(ODD_ELEMENT_TYPES)
        return f"{where} value '{value.name[:20]}' elem_type {tensor.elem_type}"
    if action == "no_type":
        value.ClearField("type")
        return f"{where} value '{value.name[:20]}' type removed"
    dims = [rng.choice([0, 1, 2, 3, -1, 2**40, "N"]) for _ in range(rng.randrange(0, 5))]
    value.CopyFrom(helper.make_tensor_value_info(value.name, tensor.elem_type or 1, dims))
    return f"{where} value '{value.name[:20]}' shape {dims}"


@mutation(keeps_valid=False)
def body_nodes(mutant: Mutant, rng: random.Random) -> str:
    body = _pick(rng, bodies(mutant.model))
    action = rng.choice(["remove", "dangling", "unsupported"])
    if action == "unsupported":
        op, domain = rng.choice(UNSUPPORTED_OPS)
        source = _pick(rng, _values(body))
        made = helper.make_node(op, [source], [f"fuzz_{op}"], domain=domain)
        body.node.insert(rng.randrange(len(body.node) + 1), made)
        if domain and rng.random() < 0.5:
            mutant.model.opset_import.append(helper.make_opsetid(domain, 1))
        if body.output and rng.random() < 0.5:
            body.output[-1].name = made.output[0]
        return f"body gets {domain or 'ai.onnx'}.{op} reading '{source[:20]}'"
    node = _pick(rng, list(body.node))
    if action == "remove":
        body.node.remove(node)
        return f"body node {node.op_type} removed"
    if not node.input:
        raise NotApplicable
    index = rng.randrange(len(node.input))
    node.input[index] = "dangling_value"
    return f"body node {node.op_type} input {index} renamed to a dangling value"


@mutation(keeps_valid=False)
def nest_loop_in_itself(mutant: Mutant, rng: random.Random) -> str:
    node = _pick(rng, loop_nodes(mutant.model))
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    del copy.output[:]
    copy.output.extend(f"{name}_nested" if name else "" for name in node.output)
    copy.name = f"{node.name}_nested"
    inner = list(graphs(_body(copy)))
    for name in {n for g in inner for n in _values(g)}:  # names stay unique across scopes
        for graph in inner:
            _rename(graph, name, f"{name}_nested")
    body = _body(node)
    body.node.insert(rng.randrange(len(body.node) + 1), copy)
    return f"{node.op_type} nested in its own body"


# -- model-wide ----------------------------------------------------------------------------------
@mutation(keeps_valid=False)
def opsets(mutant: Mutant, rng: random.Random) -> str:
    model = mutant.model
    action = rng.choice(["version", "version", "duplicate", "remove", "ir_version"])
    default = next((o for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if action == "version" and default is not None:
        default.version = rng.choice([1, 7, 8, 9, 11, 13, 16, 19, 21, 23, 24, 25, 99, 0, -1])
        return f"default opset {default.version}"
    if action == "duplicate":
        model.opset_import.append(helper.make_opsetid("", rng.choice([9, 16, 23])))
        return "default opset imported twice"
    if action == "remove":
        del model.opset_import[:]
        return "opset imports removed"
    model.ir_version = rng.choice([0, 1, 3, 7, 11, 13, 99])
    return f"ir_version {model.ir_version}"


@mutation(keeps_valid=False)
def domains(mutant: Mutant, rng: random.Random) -> str:
    nodes = [n for g in graphs(mutant.model.graph) for n in g.node]
    node = _pick(rng, nodes)
    node.domain = rng.choice([PLACEHOLDER_DOMAIN, "com.microsoft", "ai.onnx.ml", "bogus.domain"])
    if node.domain != PLACEHOLDER_DOMAIN and rng.random() < 0.5:
        mutant.model.opset_import.append(helper.make_opsetid(node.domain, 1))
    return f"{node.op_type} in domain {node.domain}"


@mutation(keeps_valid=True)
def shuffle_nodes(mutant: Mutant, rng: random.Random) -> str:
    graph = rng.choice(list(graphs(mutant.model.graph)))
    nodes = list(graph.node)
    if len(nodes) < 2:
        raise NotApplicable
    rng.shuffle(nodes)
    del graph.node[:]
    graph.node.extend(nodes)
    return f"nodes of graph '{graph.name}' shuffled"


@mutation(keeps_valid=True)
def odd_names(mutant: Mutant, rng: random.Random) -> str:
    model = mutant.model
    if rng.random() < 0.4:
        node = _pick(rng, [n for g in graphs(model.graph) for n in g.node])
        node.name = rng.choice([*ODD_NAMES, BAD_UTF8_MARKER])
        return f"{node.op_type} named {node.name[:20]!r}"
    old = _pick(rng, _values(model.graph))
    new = rng.choice(ODD_NAMES)
    if any(new in _values(g) for g in graphs(model.graph)):
        raise NotApplicable
    for graph in graphs(model.graph):
        _rename(graph, old, new)
    return f"value '{old[:20]}' renamed {new[:20]!r}"


def _rename(graph: onnx.GraphProto, old: str, new: str) -> None:
    for value in [*graph.input, *graph.output, *graph.value_info, *graph.initializer]:
        if value.name == old:
            value.name = new
    for node in graph.node:
        for values in (node.input, node.output):
            for index, name in enumerate(values):
                if name == old:
                    values[index] = new


# -- initializers and external data --------------------------------------------------------------
def _tensors(model: onnx.ModelProto) -> list[onnx.TensorProto]:
    """Every initializer and Constant value, in any graph."""
    found = []
    for graph in graphs(model.graph):
        found.extend(graph.initializer)
        constants = [n for n in graph.node if n.op_type == "Constant"]
        found.extend(a.t for n in constants for a in n.attribute if a.name == "value")
    return found


@mutation(keeps_valid=True)  # only external data beside the model stays valid
def initializers(mutant: Mutant, rng: random.Random) -> str:
    inline = [t for t in _tensors(mutant.model) if t.data_location != TensorProto.EXTERNAL]
    tensor = _pick(rng, [t for t in inline if t.dims or t.raw_data])
    action = rng.choice(["huge_dims", "raw_length", "external", "external", "external"])
    mutant.keeps_valid = mutant.keeps_valid and action == "external"
    if action == "huge_dims":
        tensor.dims[:] = [rng.choice([2**40, 2**31, -1, 2**62])] + list(tensor.dims)[1:]
        return f"tensor '{tensor.name[:20]}' dims {list(tensor.dims)}"
    data = onnx.numpy_helper.to_array(tensor).tobytes()
    if action == "raw_length":
        _clear_data(tensor)
        tensor.raw_data = data[: rng.randrange(len(data))] if data else b"\0" * 3
        return f"tensor '{tensor.name[:20]}' raw_data {len(tensor.raw_data)} of {len(data)} bytes"
    return _externalise(mutant, rng, tensor, data)


def _externalise(mutant: Mutant, rng: random.Random, tensor: onnx.TensorProto, data: bytes) -> str:
    where = rng.choice(["beside", "beside", "missing", "absolute", "parent", "past_end", "sub"])
    location, offset = {
        "beside": (f"weights{len(mutant.files)}.bin", 0),  # one file per tensor
        "sub": (f"data/weights{len(mutant.files)}.bin", 0),
        "missing": ("missing.bin", 0),
        "absolute": ("/etc/hostname", 0),
        "parent": ("../weights.bin", 0),
        "past_end": (f"weights{len(mutant.files)}.bin", len(data) + 64),
    }[where]
    _clear_data(tensor)
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", len(data))):
        tensor.external_data.add(key=key, value=str(value))
    if where in ("beside", "past_end", "sub"):
        mutant.files[location] = data
    if where == "parent":
        mutant.files["../weights.bin"] = data
    mutant.keeps_valid = mutant.keeps_valid and where in ("beside", "sub")
    return f"tensor '{tensor.name[:20]}' external data {where} ({location})"


def _clear_data(tensor: onnx.TensorProto) -> None:
    for name in ("raw_data", "float_data", "int32_data", "int64_data", "double_data"):
        tensor.ClearField(name)


# -- valid variations: the model stays runnable --------------------------------------------------
@mutation(keeps_valid=True)
def constant_loop_inputs(mutant: Mutant, rng: random.Random) -> str:
    """A Loop's trip count or condition, or a Scan's state, becomes a constant initializer."""
    node = _pick(rng, [n for n in mutant.model.graph.node if n.op_type in ("Loop", "Scan")])
    index = rng.randrange(2) if node.op_type == "Loop" else rng.randrange(len(node.input))
    if index >= len(node.input):
        raise NotApplicable
    name = f"fuzz_constant_{index}"
    if name in _values(mutant.model.graph):
        raise NotApplicable
    if node.op_type == "Loop" and index == 0:
        value = np.array(rng.choice([0, 1, 3, -1]), np.int64)
    elif node.op_type == "Loop":
        value = np.array(rng.choice([True, False]))
    else:
        value = _feed_like(mutant, node.input[index])
    node.input[index] = name
    mutant.model.graph.initializer.append(onnx.numpy_helper.from_array(value, name))
    return f"{node.op_type} input {index} is the constant {value.tolist()!r:.40}"


def _feed_like(mutant: Mutant, name: str) -> np.ndarray:
    value = mutant.feeds.get(name)
    if value is None or value.dtype.kind not in "fiub":
        raise NotApplicable
    return np.asarray(value)


@mutation(keeps_valid=True)
def retype_floats(mutant: Mutant, rng: random.Random) -> str:
    """Every float32 tensor, value and Cast becomes float16 or float64 (feeds follow)."""
    to = rng.choice([TensorProto.FLOAT16, TensorProto.DOUBLE])
    dtype = helper.tensor_dtype_to_np_dtype(to)
    for graph in graphs(mutant.model.graph):
        for value in [*graph.input, *graph.output, *graph.value_info]:
            if value.type.tensor_type.elem_type == TensorProto.FLOAT:
                value.type.tensor_type.elem_type = to
        for node in graph.node:
            for attribute in node.attribute:
                if attribute.name == "to" and attribute.i == TensorProto.FLOAT:
                    attribute.i = to
    for tensor in _tensors(mutant.model):
        if tensor.data_type == TensorProto.FLOAT and tensor.data_location != TensorProto.EXTERNAL:
            array = onnx.numpy_helper.to_array(tensor).astype(dtype)
            tensor.CopyFrom(onnx.numpy_helper.from_array(array, tensor.name))
    with np.errstate(over="ignore"):  # f16 feeds may become inf, in both runtimes alike
        for key, value in mutant.feeds.items():
            if value.dtype == np.float32:
                mutant.feeds[key] = value.astype(dtype)
    return f"float32 retyped to {np.dtype(dtype).name}"


@mutation(keeps_valid=True)
def wrap_in_if(mutant: Mutant, rng: random.Random) -> str:
    """A main-graph loop moves into both branches of an If on a constant condition."""
    main = mutant.model.graph
    node = _pick(rng, [n for n in main.node if n.op_type in ("Loop", "Scan")])
    declared = {v.name: v for v in [*main.output, *main.value_info]}
    branches = {}
    for branch in ("then_branch", "else_branch"):
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        inner = [copy]
        _rename_inside(inner, f"_{branch[:4]}")
        outputs = []
        for original, renamed in zip(node.output, inner[0].output):
            info = onnx.ValueInfoProto()
            info.CopyFrom(declared.get(original, onnx.ValueInfoProto()))
            info.name = renamed
            outputs.append(info)
        branches[branch] = helper.make_graph(inner, f"{branch}_{node.name}", [], outputs)
    choice = rng.choice([True, False])
    main.initializer.append(onnx.numpy_helper.from_array(np.array(choice), "fuzz_if_cond"))
    wrapped = helper.make_node("If", ["fuzz_if_cond"], list(node.output), **branches)
    position = list(main.node).index(node)
    main.node.remove(node)
    main.node.insert(position, wrapped)
    return f"{node.op_type} wrapped in If({choice})"


def _rename_inside(nodes: list[onnx.NodeProto], suffix: str) -> None:
    """Give the outputs of `nodes` and every name defined in their subgraphs `suffix`."""
    holder = helper.make_graph(nodes, "holder", [], [])
    inner = list(graphs(holder))
    defined = {o for n in nodes for o in n.output if o}
    defined |= {name for g in inner[1:] for name in _values(g)}
    for name in defined:
        for graph in inner:
            _rename(graph, name, f"{name}{suffix}")
    del nodes[:]
    nodes.extend(holder.node)
