"""Agent-host hooks: one pre-reply turn per prompt, and never in the prompt's way.

``recall hook claude-code`` reads Claude Code's ``UserPromptSubmit`` input
(a JSON object with ``prompt``, ``session_id``, ``cwd``, ``hook_event_name``)
and prints ``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
"additionalContext": ...}}``, the shape the host documents for adding
context. ``recall hook pre-reply`` reads a prompt as plain text or as
``{"prompt", "session_id", "suppress_lineages"}`` and prints the block itself
(``--json``: the block and the lineage roots it showed).

A hook must never fail or delay the user's prompt: every problem (bad input,
missing configuration, an error, the watchdog running out) ends with exit 0,
nothing on stdout and one line on stderr, ``recall hook: ...``. Query text is
never written there.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import orjson

from broker.api import BrokerAPI
from broker.prereply import (
    SessionLedger,
    SessionLedgerError,
    Turn,
    TurnSettings,
    shown_lineages,
    turn_request,
)

CLAUDE_EVENT = "UserPromptSubmit"
WATCHDOG_GRACE_S = 1.5
"""Beyond the latency budget: planning, fusion and stopping the adapter processes."""
MAX_INPUT_BYTES = 1 << 20


class HookInputError(Exception):
    """The host's input is not what this hook reads."""


@dataclass(frozen=True)
class HookInput:
    turn: Turn
    cwd: Path | None = None


def read_claude_code(raw: bytes) -> HookInput | None:
    """Claude Code's hook input; ``None`` for an event this hook does not handle."""
    data = _object(raw)
    event = data.get("hook_event_name", CLAUDE_EVENT)
    if event != CLAUDE_EVENT:
        return None
    return HookInput(
        Turn(prompt=_text(data, "prompt"), session_id=_optional_text(data, "session_id")),
        cwd=_directory(data.get("cwd")),
    )


def read_generic(raw: bytes) -> HookInput:
    """A plain-text prompt, or ``{"prompt", "session_id", "suppress_lineages", "cwd"}``."""
    text = raw.decode("utf-8", errors="replace")
    if not text.lstrip().startswith("{"):
        return HookInput(Turn(prompt=text.strip()))
    data = _object(raw)
    lineages = data.get("suppress_lineages") or []
    if not isinstance(lineages, list) or not all(isinstance(x, str) for x in lineages):
        raise HookInputError("suppress_lineages must be a list of lineage roots (strings)")
    return HookInput(
        Turn(
            prompt=_text(data, "prompt"),
            session_id=_optional_text(data, "session_id"),
            suppress_lineages=tuple(lineages),
        ),
        cwd=_directory(data.get("cwd")),
    )


def claude_code_output(block: str) -> str:
    return orjson.dumps(
        {"hookSpecificOutput": {"hookEventName": CLAUDE_EVENT, "additionalContext": block}}
    ).decode()


def _object(raw: bytes) -> dict[str, Any]:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise HookInputError(f"the hook input is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise HookInputError("the hook input is not a JSON object")
    return data


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise HookInputError(f"the hook input has no {key!r} string")
    return value.strip()


def _optional_text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) and value else None


def _directory(value: Any) -> Path | None:
    if isinstance(value, str) and value and os.path.isdir(value):
        return Path(value)
    return None


# ---------------------------------------------------------------------------
# One turn, guarded


@dataclass
class TurnResult:
    block: str | None
    lineages: list[str]
    outcome: str
    coverage: str


def run_turn(
    source: Callable[[Callable[[BrokerAPI], Awaitable[Any]]], Any], hook: HookInput, settings: TurnSettings,
    stderr: TextIO,
) -> TurnResult:
    """One pre-reply query, bounded by a watchdog.

    ``source(work)`` runs ``await work(broker)`` against a broker (local or
    resident); the watchdog cancels the query, which stops its adapter
    processes, if the latency budget is overrun. Problems with the session's
    ledger are told on ``stderr``.
    """
    import anyio

    from broker.render.context import context_block

    ledger = _ledger(hook.turn.session_id, stderr)
    earlier: list[str] = []
    if ledger is not None:
        try:
            earlier = ledger.shown()
        except SessionLedgerError as exc:
            warn(stderr, str(exc))
            ledger = None
    request = turn_request(hook.turn, settings, earlier)

    async def work(broker: BrokerAPI) -> Any:
        with anyio.fail_after(settings.latency_ms / 1000 + WATCHDOG_GRACE_S):
            return await broker.query(request)

    response = source(work)
    block = context_block(response)
    lineages = shown_lineages(response) if block else []
    if ledger is not None and lineages:
        try:
            ledger.record(lineages, earlier)
        except OSError as exc:
            warn(stderr, f"cannot record what this session was shown ({exc.strerror})")
    return TurnResult(block, lineages, str(response.outcome), str(response.coverage))


def _ledger(session_id: str | None, stderr: TextIO) -> SessionLedger | None:
    from broker.config.locations import xdg_base

    if session_id is None:
        return None
    problems: list[Any] = []
    state = xdg_base("XDG_STATE_HOME", os.environ, problems)
    if state is None:
        warn(stderr, f"no state folder for this session's ledger: {problems[0]}")
        return None
    return SessionLedger(state / "recall" / "hook-sessions", session_id)


def warn(stderr: TextIO, message: str) -> None:
    stderr.write(f"recall hook: {message}\n")
