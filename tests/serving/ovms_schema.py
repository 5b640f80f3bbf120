"""OpenVINO Model Server's config.json schema, transcribed from its source for the tests (OVMS
itself is not installable here), and a checker of the JSON-Schema keywords it uses.

Source: openvinotoolkit/model_server src/schema.cpp, MODELS_CONFIG_SCHEMA (the schema OVMS
validates config.json against at start and on every reload), and docs/parameters.md: the
version with MODEL_CONFIG_DEFINITION, mediapipe_config_list and monitoring (older releases,
without those, also require each model's base_path, which ov-loops always writes). The model
and mediapipe entries are complete (OVMS's "maxProperties": 1 on a list item holding "config"
is "additionalProperties": false here); pipeline, custom-loader and custom-node-library entries
are checked as objects (ov-loops writes none of them, and keeps whatever the user had). What
this proves: the files written conform to that schema; not that OVMS serves them (OVMS ships
as a Docker image, not installable here).
"""

from __future__ import annotations

POSITIVE = {"type": "integer", "minimum": 1}
STRINGS = {"type": "object", "additionalProperties": {"type": "string"}}
SHAPE = {"oneOf": [STRINGS, {"type": "string"}]}
VERSION_POLICY = {
    "oneOf": [
        {"type": "object", "required": ["all"], "additionalProperties": False,
         "properties": {"all": {"type": "object", "maxProperties": 0}}},
        {"type": "object", "required": ["specific"], "additionalProperties": False,
         "properties": {"specific": {
             "type": "object", "required": ["versions"], "additionalProperties": False,
             "properties": {"versions": {"type": "array", "items": POSITIVE}}}}},
        {"type": "object", "required": ["latest"], "additionalProperties": False,
         "properties": {"latest": {
             "type": "object", "required": ["num_versions"], "additionalProperties": False,
             "properties": {"num_versions": POSITIVE}}}},
    ]
}  # fmt: skip
MODEL_CONFIG = {
    "type": "object",
    "required": ["name"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string"},
        "base_path": {"type": "string"},
        "batch_size": {"type": ["integer", "string"], "minimum": 0},
        "graph_path": {"type": "string"},
        "subconfig": {"type": "string"},
        "model_version_policy": VERSION_POLICY,
        "shape": SHAPE,
        "layout": SHAPE,
        "nireq": {"type": "integer", "minimum": 0},
        "target_device": {"type": "string"},
        "allow_cache": {"type": "boolean"},
        "plugin_config": {
            "type": "object",
            "additionalProperties": {"type": ["string", "boolean", "number"]},
        },
        "stateful": {"type": "boolean"},
        "idle_sequence_cleanup": {"type": "boolean"},
        "low_latency_transformation": {"type": "boolean"},
        "max_sequence_number": {"type": "integer", "minimum": 0},
        "custom_loader_options": {"type": "object", "required": ["loader_name"]},
    },
}
OBJECTS = {"type": "array", "items": {"type": "object"}}
MEDIAPIPE_CONFIG = {
    "type": "object",
    "required": ["name"],
    "additionalProperties": False,
    "properties": {
        key: {"type": "string"} for key in ("name", "base_path", "graph_path", "subconfig")
    },
}
CONFIG_SCHEMA = {
    "type": "object",
    "required": ["model_config_list"],
    "additionalProperties": False,
    "properties": {
        "model_config_list": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["config"],
                "additionalProperties": False,
                "properties": {"config": MODEL_CONFIG},
            },
        },
        "custom_loader_config_list": OBJECTS,
        "pipeline_config_list": OBJECTS,
        "mediapipe_config_list": {"type": "array", "items": MEDIAPIPE_CONFIG},
        "custom_node_library_config_list": OBJECTS,
        "monitoring": {
            "type": "object",
            "required": ["metrics"],
            "additionalProperties": False,
            "properties": {"metrics": {
                "type": "object", "required": ["enable"], "additionalProperties": False,
                "properties": {"enable": {"type": "boolean"},
                               "metrics_list": {"type": "array", "items": {"type": "string"}}}}},
        },
    },
}  # fmt: skip

_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "integer": int,
    "number": (int, float),
}


def _is(value: object, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[name])


def violations(value: object, schema: dict, where: str = "$") -> list[str]:
    """Where `value` breaks `schema` (JSON-Schema keywords: type, required, properties,
    additionalProperties, items, minimum, maxProperties, oneOf); empty when it conforms."""
    if "oneOf" in schema:
        matching = [s for s in schema["oneOf"] if not violations(value, s, where)]
        return [] if len(matching) == 1 else [f"{where}: matches {len(matching)} of oneOf"]
    types = schema.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        if not any(_is(value, name) for name in names):
            return [f"{where}: not {types}"]
    found: list[str] = []
    if isinstance(value, (int, float)) and "minimum" in schema and value < schema["minimum"]:
        found.append(f"{where}: below {schema['minimum']}")
    if isinstance(value, dict):
        found += _object_violations(value, schema, where)
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            found += violations(item, schema["items"], f"{where}[{index}]")
    return found


def _object_violations(value: dict, schema: dict, where: str) -> list[str]:
    found = [f"{where}: missing {key}" for key in schema.get("required", []) if key not in value]
    if len(value) > schema.get("maxProperties", len(value)):
        found.append(f"{where}: more than {schema['maxProperties']} properties")
    properties, other = schema.get("properties", {}), schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            found += violations(item, properties[key], f"{where}.{key}")
        elif other is False:
            found.append(f"{where}: unexpected {key}")
        elif isinstance(other, dict):
            found += violations(item, other, f"{where}.{key}")
    return found
