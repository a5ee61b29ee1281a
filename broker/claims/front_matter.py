"""Adding one reference to a note's ``supersedes:`` front matter, and nothing else.

The edit is textual, so the rest of the file keeps its bytes: a note without
front matter gains a three-line block; a block without the key gains one
line before its closing fence; a block list gains one item at its indent; a
flow list gains one element; a single value becomes a flow list of two. The
result is then parsed: unless the new front matter equals the old one with
exactly that reference added to ``supersedes``, the edit is refused, so a
layout this module does not understand is never damaged.
"""

from __future__ import annotations

import json
import re
from typing import Any

from broker.claims.model import ClaimRefused

_FENCE_OPEN = "---"
_FENCE_CLOSE = ("---", "...")
_KEY_LINE = re.compile(r"^[A-Za-z_][\w-]*\s*:")
_SUPERSEDES = re.compile(r"^supersedes\s*:(?P<value>.*)$")
_ITEM = re.compile(r"^(?P<indent>[ \t]*)-(\s|$)")
_PLAIN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./ -]*[A-Za-z0-9_./-]$|^[A-Za-z0-9_]$")
_MAX_FRONT_MATTER_LINES = 200


def add_supersedes(text: str, reference: str, where: str) -> str | None:
    """``text`` with ``reference`` added to its ``supersedes``; ``None`` when it is already there.

    ``where`` names the note in refusals.
    """
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)
    value = _plain_or_quoted(reference)
    span = _front_matter_span(lines)
    if span == 0:
        return newline.join(["---", f"supersedes: {value}", "---", *lines])
    before = _parse(lines[1 : span - 1], where)
    named = _references(before.get("supersedes"))
    if reference in named or _without_extension(reference) in named:
        return None
    edited = _edit_block(lines, span, value)
    expected = {**before, "supersedes": [*_as_list(before.get("supersedes")), reference]}
    try:
        after = _parse(edited[1 : _front_matter_span(edited) - 1], where)
    except ClaimRefused:
        after = {}
    got = {**after, "supersedes": _as_list(after.get("supersedes"))}
    if _normalised(got) != _normalised(expected):
        raise ClaimRefused(
            f"cannot add {reference!r} to the supersedes of {where} without changing anything else; "
            f"add 'supersedes: {value}' to its front matter by hand"
        )
    return newline.join(edited)


def _edit_block(lines: list[str], span: int, value: str) -> list[str]:
    closing = span - 1
    for index in range(1, closing):
        match = _SUPERSEDES.match(lines[index])
        if not match:
            continue
        current = match["value"].strip()
        if not current:
            last, indent = index, "  "
            for item in range(index + 1, closing):
                found = _ITEM.match(lines[item])
                if found:
                    last, indent = item, found["indent"]
                elif lines[item].strip() and not lines[item][:1].isspace():
                    break
            return [*lines[: last + 1], f"{indent}- {value}", *lines[last + 1 :]]
        if current.startswith("[") and current.endswith("]"):
            inner = current[1:-1].strip()
            joined = f"[{inner}, {value}]" if inner else f"[{value}]"
        else:
            joined = f"[{current}, {value}]"
        return [*lines[:index], f"supersedes: {joined}", *lines[index + 1 :]]
    return [*lines[:closing], f"supersedes: {value}", *lines[closing:]]


def _front_matter_span(lines: list[str]) -> int:
    """Leading lines forming a front matter block, fences included (the notes adapter's rule)."""
    if not lines or lines[0].lstrip("\ufeff").rstrip() != _FENCE_OPEN:
        return 0
    for index in range(1, min(len(lines), _MAX_FRONT_MATTER_LINES)):
        if lines[index].rstrip() in _FENCE_CLOSE:
            return index + 1 if any(_KEY_LINE.match(line) for line in lines[1:index]) else 0
    return 0


def _parse(block: list[str], where: str) -> dict[Any, Any]:
    import yaml

    try:
        data = yaml.safe_load("\n".join(block))
    except yaml.YAMLError:
        raise ClaimRefused(f"the front matter of {where} is not valid YAML; fix it first") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ClaimRefused(f"the front matter of {where} is not a mapping; fix it first")
    return data


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _references(value: Any) -> set[str]:
    """What ``supersedes`` names, read the way the notes adapter reads references."""
    names = set()
    for item in _as_list(value):
        ref = str(item).strip()
        while ref.startswith("[") and ref.endswith("]"):
            ref = ref[1:-1].strip()
        names.add(ref[2:] if ref.startswith("./") else ref)
    return names


def _without_extension(reference: str) -> str:
    stem, dot, extension = reference.rpartition(".")
    return stem if dot and "/" not in extension else reference


def _normalised(data: dict[Any, Any]) -> str:
    return json.dumps(data, sort_keys=True, default=str)


def _plain_or_quoted(reference: str) -> str:
    return reference if _PLAIN.match(reference) else json.dumps(reference, ensure_ascii=False)
