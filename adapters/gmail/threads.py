"""Threads as both modes hold them, and the pointer candidate each becomes.

A candidate is a pointer: the thread's subject, its senders and its flags.
Bodies and Gmail's snippet never appear in search results; relevance is
measured over the subject and senders the pointer shows, unless the caller
measured a body it actually holds (mbox mode). Terms are compared by stem
(``adapter_sdk.lexical.stemmed``), as the mbox index matches them.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from email.utils import getaddresses
from functools import lru_cache
from typing import Any
from urllib.parse import quote, unquote

from adapter_sdk import Candidate, ExcerptKind, MatchSignal, Sensitivity
from adapter_sdk.lexical import stemmed, tokenize
from adapter_sdk.relevance import lexical_relevance
from adapters.gmail.settings import RECORD_TYPE

MAX_SENDERS_SHOWN = 3
_ENCODED = re.compile(r"(?:[A-Za-z0-9_.~-]|%[0-9A-F]{2})+")
NO_SUBJECT = "(no subject)"
# Mail whose subject says it carries a credential is held above the source's floor.
_CREDENTIAL_SUBJECT = re.compile(
    r"verification code|security code|login code|sign[- ]?in (code|link|attempt)|one[- ]time"
    r"|\botp\b|password reset|reset (your )?password|2-step|two[- ]factor|confirm your (email|account)",
    re.IGNORECASE,
)
_SYSTEM_LABELS = {"UNREAD": "unread", "IMPORTANT": "important", "STARRED": "starred",
                  "INBOX": "inbox", "SENT": "sent"}
_CATEGORY = re.compile(r"^CATEGORY_([A-Z]+)$")


@dataclass(frozen=True, slots=True)
class MessageHeader:
    message_id: str
    sender: str
    recipients: str
    subject: str
    date: datetime | None
    labels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ThreadSummary:
    thread_id: str
    messages: tuple[MessageHeader, ...]  # oldest first

    @property
    def subject(self) -> str:
        for message in self.messages:
            if message.subject.strip():
                return " ".join(message.subject.split())
        return NO_SUBJECT

    @property
    def senders(self) -> list[str]:
        shown: list[str] = []
        for message in self.messages:
            name = display_name(message.sender)
            if name and name not in shown:
                shown.append(name)
        return shown

    @property
    def labels(self) -> list[str]:
        return list(dict.fromkeys(label for m in self.messages for label in m.labels))

    @property
    def last_date(self) -> datetime | None:
        dates = [m.date for m in self.messages if m.date is not None]
        return max(dates) if dates else None

    def as_of(self, instant: datetime) -> ThreadSummary | None:
        """The thread as it stood at ``instant``: later (and undated) messages left out."""
        kept = tuple(m for m in self.messages if m.date is not None and m.date <= instant)
        return ThreadSummary(self.thread_id, kept) if kept else None

    @property
    def pointer_text(self) -> str:
        """The text a pointer shows, and header relevance is measured over."""
        return f"{self.subject} {' '.join(self.senders[:MAX_SENDERS_SHOWN])}"


@lru_cache(maxsize=16384)
def display_name(address_header: str) -> str:
    pairs = getaddresses([address_header]) if address_header else []
    if not pairs:
        return address_header.strip()
    name, address = pairs[0]
    return (name or address or address_header).strip()


def header_relevance(summary: ThreadSummary, terms: tuple[str, ...]) -> float:
    return lexical_relevance(terms, tokenize(summary.pointer_text), key=stemmed)


THREAD_PREFIX = "thread/"


def locator(source_id: str, thread_id: str) -> str:
    """``<source>:thread/<id>``, the id percent-encoded so that any id Gmail returns round-trips."""
    return f"{source_id}:{THREAD_PREFIX}{quote(thread_id, safe='')}"


def thread_id_of(local: str) -> str | None:
    """The thread a locator's local part names, or None when it is not one :func:`locator` writes."""
    if not local.startswith(THREAD_PREFIX):
        return None
    written = local.removeprefix(THREAD_PREFIX)
    thread_id = unquote(written, errors="replace") if _ENCODED.fullmatch(written) else ""
    if not thread_id or quote(thread_id, safe="") != written:
        return None
    return thread_id


def candidate(
    summary: ThreadSummary, *, rank: int, source_id: str, terms: tuple[str, ...],
    relevance: float, exact: bool, observed_at: datetime, confirmed: bool,
) -> Candidate:
    header_stems = {stemmed(t) for t in tokenize(summary.pointer_text)}
    header_matched = bool(terms) and bool(header_stems & {stemmed(t) for t in terms})
    signals = []
    if exact:
        signals.append(MatchSignal.exact_identifier)
    if relevance > 0 and terms:
        signals.append(MatchSignal.lexical)
    last = summary.last_date
    return Candidate(
        candidate_id=summary.thread_id,
        source_record_id=summary.thread_id,
        locator=locator(source_id, summary.thread_id),
        record_type=RECORD_TYPE,
        title=summary.subject,
        excerpt=pointer_excerpt(summary),
        excerpt_kind=ExcerptKind.matched if header_matched else ExcerptKind.preview,
        local_rank=rank,
        relevance=round(relevance, 6),
        match_signals=signals or None,
        observed_at=observed_at,
        confirmed_at=observed_at if confirmed else None,
        event_time=last,
        source_revision=revision(summary),
        sensitivity=sensitivity(summary),
        metadata=metadata(summary),
        content_fingerprint="sha256:" + hashlib.sha256(
            f"gmail-thread {summary.thread_id}".encode()
        ).hexdigest()[:32],
    )


def pointer_excerpt(summary: ThreadSummary) -> str:
    senders = ", ".join(summary.senders[:MAX_SENDERS_SHOWN]) or "(unknown sender)"
    return " · ".join([senders, summary.subject, *flags(summary)])


def flags(summary: ThreadSummary) -> list[str]:
    labels = set(summary.labels)
    shown = [word for label, word in _SYSTEM_LABELS.items() if label in labels]
    count = len(summary.messages)
    shown.append(f"{count} message" + ("" if count == 1 else "s"))
    return shown


def revision(summary: ThreadSummary) -> str:
    last = summary.last_date
    return f"messages={len(summary.messages)} last={last.isoformat() if last else 'unknown'}"


def sensitivity(summary: ThreadSummary) -> Sensitivity:
    if _CREDENTIAL_SUBJECT.search(summary.subject):
        return Sensitivity.restricted
    return Sensitivity.confidential


def metadata(summary: ThreadSummary) -> dict[str, Any]:
    labels = summary.labels
    categories = [m.group(1).lower() for label in labels if (m := _CATEGORY.match(label))]
    latest = summary.messages[-1] if summary.messages else None
    return {
        "subject": summary.subject,
        "from": latest.sender if latest else "",
        "senders": summary.senders,
        "labels": labels,
        "message_count": len(summary.messages),
        "unread": "UNREAD" in labels,
        "important": "IMPORTANT" in labels,
        "sent": "SENT" in labels,
        **({"category": categories[0]} if categories else {}),
    }
