"""A person's decision on a reported claim: accept (edit the successor's front matter) or reject.

Accepting re-reads both notes and goes ahead only if neither changed since the
report (same digest, checked again just before the write), adds the
superseded note to the successor's ``supersedes:`` (:mod:`broker.claims.front_matter`),
replaces the file atomically with its mode kept, and records the decision; if
the decision cannot be recorded, the note is given its old bytes back, so an
accept either happens whole or not at all (:mod:`broker.durable`).
Rejecting files the claim's key in the rejection ledger first, then records the
decision, so a crash in between still refuses the claim at the next report.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from broker.claims.claim import Claim, ClaimRefused, Rejection
from broker.claims.front_matter import add_supersedes
from broker.claims.stale_report import claims_store, note_path
from broker.claims.store import ClaimsState, ClaimStatus, Decision
from broker.config import Config
from broker.durable import replace_file


def pending_claims(config: Config) -> list[Claim]:
    return claims_store(config).read().pending()


def accept(config: Config, claim_id: str, reviewer: str) -> Claim:
    store = claims_store(config)
    with store.locked() as state:
        claim = _pending(state, claim_id)
        successor_path = note_path(config, claim.successor)
        for record in (claim.successor, claim.superseded):
            _unchanged(note_path(config, record), record.sha256, record.locator)
        before = successor_path.stat()
        original = successor_path.read_bytes()
        edited = add_supersedes(_text(original, claim), claim.superseded.path, claim.successor.locator)
        decision = Decision(ClaimStatus.accepted, _name(reviewer), _now(),
                            f"{claim.successor.path}: supersedes += {claim.superseded.path}")
        if edited is None:
            decision = replace(decision, detail=f"{claim.successor.path} already named "
                                                f"{claim.superseded.path}; not edited")
            store.append_decision(claim.claim_id, decision)
            return claim
        _unchanged(successor_path, claim.successor.sha256, claim.successor.locator)
        _still(successor_path, before)
        replace_file(successor_path, edited.encode("utf-8"), what="note")
        try:
            store.append_decision(claim.claim_id, decision)
        except BaseException:
            replace_file(successor_path, original, what="note")  # the accept did not happen
            raise
    return claim


def reject(config: Config, claim_id: str, reviewer: str, reason: str) -> Claim:
    if not reason.strip():
        raise ClaimRefused("a rejection needs a --reason, kept in the ledger beside the claim")
    store = claims_store(config)
    with store.locked() as state:
        claim = _pending(state, claim_id)
        at = _now()
        if claim.key not in state.rejections:
            store.append_rejection(Rejection(claim.key, claim.claim_id, _name(reviewer),
                                             " ".join(reason.split())[:500], at))
        store.append_decision(claim.claim_id, Decision(ClaimStatus.rejected, _name(reviewer), at))
    return claim


def _pending(state: ClaimsState, claim_id: str) -> Claim:
    claim = state.find(claim_id)
    status = state.status(claim.claim_id)
    if status is not ClaimStatus.pending:
        decision = state.decisions[claim.claim_id]
        raise ClaimRefused(
            f"claim {claim.claim_id} was already {status} by {decision.reviewer} on "
            f"{decision.at.date().isoformat()}"
        )
    return claim


def _unchanged(path: Path, digest: str, locator: str) -> None:
    if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
        raise ClaimRefused(
            f"{locator} changed since the claim was reported; nothing was edited. Reject the "
            "claim, or have it reported again against the note as it is now"
        )


def _text(original: bytes, claim: Claim) -> str:
    try:
        return original.decode("utf-8")
    except UnicodeDecodeError:
        raise ClaimRefused(f"{claim.successor.locator} is not valid UTF-8; nothing was edited") from None


def _still(path: Path, before: os.stat_result) -> None:
    """Refuse when the file moved on since ``before`` (an editor saved it meanwhile)."""
    now = path.stat()
    if (now.st_mtime_ns, now.st_size, now.st_ino) != (before.st_mtime_ns, before.st_size, before.st_ino):
        raise ClaimRefused(f"{path} changed while it was being edited; nothing was written")


def _name(reviewer: str) -> str:
    name = " ".join(reviewer.split())[:100]
    if not name:
        raise ClaimRefused("name the person deciding: --reviewer NAME")
    return name


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)
