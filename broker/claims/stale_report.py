"""Reporting that one note supersedes another: checked, then queued, never applied.

A report names two locators and quotes each verbatim. It is queued only when
both records are notes of one configured notes source (the only place a
person's acceptance can be written down: the successor's front matter), both
locators expand under the current configuration and profile, each quote
occurs verbatim in what its locator expands to, the claim is not already in
effect or pending, and its key was never rejected. Anything else is refused
with the reason.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from broker.api import BrokerAPI
from broker.claims.claim import Claim, ClaimRefused, RecordRef, claim_key
from broker.claims.store import ClaimStore
from broker.config import Config, SourceConfig
from broker.contracts import DetailLevel, ExpandRequest
from broker.errors import ExpandError

MIN_QUOTE_CHARS = 12
"""A quote must say something: a few words, not a letter that occurs anywhere."""
MAX_QUOTE_CHARS = 2000
NOTES_ADAPTER = "notes"

WHY_NOT_NOTES = {
    "eventstore": (
        "is a Polign Recall store: a belief is corrected in Polign itself, whose events keep "
        "the history; recall records a reported supersession only in a note's front matter"
    ),
    "tasks": (
        "is a task list: a task has no front matter to carry 'supersedes'; complete or delete "
        "the task instead"
    ),
    "gmail": "is a mailbox, which recall never writes to",
}


@dataclass(frozen=True)
class Report:
    successor_locator: str
    successor_quote: str
    superseded_locator: str
    superseded_quote: str
    reporter: str | None = None


def claims_store(config: Config) -> ClaimStore:
    return ClaimStore(config.paths.state_root / "claims")


async def report_stale(config: Config, broker: BrokerAPI, report: Report, profile: str = "") -> Claim:
    """Check ``report`` and queue it; ``broker`` expands locators (``await broker.expand(...)``)."""
    successor = await _side(config, broker, "successor", report.successor_locator,
                            report.successor_quote, profile)
    superseded = await _side(config, broker, "superseded record", report.superseded_locator,
                             report.superseded_quote, profile)
    if successor.source_id != superseded.source_id:
        raise ClaimRefused(
            f"{successor.locator} and {superseded.locator} are in different sources; a note can "
            "only supersede a note of its own folder"
        )
    if successor.identity == superseded.identity:
        raise ClaimRefused(f"{successor.locator} and {superseded.locator} are the same note")
    key = claim_key(successor.identity, superseded.identity)
    from broker.claims.front_matter import add_supersedes

    text = note_path(config, successor).read_text(encoding="utf-8")
    if add_supersedes(text, superseded.path, successor.locator) is None:
        raise ClaimRefused(f"{successor.locator} already supersedes {superseded.path}; nothing to report")
    store = claims_store(config)
    with store.locked() as state:
        rejected = state.rejections.get(key)
        if rejected is not None:
            raise ClaimRefused(
                f"this claim was rejected by {rejected.reviewer} on {rejected.at.date().isoformat()} "
                f"({rejected.reason}); a rejected claim is refused at every report"
            )
        pending = next((c for c in state.pending() if c.key == key), None)
        if pending is not None:
            raise ClaimRefused(f"this claim is already pending review as {pending.claim_id}")
        claim = Claim(
            claim_id=secrets.token_hex(5),
            successor=successor,
            superseded=superseded,
            reported_at=datetime.now(UTC).replace(microsecond=0),
            reporter=_one_line(report.reporter, 100) if report.reporter else None,
        )
        store.append_report(claim)
    return claim


async def _side(
    config: Config, broker: BrokerAPI, role: str, locator: str, quote: str, profile: str
) -> RecordRef:
    source_id, _, local = locator.partition(":")
    source = config.source(source_id)
    if source is None or not local:
        raise ClaimRefused(f"the {role} {locator!r} names no configured source")
    _require_notes(config, source, locator)
    if len(quote.strip()) < MIN_QUOTE_CHARS or len(quote) > MAX_QUOTE_CHARS:
        raise ClaimRefused(
            f"the quote from the {role} must be {MIN_QUOTE_CHARS} to {MAX_QUOTE_CHARS} characters, "
            "copied verbatim from what its locator expands to"
        )
    try:
        expanded = await broker.expand(
            ExpandRequest(locator=locator, detail=DetailLevel.full, profile=profile)
        )
    except ExpandError as exc:
        raise ClaimRefused(f"the {role} {locator} does not expand: {exc}") from None
    if quote not in expanded.content:
        raise ClaimRefused(
            f"the quote from the {role} does not occur verbatim in what {locator} expands to; "
            f"copy it exactly from 'recall expand {locator} --detail full'"
        )
    record = RecordRef(locator, f"{source.source_uid}:{local.split('#', 1)[0]}", quote, "")
    digest = hashlib.sha256(note_path(config, record).read_bytes()).hexdigest()
    return RecordRef(locator, record.identity, quote, digest)


def _require_notes(config: Config, source: SourceConfig, locator: str) -> None:
    from broker.config.builtins import canonical_adapter_name

    kind = canonical_adapter_name(source.adapter)
    if kind == NOTES_ADAPTER:
        return
    why = WHY_NOT_NOTES.get(kind, f"is a {source.adapter} source, not a notes folder")
    raise ClaimRefused(f"{locator}: source {source.source_id} {why}")


def note_path(config: Config, record: RecordRef) -> Path:
    """The note's file, which must lie inside its source's folder."""
    source = config.source(record.source_id)
    if source is None or not source.location:
        raise ClaimRefused(f"source {record.source_id} is no longer configured with a folder")
    folder = Path(source.location).expanduser().resolve()
    path = (folder / record.path).resolve()
    if not path.is_relative_to(folder) or not path.is_file():
        raise ClaimRefused(f"{record.locator} does not name a file inside {folder}")
    return path


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat[:limit]
