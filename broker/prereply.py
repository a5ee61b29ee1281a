"""One pre-reply turn: the evidence an agent host fetches before the model answers a prompt.

A turn is one ``pre_reply`` query through the application layer, exactly what
MCP's ``recall_query`` does in that mode: a small response budget, a short
latency budget, verdicts honoured, and the lineage roots the host already
showed withheld (``lineage_suppressed``) so the same evidence is not put in
front of the model twice.

A host that cannot remember what it showed names its session instead; the
:class:`SessionLedger` keeps, per session, the lineage roots of the evidence
injected so far (never the prompt, never the evidence), in the state folder.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import orjson

from broker.contracts import (
    SHOWN_VERDICTS,
    Budget,
    Mode,
    QueryRequest,
    QueryResponse,
    Result,
    Surface,
)

DEFAULT_TURN_LATENCY_MS = 2000
"""Well under an agent host's hook timeout (Claude Code allows 60 s)."""
DEFAULT_TURN_TOKENS = 800
DEFAULT_TURN_LIMIT = 5
SESSION_SCHEMA = 1
SESSION_TTL_S = 7 * 24 * 3600
"""A session ledger untouched this long is deleted the next time any session records."""
SESSION_MAX_LINEAGES = 1000


@dataclass(frozen=True)
class TurnSettings:
    profile: str = ""
    latency_ms: int = DEFAULT_TURN_LATENCY_MS
    response_tokens: int = DEFAULT_TURN_TOKENS
    limit: int = DEFAULT_TURN_LIMIT
    valid_at: datetime | None = None
    """Judge verdicts at this instant (valid time) instead of now."""


@dataclass(frozen=True)
class Turn:
    prompt: str
    session_id: str | None = None
    suppress_lineages: tuple[str, ...] = field(default_factory=tuple)


def turn_request(turn: Turn, settings: TurnSettings, already_shown: Iterable[str] = ()) -> QueryRequest:
    """The ``pre_reply`` query for one turn."""
    suppressed = list(dict.fromkeys([*turn.suppress_lineages, *already_shown]))
    return QueryRequest(
        query=turn.prompt,
        profile=settings.profile,
        mode=Mode.pre_reply,
        budget=Budget(
            latency_ms=settings.latency_ms,
            response_tokens=settings.response_tokens,
            surface=Surface.tool,
        ),
        limit=settings.limit,
        valid_at=settings.valid_at,
        suppress_lineages=suppressed or None,
    )


def injectable(response: QueryResponse) -> list[Result]:
    """Results fit to put in front of a model: current evidence, and contested records marked."""
    return [r for r in response.results if r.verdict is None or r.verdict in SHOWN_VERDICTS]


def shown_lineages(response: QueryResponse) -> list[str]:
    """Lineage roots of the injectable results: what the host must not be shown again."""
    roots: list[str] = []
    for result in injectable(response):
        roots += [m.lineage_root for m in result.members] or [result.explanation.lineage_root]
    return list(dict.fromkeys(roots))


class SessionLedgerError(Exception):
    """A session ledger exists but cannot be read; the turn goes on without it."""


class SessionLedger:
    """The lineage roots already injected in one host session, one small file per session."""

    def __init__(self, folder: Path, session_id: str) -> None:
        self.folder = folder
        digest = hashlib.sha256(session_id.encode()).hexdigest()[:32]
        self.path = folder / f"{digest}.json"

    def shown(self) -> list[str]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise SessionLedgerError(f"cannot read session ledger {self.path}: {exc.strerror}") from None
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise SessionLedgerError(f"session ledger {self.path} is not JSON; delete it") from None
        if not isinstance(data, dict) or data.get("schema") != SESSION_SCHEMA:
            raise SessionLedgerError(f"session ledger {self.path} has an unknown shape; delete it")
        lineages = data.get("lineages")
        if not isinstance(lineages, list):
            raise SessionLedgerError(f"session ledger {self.path} has an unknown shape; delete it")
        return [root for root in lineages if isinstance(root, str)]

    def record(self, roots: Iterable[str], earlier: Iterable[str]) -> None:
        """Add ``roots`` to what ``earlier`` read; the oldest are forgotten past the cap."""
        merged = list(dict.fromkeys([*earlier, *roots]))[-SESSION_MAX_LINEAGES:]
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = self.path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_bytes(orjson.dumps({"schema": SESSION_SCHEMA, "lineages": merged}))
        os.chmod(temporary, 0o600)
        os.replace(temporary, self.path)
        self._forget_stale_sessions()

    def _forget_stale_sessions(self) -> None:
        cutoff = time.time() - SESSION_TTL_S
        for entry in self.folder.glob("*.json"):
            try:
                if entry.stat().st_mtime < cutoff:
                    entry.unlink()
            except OSError:
                continue
