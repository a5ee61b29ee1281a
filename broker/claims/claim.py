"""What a supersession claim is: two records, two quotes, and the key a rejection is filed under."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from broker.errors import RecallError

RELATION = "supersedes"


class ClaimRefused(RecallError):
    """A report or a review that cannot go ahead; the message says why and what to do."""


class ClaimStoreError(RecallError):
    """The claims queue or the rejection ledger cannot be read or written."""


@dataclass(frozen=True)
class RecordRef:
    """One side of a claim: the locator reported, its record's stable identity, the quote."""

    locator: str
    identity: str
    """``<source_uid>:<relative path>``: the note, whatever chunk the locator names."""
    quote: str
    sha256: str
    """Digest of the note's bytes when the claim was reported."""

    @property
    def source_id(self) -> str:
        return self.locator.split(":", 1)[0]

    @property
    def path(self) -> str:
        return self.identity.split(":", 1)[1]

    def to_json(self) -> dict[str, Any]:
        return {"locator": self.locator, "identity": self.identity, "quote": self.quote,
                "sha256": self.sha256}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RecordRef:
        return cls(str(data["locator"]), str(data["identity"]), str(data["quote"]), str(data["sha256"]))


def claim_key(successor_identity: str, superseded_identity: str) -> str:
    """The claim's key: the same two records in the same relation always give the same key."""
    text = "\n".join((RELATION, successor_identity, superseded_identity))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Claim:
    """``successor`` supersedes ``superseded``, as an agent reported it."""

    claim_id: str
    successor: RecordRef
    superseded: RecordRef
    reported_at: datetime
    reporter: str | None = None

    @property
    def key(self) -> str:
        return claim_key(self.successor.identity, self.superseded.identity)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.claim_id,
            "key": self.key,
            "relation": RELATION,
            "successor": self.successor.to_json(),
            "superseded": self.superseded.to_json(),
            "reported_at": self.reported_at.isoformat(),
        }
        if self.reporter:
            data["reporter"] = self.reporter
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Claim:
        claim = cls(
            claim_id=str(data["id"]),
            successor=RecordRef.from_json(data["successor"]),
            superseded=RecordRef.from_json(data["superseded"]),
            reported_at=datetime.fromisoformat(str(data["reported_at"])),
            reporter=str(data["reporter"]) if data.get("reporter") else None,
        )
        if data.get("relation") != RELATION or data.get("key") != claim.key:
            raise ValueError("the claim's relation or key does not match its records")
        return claim


@dataclass(frozen=True)
class Rejection:
    key: str
    claim_id: str
    reviewer: str
    reason: str
    at: datetime

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "claim_id": self.claim_id, "reviewer": self.reviewer,
                "reason": self.reason, "at": self.at.isoformat()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Rejection:
        return cls(str(data["key"]), str(data["claim_id"]), str(data["reviewer"]),
                   str(data["reason"]), datetime.fromisoformat(str(data["at"])))
