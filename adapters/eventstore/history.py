"""A pair's full history as expand content: every statement, correction and withdrawal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from adapter_sdk import DetailLevel
from adapters.eventstore.beliefs import PairLocator, format_value, sentence

CITED_MARK = "*"


@dataclass(frozen=True)
class Rendered:
    content: str
    truncated: bool


def render(
    locator: PairLocator,
    events: Sequence[Mapping[str, Any]],
    detail: DetailLevel,
    budget_bytes: int,
) -> Rendered:
    """The cited event's sentence, then (beyond summary) the history oldest first.

    ``events`` is Polign's ``memory_history`` answer, already oldest first. Lines
    are kept whole; a budget cut drops the newest lines and says how many.
    """
    cited = next(e for e in events if e.get("id") == locator.event_id)
    header = (
        f"{_describe(cited)}  [{locator.subject} / {locator.predicate}, event {locator.event_id}]"
    )
    lines = [header]
    if detail != DetailLevel.summary:
        lines.append(f"History ({len(events)} events, oldest first; {CITED_MARK} = cited):")
        lines += [_history_line(e, e.get("id") == locator.event_id) for e in events]
    return _fit(lines, budget_bytes)


def _describe(event: Mapping[str, Any]) -> str:
    subject, predicate = str(event.get("subject", "")), str(event.get("predicate", ""))
    if event.get("retraction"):
        if "value" not in event or event.get("value") is None:
            return f"withdrawn: {subject} no longer has any {predicate.replace('_', ' ')}"
        return f"withdrawn: {sentence(subject, predicate, event.get('value'))}"
    return sentence(subject, predicate, event.get("value"))


def _history_line(event: Mapping[str, Any], cited: bool) -> str:
    mark = CITED_MARK if cited else " "
    details = [str(event.get("source") or "")]
    if event.get("confidence") is not None:
        details.append(f"confidence {format_value(event['confidence'])}")
    details.append(str(event.get("id") or ""))
    return f"{mark} {event.get('observed_at', '')}  {_describe(event)}  ({', '.join(d for d in details if d)})"


def _fit(lines: list[str], budget_bytes: int) -> Rendered:
    content = "\n".join(lines)
    if budget_bytes <= 0 or len(content.encode()) <= budget_bytes:
        return Rendered(content, False)
    used = -1  # no newline before the first line
    prefix_bytes = []
    for line in lines:
        used += len(line.encode()) + 1
        prefix_bytes.append(used)
    for keep in range(len(lines) - 1, 0, -1):
        note = f"\n... {len(lines) - keep} more line(s) beyond the byte budget"
        if prefix_bytes[keep - 1] + len(note.encode()) <= budget_bytes:
            return Rendered("\n".join(lines[:keep]) + note, True)
    return Rendered(lines[0].encode()[:budget_bytes].decode("utf-8", "ignore"), True)
