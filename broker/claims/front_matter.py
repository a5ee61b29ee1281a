"""Adding one reference to a note's ``supersedes:`` front matter, and nothing else.

The edit is textual, so the rest of the file keeps its bytes: a note without
front matter gains a three-line block; a block without the key gains one
line before its closing fence; a block list gains one item at its indent; a
flow list gains one element; a single value becomes a flow list of two.
Lines are found the way the notes adapter finds them (only ``\\n`` ends a
line, a trailing ``\\r`` belongs to its ending), so one pasted CRLF line in
an LF note does not hide its front matter; a line added ends like the
note's first line. Every result, with or without front matter before, is
parsed again with the adapter's rule: unless the new front matter equals the
old one with exactly that reference added to ``supersedes`` and everything
after it is byte for byte what it was, the edit is refused, so a layout this
module does not understand is never damaged.
"""

from __future__ import annotations

import json
import re
from typing import Any

from adapter_sdk.markdown.chunking import split_lines
from adapter_sdk.markdown.front_matter import front_matter_span
from broker.claims.claim import ClaimRefused

_SUPERSEDES = re.compile(r"^supersedes\s*:(?P<value>.*)$")
_ITEM = re.compile(r"^(?P<indent>[ \t]*)-(\s|$)")
_PLAIN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./ -]*[A-Za-z0-9_./-]$|^[A-Za-z0-9_]$")
_LINE = re.compile(r"[^\n]*\n|[^\n]+")
_BOM = "\ufeff"


def add_supersedes(text: str, reference: str, where: str) -> str | None:
    """``text`` with ``reference`` added to its ``supersedes``; ``None`` when it is already there.

    ``where`` names the note in refusals.
    """
    value = _plain_or_quoted(reference)
    lines = split_lines(text)
    span = front_matter_span(lines)
    before = _parse(lines[1 : span - 1], where) if span else {}
    named = _references(before.get("supersedes"))
    if reference in named or _without_extension(reference) in named:
        return None
    endings = [raw[len(line) :] for raw, line in zip(_LINE.findall(text), lines, strict=False)]
    newline = endings[0] if endings and endings[0] else "\n"
    if span == 0:
        bom = _BOM if text.startswith(_BOM) else ""
        edited = bom + newline.join(["---", f"supersedes: {value}", "---", text[len(bom):]])
    else:
        edited = _join(_edit_block(lines, span, value), endings, newline)
    _check(text, edited, before, reference, value, where)
    return edited


def _join(lines: list[tuple[str, int | None]], endings: list[str], newline: str) -> str:
    """Lines back into text: an original line with its own ending, an added one with ``newline``."""
    last = len(lines) - 1
    return "".join(
        line + (endings[origin] if origin is not None else newline if index < last else "")
        for index, (line, origin) in enumerate(lines)
    )


def _check(text: str, edited: str, before: dict[Any, Any], reference: str, value: str,
           where: str) -> None:
    """Refuse unless ``edited`` is ``text`` with exactly ``reference`` added, read as the adapter reads."""
    old_lines, new_lines = split_lines(text), split_lines(edited)
    old_span, new_span = front_matter_span(old_lines), front_matter_span(new_lines)
    try:
        after = _parse(new_lines[1 : new_span - 1], where) if new_span else {}
    except ClaimRefused:
        after = {}
    expected = {**before, "supersedes": [*_as_list(before.get("supersedes")), reference]}
    got = {**after, "supersedes": _as_list(after.get("supersedes"))}
    # a byte order mark stays first in the file, before an added block
    same_body = (_after_lines(text, old_span).removeprefix(_BOM)
                 == _after_lines(edited, new_span).removeprefix(_BOM))
    if not new_span or not same_body or _normalised(got) != _normalised(expected):
        raise ClaimRefused(
            f"cannot add {reference!r} to the supersedes of {where} without changing anything else; "
            f"add 'supersedes: {value}' to its front matter by hand"
        )


def _after_lines(text: str, count: int) -> str:
    """What follows the first ``count`` lines of ``text``, as it is in the file."""
    return "".join(_LINE.findall(text)[count:])


def _edit_block(lines: list[str], span: int, value: str) -> list[tuple[str, int | None]]:
    """The lines with ``value`` added to the block's ``supersedes``, each with the index of
    the original line it replaces (``None`` for a line added)."""
    kept: list[tuple[str, int | None]] = [(line, index) for index, line in enumerate(lines)]
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
            return [*kept[: last + 1], (f"{indent}- {value}", None), *kept[last + 1 :]]
        if current.startswith("[") and current.endswith("]"):
            inner = current[1:-1].strip()
            joined = f"[{inner}, {value}]" if inner else f"[{value}]"
        else:
            joined = f"[{current}, {value}]"
        return [*kept[:index], (f"supersedes: {joined}", index), *kept[index + 1 :]]
    return [*kept[:closing], (f"supersedes: {value}", None), *kept[closing:]]


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
