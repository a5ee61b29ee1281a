"""What ``recall/expand`` shows of a thread, level by level, within a byte budget.

    summary  the header block (subject, participants, dates, labels, count)
    excerpt  header block + the latest message, clipped to EXCERPT_BYTES
    full     header block + every message, oldest first
    context  as full
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from adapter_sdk import DetailLevel
from adapters.gmail.bodies import safe_text
from adapters.gmail.threads import MessageHeader, ThreadSummary

EXCERPT_BYTES = 600
BUDGET_BOUNDARY = "budget_bytes"
EXCERPT_BOUNDARY = "excerpt"


@dataclass(frozen=True, slots=True)
class Rendered:
    content: str
    truncated: bool
    boundary: str | None


def header_block(summary: ThreadSummary) -> str:
    latest = summary.messages[-1] if summary.messages else None
    last = summary.last_date
    lines = [
        f"Subject: {summary.subject}",
        f"From: {', '.join(summary.senders) or '(unknown sender)'}",
    ]
    if latest is not None and latest.recipients:
        lines.append(f"To: {' '.join(latest.recipients.split())}")
    lines.append(f"Date: {last.isoformat() if last else 'unknown'}")
    if summary.labels:
        lines.append(f"Labels: {', '.join(summary.labels)}")
    lines.append(f"Messages in thread: {len(summary.messages)}")
    return safe_text("\n".join(lines))


def render(
    summary: ThreadSummary, bodies: Sequence[str], detail: DetailLevel, budget_bytes: int
) -> Rendered:
    """``bodies`` holds each message's text, aligned with ``summary.messages``."""
    content = header_block(summary)
    level_cut = False
    if detail == DetailLevel.excerpt and summary.messages:
        body, level_cut = clip(safe_text(bodies[-1]), EXCERPT_BYTES)
        content += "\n\n" + _message_block(summary.messages[-1], body + (" …" if level_cut else ""))
    elif detail in (DetailLevel.full, DetailLevel.context):
        for message, body in zip(summary.messages, bodies, strict=True):
            content += "\n\n" + _message_block(message, safe_text(body))
    budget_cut = False
    if budget_bytes > 0:
        content, budget_cut = clip(content, budget_bytes)
    boundary = BUDGET_BOUNDARY if budget_cut else (EXCERPT_BOUNDARY if level_cut else None)
    return Rendered(content, budget_cut or level_cut, boundary)


def _message_block(message: MessageHeader, body: str) -> str:
    date = message.date.isoformat() if message.date else "unknown date"
    heading = safe_text(f"--- {' '.join(message.sender.split())} · {date}")
    return f"{heading}\n{body or '(no text body)'}"


def clip(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to at most ``limit`` UTF-8 bytes, never inside a character."""
    encoded = text.encode("utf-8")
    if len(encoded) <= limit:
        return text, False
    return encoded[:limit].decode("utf-8", errors="ignore").rstrip(), True
