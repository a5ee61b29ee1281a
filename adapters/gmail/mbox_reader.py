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
from email.header import decode_header, make_header
from email.message import Message
from email.utils import parsedate_to_datetime
from pathlib import Path

from adapters.gmail.bodies import message_text
from adapters.gmail.threads import MessageHeader

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
    """One message's headers, the thread it was placed in, where it stands in the
    export and the text of its body that is indexed."""

    offset: int
    length: int
    thread_id: str
    header: MessageHeader
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
        subject = _header(message, "Subject")
        sender = _header(message, "From")
        recipients = _header(message, "To")
        message_id = _header(message, "Message-ID").strip()
        thread_header = _header(message, "X-GM-THRID").strip()
        labels = _labels(_header(message, "X-Gmail-Labels"))
        date = _date(message.get("Date"))
        references = _header(message, "References")
        reply_to = _header(message, "In-Reply-To")
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
        header=MessageHeader(
            message_id=message_id, sender=sender, recipients=recipients, subject=subject,
            date=date, labels=labels,
        ),
        body=body,
    )


def parse_bytes(data: bytes) -> Message:
    # compat32: the default policy's header objects cost milliseconds per message
    return email.message_from_bytes(data, policy=email.policy.compat32)


def _header(message: Message, name: str) -> str:
    """A header's value with RFC 2047 encoded words decoded, on one line."""
    value = message.get(name)
    if value is None:
        return ""
    try:
        text = str(make_header(decode_header(str(value))))
    except (ValueError, LookupError, UnicodeError):
        text = str(value)
    return " ".join(text.split())


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
