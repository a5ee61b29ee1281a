"""Text forms of a task: candidate excerpts and the expand detail levels.

Levels widen: ``summary`` is one line; ``excerpt`` adds the fields and the
first few annotations; ``full`` adds every annotation and identifier;
``context`` adds the other tasks of the same project.
"""

from __future__ import annotations

from datetime import datetime

from adapter_sdk import DetailLevel
from adapters.tasks.task_record import CLOSED_STATUSES, Annotation, TaskRecord

EXCERPT_CHARS = 240
EXCERPT_ANNOTATIONS = 5
CONTEXT_SIBLINGS = 10


def day(value: datetime) -> str:
    return value.date().isoformat()


def instant(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def field_line(record: TaskRecord) -> str:
    parts = [record.status]
    if record.projects:
        parts.append("project " + ", ".join(record.projects))
    if record.contexts:
        parts.append("context " + " ".join("@" + c for c in record.contexts))
    elif record.tags:
        parts.append("tags " + " ".join("+" + t for t in record.tags))
    if record.priority:
        parts.append(f"priority {record.priority}")
    if record.due:
        parts.append(f"due {day(record.due)}")
    if record.end and record.status in CLOSED_STATUSES:
        parts.append(f"{record.status} {day(record.end)}")
    return " · ".join(parts)


def excerpt(record: TaskRecord, matched_annotation: Annotation | None) -> str:
    text = field_line(record)
    if matched_annotation is not None:
        text += " — " + matched_annotation.description
    return _clip(text, EXCERPT_CHARS)


def summary_line(record: TaskRecord) -> str:
    return f"{record.description} [{field_line(record)}]"


def detail(record: TaskRecord, level: DetailLevel, siblings: list[TaskRecord]) -> tuple[str, bool]:
    """Content for ``level`` and whether a level boundary cut it."""
    if level == DetailLevel.summary:
        return summary_line(record), False
    lines = [summary_line(record), *_field_lines(record, full=level != DetailLevel.excerpt)]
    annotations = record.annotations
    cut = level == DetailLevel.excerpt and len(annotations) > EXCERPT_ANNOTATIONS
    if cut:
        annotations = annotations[:EXCERPT_ANNOTATIONS]
    if annotations:
        lines.append("annotations:")
        lines.extend(_annotation_line(a) for a in annotations)
    if cut:
        lines.append(f"… {len(record.annotations) - EXCERPT_ANNOTATIONS} more annotations")
    if level == DetailLevel.context and siblings:
        lines.append(f"other tasks in project {record.project}:")
        lines.extend(f"  {summary_line(s)}" for s in siblings[:CONTEXT_SIBLINGS])
    return "\n".join(lines), cut


def _field_lines(record: TaskRecord, *, full: bool) -> list[str]:
    lines = [f"status: {record.status}"]
    if record.projects:
        lines.append("project: " + ", ".join(record.projects))
    if record.contexts:
        lines.append("contexts: " + ", ".join(record.contexts))
    elif record.tags:
        lines.append("tags: " + ", ".join(record.tags))
    if record.priority:
        lines.append(f"priority: {record.priority}")
    if record.due and (record.due.hour, record.due.minute, record.due.second) != (0, 0, 0):
        lines.append(f"due: {instant(record.due)}")  # a bare date is already in the first line
    if record.entry:
        lines.append(f"entered: {instant(record.entry)}")
    if record.end:
        estimated = " (no completion date on the line: the file's modification time)"
        lines.append(f"ended: {instant(record.end)}{estimated if record.end_date_missing else ''}")
    if full:
        if record.modified:
            lines.append(f"modified: {instant(record.modified)}")
        if record.urgency is not None:
            lines.append(f"urgency: {record.urgency:g}")
        lines.extend(f"{key}: {value}" for key, value in sorted(record.attributes.items()))
        lines.append(f"id: {record.record_id}")
        if record.working_id is not None:
            lines.append(f"task {record.working_id}")
        if record.unparsed:
            lines.append("parsed: no (kept as plain text)")
    return lines


def _annotation_line(annotation: Annotation) -> str:
    when = instant(annotation.entry) if annotation.entry else "undated"
    return f"  {when} {annotation.description}"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def fit_budget(content: str, budget_bytes: int) -> tuple[str, bool]:
    """Cut ``content`` to ``budget_bytes`` (0 = no budget) at a UTF-8 boundary, marked."""
    encoded = content.encode()
    if budget_bytes == 0 or len(encoded) <= budget_bytes:
        return content, False
    marker = "\n… [truncated: budget_bytes]".encode()
    kept = encoded[: max(budget_bytes - len(marker), 0)].decode("utf-8", errors="ignore")
    return kept + marker.decode(), True
