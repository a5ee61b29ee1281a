"""YAML front matter: the keys a note may declare about itself.

Recognised keys: ``title``, ``aliases``, ``tags``, ``id``, ``valid_from``,
``valid_until``, ``supersedes``; anything else is ignored. A block that does
not parse, or a key of the wrong shape, never stops the note from being
indexed: the problem is recorded and reported. Dates are UTC days:
``valid_from`` starts at 00:00, ``valid_until`` runs through the end of its day.
PyYAML is imported only when a note actually has front matter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

_FENCE_OPEN = "---"
_FENCE_CLOSE = ("---", "...")
_KEY_LINE = re.compile(r"^[A-Za-z_][\w-]*\s*:")
_MAX_FRONT_MATTER_LINES = 200
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class FrontMatter:
    title: str | None = None
    aliases: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    note_id: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    supersedes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "aliases": self.aliases,
            "tags": self.tags,
            "id": self.note_id,
            "valid_from": self.valid_from.isoformat() if self.valid_from else None,
            "valid_to": self.valid_to.isoformat() if self.valid_to else None,
            "supersedes": self.supersedes,
            "problems": self.problems,
        }


def front_matter_span(lines: list[str]) -> int:
    """Number of leading lines that form a front matter block (0 when there is none).

    The block opens with ``---`` on the first line, closes with ``---`` or
    ``...``, and holds at least one ``key:`` line; otherwise the fences are
    two thematic breaks and belong to the note.
    """
    if not lines or lines[0].lstrip("\ufeff").rstrip() != _FENCE_OPEN:
        return 0
    for index in range(1, min(len(lines), _MAX_FRONT_MATTER_LINES)):
        if lines[index].rstrip() in _FENCE_CLOSE:
            inner = lines[1:index]
            return index + 1 if any(_KEY_LINE.match(line) for line in inner) else 0
    return 0


def parse_front_matter(block: str) -> FrontMatter:
    import yaml  # only notes with front matter pay for it

    front = FrontMatter()
    try:
        data = yaml.safe_load(block)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        front.problems.append(f"front matter is not valid YAML{where}: {problem}")
        return front
    if data is None:
        return front
    if not isinstance(data, dict):
        front.problems.append("front matter is not a mapping of keys to values")
        return front
    front.title = _text(front, data, "title")
    front.aliases = _text_list(front, data, "aliases")
    front.tags = [t.lstrip("#") for t in _text_list(front, data, "tags")]
    front.note_id = _text(front, data, "id")
    front.valid_from = _instant(front, data, "valid_from", end_of_day=False)
    front.valid_to = _instant(front, data, "valid_until", end_of_day=True)
    front.supersedes = [
        ref for ref in (normalize_reference(r) for r in _text_list(front, data, "supersedes")) if ref
    ]
    if front.valid_from and front.valid_to and front.valid_to < front.valid_from:
        front.problems.append("'valid_until' is before 'valid_from'")
    return front


def normalize_reference(ref: str) -> str:
    """``[[name]]``, ``[name]``, quoted or padded references reduced to the bare target."""
    ref = ref.strip()
    while ref.startswith("[") and ref.endswith("]"):
        ref = ref[1:-1].strip()
    if len(ref) >= 2 and ref[0] == ref[-1] and ref[0] in "'\"":
        ref = ref[1:-1].strip()
    return ref[2:] if ref.startswith("./") else ref


def _text(front: FrontMatter, data: dict[Any, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        text = _as_text(front, key, str(value).strip())
        return text or None
    front.problems.append(f"{key!r} must be a single value; got {type(value).__name__}")
    return None


def _text_list(front: FrontMatter, data: dict[Any, Any], key: str) -> list[str]:
    value = data.get(key)
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, str | int | float) and not isinstance(item, bool) and str(item).strip():
            out.append(_as_text(front, key, str(item).strip()))
        else:
            front.problems.append(f"{key!r} must be a string or a list of strings; got {item!r}")
    return list(dict.fromkeys(out))


def _as_text(front: FrontMatter, key: str, value: str) -> str:
    """``value`` with each lone surrogate (YAML's ``"\\udce9"`` escape makes one, and no
    UTF-8 text can hold it) replaced by U+FFFD, and the problem recorded."""
    if not _SURROGATE.search(value):
        return value
    front.problems.append(f"{key!r} holds an escaped lone surrogate, which is not text; shown as U+FFFD")
    return _SURROGATE.sub("\ufffd", value)


def _instant(front: FrontMatter, data: dict[Any, Any], key: str, end_of_day: bool) -> datetime | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            if len(str(data.get(key)).strip()) <= 10:
                value = value.date()
        except ValueError:
            front.problems.append(f"{key!r} is not a date (want YYYY-MM-DD): {data.get(key)!r}")
            return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        start = datetime.combine(value, time(0), tzinfo=UTC)
        return start + timedelta(days=1, microseconds=-1) if end_of_day else start
    front.problems.append(f"{key!r} is not a date (want YYYY-MM-DD): {value!r}")
    return None
