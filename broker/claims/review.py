"""A person's decision on a reported claim: accept (edit the successor's front matter) or reject.

Accepting re-reads both notes and goes ahead only if neither changed since the
report (same digest, checked again just before the write), adds the
superseded note to the successor's ``supersedes:`` (:mod:`broker.claims.front_matter`),
replaces the file atomically with its mode kept, and records the decision.
Rejecting files the claim's key in the rejection ledger first, then records the
decision, so a crash in between still refuses the claim at the next report.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from broker.claims.front_matter import add_supersedes
from broker.claims.model import Claim, ClaimRefused, Rejection
from broker.claims.report import claims_store, note_path
from broker.claims.store import ClaimsState, ClaimStatus, Decision
from broker.config import Config


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
        text = successor_path.read_bytes().decode("utf-8")
        edited = add_supersedes(text, claim.superseded.path, claim.successor.locator)
        detail = f"{claim.successor.path}: supersedes += {claim.superseded.path}"
        if edited is None:
            detail = f"{claim.successor.path} already named {claim.superseded.path}; not edited"
        else:
            _unchanged(successor_path, claim.successor.sha256, claim.successor.locator)
            _replace(successor_path, edited.encode("utf-8"), before)
        store.append_decision(claim.claim_id, Decision(ClaimStatus.accepted, _name(reviewer), _now(), detail))
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


def _replace(path: Path, data: bytes, before: os.stat_result) -> None:
    """Write ``data`` over ``path`` atomically, unless the file moved on since ``before``."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, before.st_mode & 0o7777)
        now = path.stat()
        if (now.st_mtime_ns, now.st_size, now.st_ino) != (before.st_mtime_ns, before.st_size, before.st_ino):
            raise ClaimRefused(f"{path} changed while it was being edited; nothing was written")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _name(reviewer: str) -> str:
    name = " ".join(reviewer.split())[:100]
    if not name:
        raise ClaimRefused("name the person deciding: --reviewer NAME")
    return name


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)
