"""Edits to a JSON document that leave every byte outside the edit as it was.

:func:`parse` maps each value of a (valid) JSON text to its span. The edits
insert or remove one array item or object member, or replace one value, and
are exact inverses of each other: an item appended and then removed gives the
original text back. Inserted values are laid out like their neighbours (on
their own indented line when the neighbours are, inline otherwise).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass
class Node:
    value: Any
    start: int
    end: int
    items: list[Node] = field(default_factory=list)
    """Array items, in order."""
    members: list[tuple[str, int, Node]] = field(default_factory=list)
    """Object members, in order: key, where the key starts, the value."""

    def member(self, key: str) -> Node | None:
        return next((node for name, _, node in self.members if name == key), None)


def parse(text: str) -> Node:
    """Spans of a JSON text (already known to be valid)."""
    node, end = _value(text, _skip(text, 0))
    if _skip(text, end) != len(text):
        raise ValueError("extra data after the JSON value")
    return node


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _value(text: str, at: int) -> tuple[Node, int]:
    opening = text[at]
    if opening == "{":
        node = Node({}, at, at)
        at = _skip(text, at + 1)
        while text[at] != "}":
            key_at = at
            key, at = _DECODER.raw_decode(text, at)
            at = _skip(text, _skip(text, at) + 1)  # past the colon
            child, at = _value(text, at)
            node.members.append((key, key_at, child))
            node.value[key] = child.value
            at = _skip(text, at)
            if text[at] == ",":
                at = _skip(text, at + 1)
        node.end = at + 1
        return node, node.end
    if opening == "[":
        node = Node([], at, at)
        at = _skip(text, at + 1)
        while text[at] != "]":
            child, at = _value(text, at)
            node.items.append(child)
            node.value.append(child.value)
            at = _skip(text, at)
            if text[at] == ",":
                at = _skip(text, at + 1)
        node.end = at + 1
        return node, node.end
    value, end = _DECODER.raw_decode(text, at)
    return Node(value, at, end), end


# ---------------------------------------------------------------------------
# Edits (each returns the new text)


def replace(text: str, node: Node, value: Any) -> str:
    rendered = render(value, _line_indent(text, node.start), indent_unit(text))
    return text[: node.start] + rendered + text[node.end :]


def append_item(text: str, array: Node, value: Any) -> str:
    if not array.items:
        return text[: array.start] + "[" + json.dumps(value, ensure_ascii=False) + "]" + text[array.end :]
    return _after(text, array.items[-1].start, array.items[-1].end, value, key=None)


def add_member(text: str, obj: Node, key: str, value: Any) -> str:
    if not obj.members:
        member = json.dumps({key: value}, ensure_ascii=False)
        return text[: obj.start] + member + text[obj.end :]
    _, key_at, last = obj.members[-1]
    return _after(text, key_at, last.end, value, key=key)


def remove_item(text: str, array: Node, index: int) -> str:
    return _remove(text, [(item.start, item.end) for item in array.items], index, array)


def remove_member(text: str, obj: Node, key: str) -> str:
    spans = [(key_at, node.end) for _, key_at, node in obj.members]
    index = next(i for i, (name, _, _) in enumerate(obj.members) if name == key)
    return _remove(text, spans, index, obj)


def _after(text: str, neighbour_start: int, neighbour_end: int, value: Any, key: str | None) -> str:
    """Insert after a neighbour, laid out as it is."""
    prefix = "" if key is None else json.dumps(key, ensure_ascii=False) + ": "
    if _starts_line(text, neighbour_start):
        indent = _line_indent(text, neighbour_start)
        inserted = ",\n" + indent + prefix + render(value, indent, indent_unit(text))
    else:
        inserted = ", " + prefix + json.dumps(value, ensure_ascii=False)
    return text[:neighbour_end] + inserted + text[neighbour_end:]


def _remove(text: str, spans: list[tuple[int, int]], index: int, container: Node) -> str:
    if len(spans) == 1:
        return text[: container.start + 1] + text[container.end - 1 :]
    if index > 0:
        return text[: spans[index - 1][1]] + text[spans[index][1] :]
    return text[: spans[0][0]] + text[spans[1][0] :]


def render(value: Any, indent: str, unit: int | str) -> str:
    """``value`` as indented JSON whose continuation lines start at ``indent``."""
    lines = json.dumps(value, indent=unit, ensure_ascii=False).split("\n")
    return "\n".join([lines[0], *(indent + line for line in lines[1:])])


def indent_unit(text: str) -> int | str:
    """The document's indentation step (spaces or a tab); two spaces when it has none."""
    for line in text.split("\n")[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def _line_start(text: str, at: int) -> int:
    return text.rfind("\n", 0, at) + 1


def _starts_line(text: str, at: int) -> bool:
    return not text[_line_start(text, at) : at].strip()


def _line_indent(text: str, at: int) -> str:
    line = text[_line_start(text, at) : at]
    return line[: len(line) - len(line.lstrip(" \t"))]
