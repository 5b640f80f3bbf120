"""Edits of a JSON text that keep the rest of it byte for byte: replace a value, add a member to
an object or an item to an array, remove a member. Values are located by their path of keys and
indices (json.JSONDecoder.raw_decode gives each value's end); an added member or item copies
the layout of its neighbours (on its own line, indented like them, or on the same line).

    text = set_member(text, ("model_config_list", 1, "config"), "base_path", "rnn")
    text = append_item(text, ("model_config_list",), {"config": {"name": "x"}}, indent=4)
"""

from __future__ import annotations

import json
import re

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


def _skip(text: str, at: int) -> int:
    return _SPACE.match(text, at).end()


def _children(text: str, start: int) -> list[tuple[object, int, int, int]]:
    """The members of the object (or items of the array) at `start`: (key or index, start of
    the key or item, start of the value, end of the value)."""
    closing = "}" if text[start] == "{" else "]"
    found, at = [], _skip(text, start + 1)
    while text[at] != closing:
        first = at
        if closing == "}":
            key, at = _DECODER.raw_decode(text, at)
            at = _skip(text, _skip(text, at) + 1)  # past the colon
        else:
            key = len(found)
        _, end = _DECODER.raw_decode(text, at)
        found.append((key, first, at, end))
        at = _skip(text, end)
        at = _skip(text, at + 1) if text[at] == "," else at
    return found


def _span(text: str, path: tuple) -> tuple[int, int]:
    """The start and end of the value at `path`."""
    start = _skip(text, 0)
    end = _DECODER.raw_decode(text, start)[1]
    for step in path:
        start, end = next((s, e) for key, _, s, e in _children(text, start) if key == step)
    return start, end


def set_member(text: str, path: tuple, key: str, value: object) -> str:
    """`text` with member `key` of the non-empty object at `path` set to `value` (replaced in
    place, or added after the last member, laid out like the first)."""
    start, _ = _span(text, path)
    members = _children(text, start)
    for name, _, value_start, value_end in members:
        if name == key:
            return text[:value_start] + json.dumps(value, ensure_ascii=False) + text[value_end:]
    _, first, value_start, _ = members[0]
    colon = text[_DECODER.raw_decode(text, first)[1] : value_start]  # '": "' as the file has it
    added = json.dumps(key, ensure_ascii=False) + colon + json.dumps(value, ensure_ascii=False)
    end = members[-1][3]
    return text[:end] + "," + _lead(text, start, first) + added + text[end:]


def remove_member(text: str, path: tuple, key: str) -> str:
    """`text` without member `key` of the object at `path` (with its comma)."""
    start, _ = _span(text, path)
    members = _children(text, start)
    for index, (name, first, _, value_end) in enumerate(members):
        if name == key:
            if index:  # from the end of the member before
                return text[: members[index - 1][3]] + text[value_end:]
            following = members[1][1] if len(members) > 1 else _skip(text, value_end)
            return text[:first] + text[following:]
    return text


def append_item(text: str, path: tuple, item: object, indent: str | int | None) -> str:
    """`text` with `item` added after the last item of the non-empty array at `path`, laid out
    like the items there (on a line of its own, indented by `indent`, when they are)."""
    start, _ = _span(text, path)
    items = _children(text, start)
    first, last_end = items[0][1], items[-1][3]
    lead = _lead(text, start, first)
    multiline = "\n" in text[items[-1][2] : last_end] and indent is not None
    if multiline:
        body = json.dumps(item, indent=indent, ensure_ascii=False)
        body = body.replace("\n", "\n" + lead.rsplit("\n", 1)[-1])
    else:
        body = json.dumps(item, ensure_ascii=False)
    return text[:last_end] + "," + lead + body + text[last_end:]


def _lead(text: str, start: int, first: int) -> str:
    """The whitespace before the first member or item of the container at `start` (a space
    when there is none)."""
    return text[start + 1 : first] or " "
