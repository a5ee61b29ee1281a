"""Stream an mbox file message by message, with each message's byte offset.

Messages are split on lines starting with ``From `` (body lines that do are
escaped as ``>From `` by mbox writers, Google Takeout included). Only one
message is held in memory at a time, and reading can start at any offset
that begins a message, which is what lets an index catch up with appended
mail without re-reading the beginning.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import parsedate_to_datetime
from pathlib import Path

from adapters.gmail.bodies import message_text

SEPARATOR = b"From "
MAX_INDEXED_BODY_CHARS = 32_000
# Takeout writes label names; the API's system label ids are what the rest of the adapter uses.
_SYSTEM_LABELS = {"inbox": "INBOX", "unread": "UNREAD", "important": "IMPORTANT",
                  "starred": "STARRED", "sent": "SENT", "spam": "SPAM", "trash": "TRASH",
                  "draft": "DRAFT", "chat": "CHAT"}


@dataclass(frozen=True, slots=True)
class RawMessage:
    offset: int
    length: int
    data: bytes  # the message without its ``From `` separator line


@dataclass(frozen=True, slots=True)
class ParsedMessage:
    offset: int
    length: int
    thread_id: str
    message_id: str
    sender: str
    recipients: str
    subject: str
    date: datetime | None
    labels: tuple[str, ...]
    body: str


class MalformedMessage(Exception):
    pass


def read_messages(path: Path, start: int = 0) -> Iterator[RawMessage]:
    """Messages from ``start`` (which must begin a message, or be the end) to the end."""
    with path.open("rb") as handle:
        handle.seek(start)
        position = start
        first: int | None = None
        lines: list[bytes] = []
        for line in handle:
            if line.startswith(SEPARATOR):
                if first is not None:
                    yield RawMessage(first, position - first, b"".join(lines))
                elif position > start:  # text before the first separator: not a message
                    yield RawMessage(start, position - start, b"")
                first, lines = position, []
            elif first is not None:
                lines.append(line)
            position += len(line)
        if first is not None:
            yield RawMessage(first, position - first, b"".join(lines))
        elif position > start:
            yield RawMessage(start, position - start, b"")


def read_at(path: Path, offset: int, length: int) -> bytes:
    with path.open("rb") as handle:
        handle.seek(offset)
        data = handle.read(length)
    if not data.startswith(SEPARATOR):
        raise MalformedMessage(f"no message starts at byte {offset}")
    return data[data.find(b"\n") + 1:] if b"\n" in data else b""


def parse(raw: RawMessage) -> ParsedMessage:
    """Headers and text of one message; raises MalformedMessage when it has no headers."""
    if not raw.data.strip():
        raise MalformedMessage("no message text after the separator")
    message = parse_bytes(raw.data)
    try:
        keys = message.keys()
        if not keys or message.defects and not any(
            k.lower() in ("from", "date", "subject", "message-id") for k in keys
        ):
            raise MalformedMessage("no header fields")
        subject = str(message.get("Subject", "") or "")
        sender = str(message.get("From", "") or "")
        recipients = str(message.get("To", "") or "")
        message_id = str(message.get("Message-ID", "") or "").strip()
        thread_header = str(message.get("X-GM-THRID", "") or "").strip()
        labels = _labels(str(message.get("X-Gmail-Labels", "") or ""))
        date = _date(message.get("Date"))
        references = str(message.get("References", "") or "")
        reply_to = str(message.get("In-Reply-To", "") or "")
    except MalformedMessage:
        raise
    except Exception as exc:  # the email package raises many types on broken headers
        raise MalformedMessage(f"unreadable header ({type(exc).__name__})") from None
    try:
        body = message_text(message)[:MAX_INDEXED_BODY_CHARS]
    except Exception as exc:
        raise MalformedMessage(f"unreadable body ({type(exc).__name__})") from None
    return ParsedMessage(
        offset=raw.offset, length=raw.length,
        thread_id=_thread_id(thread_header, references, reply_to, message_id, raw.offset),
        message_id=message_id, sender=sender, recipients=recipients, subject=subject,
        date=date, labels=labels, body=body,
    )


def parse_bytes(data: bytes) -> EmailMessage:
    message = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    return message


def _labels(header: str) -> tuple[str, ...]:
    labels = []
    for name in (part.strip().strip('"') for part in header.split(",")):
        if not name or name.lower() == "opened":  # Takeout's "read": the absence of Unread
            continue
        if name.lower().startswith("category "):
            labels.append("CATEGORY_" + name[len("category "):].strip().upper())
        else:
            labels.append(_SYSTEM_LABELS.get(name.lower(), name))
    return tuple(dict.fromkeys(labels))


def _date(value: object) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)


def _thread_id(thread_header: str, references: str, reply_to: str, message_id: str,
               offset: int) -> str:
    """Gmail's thread id in the API's hex spelling; without X-GM-THRID, the reference root."""
    if thread_header.isdigit():
        return format(int(thread_header), "x")
    root = (references.split() or reply_to.split() or [message_id or f"offset:{offset}"])[0]
    return "ref" + hashlib.sha256(root.encode()).hexdigest()[:13]
