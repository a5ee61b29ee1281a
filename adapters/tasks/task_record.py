"""The task record both store formats are read into, and its cache encoding."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

CLOSED_STATUSES = frozenset({"completed", "deleted"})


@dataclass(frozen=True, slots=True)
class Annotation:
    entry: datetime | None
    description: str


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """One task. ``record_id`` is the Taskwarrior UUID or the todo.txt stable id."""

    record_id: str
    description: str
    status: str
    working_id: int | None = None
    project: str | None = None
    projects: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    contexts: tuple[str, ...] = ()
    priority: str | None = None
    due: datetime | None = None
    entry: datetime | None = None
    end: datetime | None = None
    modified: datetime | None = None
    urgency: float | None = None
    annotations: tuple[Annotation, ...] = ()
    attributes: dict[str, str] = field(default_factory=dict)
    file: str | None = None
    line: int | None = None
    unparsed: bool = False
    end_date_missing: bool = False  # closed, but its line gave no date: ``end`` is the file's mtime

    @property
    def short_id(self) -> str:
        return self.record_id[:8]

    def as_of(self, instant: datetime) -> TaskRecord:
        """This task as it stood at ``instant``: closed later means still pending then."""
        annotations = tuple(a for a in self.annotations if a.entry is None or a.entry <= instant)
        if self.status in CLOSED_STATUSES and self.end is not None and self.end > instant:
            return replace(self, status="pending", end=None, annotations=annotations)
        return replace(self, annotations=annotations)

    def to_cache(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for name in self.__slots__:  # type: ignore[attr-defined]
            value = getattr(self, name)
            if isinstance(value, datetime):
                value = value.isoformat()
            elif name == "annotations":
                value = [[_iso(a.entry), a.description] for a in value]
            elif isinstance(value, tuple):
                value = list(value)
            data[name] = value
        return data

    @classmethod
    def from_cache(cls, data: dict[str, Any]) -> TaskRecord:
        # field by field, in order: a snapshot is read back ten thousand records at a time
        get = data.get
        return cls(
            data["record_id"], data["description"], data["status"], get("working_id"),
            get("project"), tuple(get("projects") or ()), tuple(get("tags") or ()),
            tuple(get("contexts") or ()), get("priority"), _parse_iso(get("due")),
            _parse_iso(get("entry")), _parse_iso(get("end")), _parse_iso(get("modified")),
            get("urgency"),
            tuple(Annotation(_parse_iso(entry), text) for entry, text in get("annotations") or ()),
            get("attributes") or {}, get("file"), get("line"), get("unparsed", False),
            get("end_date_missing", False),
        )


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _parse_iso(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None
