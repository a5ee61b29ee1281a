"""Parse a todo.txt file (and the done.txt beside it) into task records.

Line grammar (todo.txt): an optional ``x `` completion marker and completion
date, or an optional ``(A) `` priority; an optional creation date; then the
description with ``+project``, ``@context`` and ``key:value`` tokens. Dates are
``YYYY-MM-DD`` and read as midnight UTC.

A line whose dates or ``due:`` value are malformed, or whose bytes are not
UTF-8 text, is kept as plain text (searchable, no fields) and counted.

A done task (``x ...`` or any line of done.txt) is never current. One without
a completion date is ended as of its file's modification time, and the record
says the date was missing (``end_date_missing``).

Stable ids: the first 12 hex digits of SHA-256 over the creation date and the
normalized description (``pri:`` removed, whitespace collapsed, lowercased). A
task keeps its id when other lines are added, removed or reordered, when its
priority changes, and when it is completed and moved to done.txt; editing the
task's own description gives it a new id. Identical lines get ``#2``, ``#3``…
mixed into the hash in file order (todo.txt first, then done.txt).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from adapters.tasks.task_record import TaskRecord

DONE_FILE = "done.txt"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_SHAPED = re.compile(r"\d{4}-\d{1,2}-\d{1,2}")
_PRIORITY = re.compile(r"\(([A-Z])\) ")
_KEY_VALUE = re.compile(r"([^\s:]+):([^\s:]+)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffd]")


class LineNotParsed(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class ParsedList:
    records: list[TaskRecord]
    unparsed_lines: list[str]  # "todo.txt:7"


def read_list(
    todo_file: Path, contents: dict[str, bytes], modified: dict[str, datetime] | None = None
) -> ParsedList:
    """Records from todo.txt (pending unless marked ``x``) and done.txt (completed).

    ``modified`` holds each file's modification time, the end of a done task
    whose line gives no completion date.
    """
    records: list[TaskRecord] = []
    unparsed: list[str] = []
    seen: dict[str, int] = {}
    for name in (todo_file.name, DONE_FILE):
        data = contents.get(name)
        if data is None:
            continue
        in_done_file = name == DONE_FILE and name != todo_file.name
        for number, line in enumerate(data.split(b"\n"), start=1):
            text = line.decode("utf-8", errors="replace").rstrip("\r")
            if not text.strip():
                continue
            try:
                record = parse_line(text, name, number, in_done_file, seen, (modified or {}).get(name))
            except LineNotParsed:
                record = plain_text_record(text, name, number, in_done_file, seen, (modified or {}).get(name))
                unparsed.append(f"{name}:{number}")
            records.append(record)
    return ParsedList(records, unparsed)


def parse_line(
    text: str, file: str, number: int, in_done_file: bool, seen: dict[str, int],
    file_modified: datetime | None = None,
) -> TaskRecord:
    if _CONTROL.search(text):
        raise LineNotParsed("control characters or undecodable bytes")
    rest = text.strip()
    done = False
    priority: str | None = None
    completed_on: datetime | None = None
    if rest.startswith("x "):
        done = True
        rest = rest[2:].lstrip()
        completed_on, rest = _leading_date(rest)
    elif match := _PRIORITY.match(rest):
        priority = match.group(1)
        rest = rest[match.end():].lstrip()
    created_on, rest = _leading_date(rest)

    projects: list[str] = []
    contexts: list[str] = []
    attributes: dict[str, str] = {}
    for word in rest.split():
        if word.startswith("+") and len(word) > 1:
            projects.append(word[1:])
        elif word.startswith("@") and len(word) > 1:
            contexts.append(word[1:])
        elif "://" not in word and (kv := _KEY_VALUE.fullmatch(word)):
            attributes[kv.group(1).lower()] = kv.group(2)
    due = _date(attributes["due"]) if "due" in attributes else None
    if priority is None and "pri" in attributes and re.fullmatch(r"[A-Z]", attributes["pri"]):
        priority = attributes["pri"]
    description = " ".join(w for w in rest.split() if not w.lower().startswith("pri:"))
    if not description:
        raise LineNotParsed("no description")

    status = "completed" if done or in_done_file else "pending"
    end_date_missing = status == "completed" and completed_on is None
    if end_date_missing:
        completed_on = file_modified
    return TaskRecord(
        record_id=_stable_id(created_on, description, seen),
        description=description,
        status=status,
        working_id=number if not in_done_file else None,
        project=projects[0] if projects else None,
        projects=tuple(projects),
        tags=tuple(contexts),
        contexts=tuple(contexts),
        priority=priority,
        due=due,
        entry=created_on,
        end=completed_on if status == "completed" else None,
        end_date_missing=end_date_missing,
        attributes=attributes,
        file=file,
        line=number,
    )


def plain_text_record(
    text: str, file: str, number: int, in_done_file: bool, seen: dict[str, int],
    file_modified: datetime | None = None,
) -> TaskRecord:
    description = " ".join(_CONTROL.sub(" ", text).split())
    return TaskRecord(
        record_id=_stable_id(None, description, seen),
        description=description,
        status="completed" if in_done_file else "pending",
        working_id=number if not in_done_file else None,
        end=file_modified if in_done_file else None,
        end_date_missing=in_done_file,
        file=file,
        line=number,
        unparsed=True,
    )


def _leading_date(rest: str) -> tuple[datetime | None, str]:
    head, _, tail = rest.partition(" ")
    if _DATE_SHAPED.fullmatch(head):
        return _date(head), tail.lstrip()
    return None, rest


def _date(value: str) -> datetime:
    if not _DATE.fullmatch(value):
        raise LineNotParsed(f"{value!r} is not a YYYY-MM-DD date")
    try:
        return datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise LineNotParsed(f"{value!r} is not a calendar date") from None


def _stable_id(created_on: datetime | None, description: str, seen: dict[str, int]) -> str:
    normalized = " ".join(
        w for w in description.lower().split() if not w.startswith("pri:")
    )
    key = f"{created_on.date().isoformat() if created_on else ''}\x1f{normalized}"
    seen[key] = seen.get(key, 0) + 1
    if seen[key] > 1:
        key += f"#{seen[key]}"
    return hashlib.sha256(key.encode()).hexdigest()[:12]
