"""The Sidecar plugin protocol's own terms: versions, limits, refusals and framing.

A request is one JSON object (at most ``MAX_REQUEST_BYTES``); a response is one
JSON object on one line, carrying the protocol identifier the request used. A
refusal is a typed error, ``{code, message, retryable, setupHint?}``.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from broker.errors import RecallError
from broker.sanitize import bound
from broker.surfaces.error_codes import error_code

FROZEN = "sidecar.plugin/v1"
DRAFT = "sidecar.plugin/v1-draft"
PROTOCOLS = (FROZEN, DRAFT)
MAX_REQUEST_BYTES = 1 << 20
MAX_DEADLINE_MS = 600_000
EXPAND_BUDGET = 64 * 1024
RESULTS, SOURCES = "results", "sources"
ANY = "any"
FILTERS = ("profile", "source", "type", "since")
MAX_CHOICES, MAX_CHOICE_ID = 64, 32
MAX_NOTICES, MAX_COVERAGE_ROWS = 4, 64
REFRESH_ACTION = "refresh-source"
SOURCES_EVERY_SECONDS = 120
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class Refusal(Exception):
    """A typed protocol error: ``{code, message, retryable, setupHint?}``."""

    def __init__(self, code: str, message: str, *, retryable: bool = False, hint: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.retryable, self.hint = code, message, retryable, hint

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": line(self.message, 400),
                                 "retryable": self.retryable}
        if self.hint:
            error["setupHint"] = line(self.hint, 200)
        return {"error": error}


def invalid(message: str) -> Refusal:
    return Refusal("invalid_request", message)


def refusal(error: RecallError, doing: str) -> Refusal:
    """``error`` under the code every surface reports it with; a bad request is only its message."""
    code = error_code(error)
    message = str(error) if code.sidecar == "invalid_request" else f"{doing}: {error}"
    return Refusal(code.sidecar, message, retryable=code.retryable)


def text_param(params: dict[str, Any], name: str) -> str:
    """A text parameter; absent or null reads as empty, anything but text is refused."""
    value = params.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise invalid(f"{name} must be a string, not {type(value).__name__}")
    return value


def integer_param(params: dict[str, Any], name: str) -> int:
    """An integer parameter; absent or null reads as 0 (the default), anything but an integer is refused."""
    value = params.get(name)
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        return int(value)  # a number too large for a 64-bit integer arrives as a float
    if not isinstance(value, int) or isinstance(value, bool):
        raise invalid(f"{name} must be an integer, not {type(value).__name__}")
    return value


def line(text: str | None, limit: int) -> str:
    """One line, no control characters, at most ``limit`` characters."""
    return bound(_CONTROLS.sub(" ", text or "").strip(), limit)


def decode(raw: bytes) -> dict[str, Any]:
    if len(raw) > MAX_REQUEST_BYTES:
        raise invalid(f"request is larger than {MAX_REQUEST_BYTES} bytes")
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise invalid(f"the request is not one JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise invalid("the request is not one JSON object")
    return value


def deadline_budget(deadline_ms: Any) -> tuple[int, float | None]:
    """(recall latency budget in ms, hard timeout in seconds) from the host's deadline."""
    if not isinstance(deadline_ms, int) or isinstance(deadline_ms, bool) or deadline_ms <= 0:
        return 0, None
    deadline_ms = min(deadline_ms, MAX_DEADLINE_MS)
    reserve = min(max(deadline_ms // 10, 100), 1000)
    if reserve >= deadline_ms:
        reserve = deadline_ms // 2
    budget = max(deadline_ms - reserve, 1)
    return budget, (budget + reserve / 2) / 1000


def encode(response: dict[str, Any]) -> bytes:
    return orjson.dumps(response) + b"\n"
