"""The claims queue and the rejection ledger: append-only JSON-lines files with a schema version.

Both live in ``<state folder>/claims/``. Each file opens with a header line,
``{"schema": 1, "kind": ...}``, and then only ever grows by whole lines:

    queue.jsonl        {"event": "reported", "claim": {...}}
                       {"event": "accepted" | "rejected", "id", "reviewer", "at", ...}
    rejections.jsonl   {"key", "claim_id", "reviewer", "reason", "at"}

A claim's state is the fold of its events. Every change happens under an
exclusive lock on ``claims/.lock`` (read, check, append), so two reports or
reviews at once cannot interleave. A file that does not parse, has a torn
last line, names an unknown schema or an event for an unknown claim is
reported as corrupted with its line number, and nothing more is written to it:
it is never silently emptied or rewritten. An append the disk refuses in part
is undone (:mod:`broker.durable`), so a full disk never leaves half a line.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson

from broker.claims.claim import Claim, ClaimRefused, ClaimStoreError, Rejection

SCHEMA = 1
QUEUE_KIND = "recall.claims.queue"
LEDGER_KIND = "recall.claims.rejections"
QUEUE_WHAT = "claims queue"
LEDGER_WHAT = "rejection ledger"


class ClaimStatus(StrEnum):
    pending = "pending"
    accepted = "accepted"
    rejected = "rejected"


@dataclass(frozen=True)
class Decision:
    status: ClaimStatus
    reviewer: str
    at: datetime
    detail: str = ""


@dataclass
class ClaimsState:
    claims: dict[str, Claim] = field(default_factory=dict)
    """Every claim ever reported, by id, in report order."""
    decisions: dict[str, Decision] = field(default_factory=dict)
    rejections: dict[str, Rejection] = field(default_factory=dict)
    """By claim key."""

    def status(self, claim_id: str) -> ClaimStatus:
        decision = self.decisions.get(claim_id)
        return decision.status if decision else ClaimStatus.pending

    def pending(self) -> list[Claim]:
        return [c for c in self.claims.values() if self.status(c.claim_id) is ClaimStatus.pending]

    def find(self, wanted: str) -> Claim:
        """A claim by id or by a unique prefix of at least four characters."""
        if wanted in self.claims:
            return self.claims[wanted]
        matches = [c for i, c in self.claims.items() if len(wanted) >= 4 and i.startswith(wanted)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise ClaimRefused(f"claim id {wanted!r} is ambiguous; give more of it")
        raise ClaimRefused(f"no claim {wanted!r}; 'recall review list' shows the pending claims")


class ClaimStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.queue_path = folder / "queue.jsonl"
        self.ledger_path = folder / "rejections.jsonl"

    @contextmanager
    def locked(self) -> Iterator[ClaimsState]:
        """The current state, held under the lock until the block ends."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle = os.open(self.folder / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise ClaimStoreError(f"cannot open the claims folder {self.folder}: {exc.strerror}") from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield self.read()
        finally:
            os.close(handle)  # closing releases the lock

    def read(self) -> ClaimsState:
        state = ClaimsState()
        for number, entry in _entries(self.queue_path, QUEUE_KIND):
            _fold(state, entry, self.queue_path, number)
        for number, entry in _entries(self.ledger_path, LEDGER_KIND):
            try:
                rejection = Rejection.from_json(entry)
            except (KeyError, TypeError, ValueError) as exc:
                raise _corrupted(self.ledger_path, number, f"not a rejection ({exc})") from None
            state.rejections[rejection.key] = rejection
        return state

    def append_report(self, claim: Claim) -> None:
        _append(self.queue_path, QUEUE_KIND, {"event": "reported", "claim": claim.to_json()}, QUEUE_WHAT)

    def append_decision(self, claim_id: str, decision: Decision) -> None:
        entry: dict[str, Any] = {"event": str(decision.status), "id": claim_id,
                                 "reviewer": decision.reviewer, "at": decision.at.isoformat()}
        if decision.detail:
            entry["detail"] = decision.detail
        _append(self.queue_path, QUEUE_KIND, entry, QUEUE_WHAT)

    def append_rejection(self, rejection: Rejection) -> None:
        _append(self.ledger_path, LEDGER_KIND, rejection.to_json(), LEDGER_WHAT)


def _fold(state: ClaimsState, entry: dict[str, Any], path: Path, number: int) -> None:
    event = entry.get("event")
    try:
        if event == "reported":
            claim = Claim.from_json(entry["claim"])
            if claim.claim_id in state.claims:
                raise ValueError(f"claim {claim.claim_id} is reported twice")
            state.claims[claim.claim_id] = claim
            return
        if event in (ClaimStatus.accepted, ClaimStatus.rejected):
            claim_id = str(entry["id"])
            if claim_id not in state.claims:
                raise ValueError(f"a decision on unknown claim {claim_id}")
            if claim_id in state.decisions:
                raise ValueError(f"claim {claim_id} is decided twice")
            state.decisions[claim_id] = Decision(
                ClaimStatus(event), str(entry["reviewer"]), datetime.fromisoformat(str(entry["at"])),
                str(entry.get("detail") or ""),
            )
            return
    except (KeyError, TypeError, ValueError) as exc:
        raise _corrupted(path, number, str(exc)) from None
    raise _corrupted(path, number, f"unknown event {event!r}")


def _entries(path: Path, kind: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The entries after the header, with their line numbers; nothing for a missing file."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ClaimStoreError(f"cannot read {path}: {exc.strerror}") from None
    if raw and not raw.endswith(b"\n"):
        raise _corrupted(path, raw.count(b"\n") + 1, "the last line is incomplete")
    lines = raw.split(b"\n")[:-1]
    if not lines:
        raise _corrupted(path, 1, "the file is empty, not even a header")
    for number, line in enumerate(lines, 1):
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise _corrupted(path, number, "not JSON") from None
        if not isinstance(entry, dict):
            raise _corrupted(path, number, "not a JSON object")
        if number == 1:
            _check_header(path, entry, kind)
            continue
        yield number, entry


def _check_header(path: Path, header: dict[str, Any], kind: str) -> None:
    if header.get("kind") != kind:
        raise _corrupted(path, 1, f"the header does not say kind {kind!r}")
    schema = header.get("schema")
    if schema != SCHEMA:
        raise ClaimStoreError(
            f"{path} has schema {schema!r}; this recall reads schema {SCHEMA}. "
            "Use the recall that wrote it; nothing was changed"
        )


def _append(path: Path, kind: str, entry: dict[str, Any], what: str) -> None:
    """Append one line, writing the header first if the file is new. Callers hold the lock.

    All or nothing (:func:`broker.durable.append`): a full disk leaves the file as it was.
    """
    from broker.durable import append

    lines = b""
    if not path.exists():
        lines = orjson.dumps({"schema": SCHEMA, "kind": kind}) + b"\n"
    lines += orjson.dumps(entry) + b"\n"
    append(path, lines, what=what)


def _corrupted(path: Path, number: int, why: str) -> ClaimStoreError:
    return ClaimStoreError(
        f"{path} is corrupted at line {number} ({why}); nothing was read from it or written to it. "
        "Repair or move the file aside; its history is not discarded"
    )
