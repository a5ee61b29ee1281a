"""The gmail source's configuration: which mode (API or Takeout mbox) and its settings."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapter_sdk import ErrorCode, InitializeParams, RpcError, trusted_only

RECORD_TYPE = "message"
API = "api"
MBOX = "mbox"
MODES = ("auto", API, MBOX)

READONLY_SCOPE = "https://www.googleapis.com/auth/gmail.readonly"
DEFAULT_API_BASE = "https://gmail.googleapis.com"
DEFAULT_QUERY_PREFIX = "-in:spam -in:trash"
DEFAULT_MAX_CANDIDATES = 25
DEFAULT_FETCH_CONCURRENCY = 8
DEFAULT_REQUEST_TIMEOUT_MS = 10_000
AUTH_COMMAND = "recall-gmail auth --client-secrets FILE"

SETTINGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "mode": {
            "enum": list(MODES), "default": "auto",
            "description": "api = the Gmail REST API; mbox = a Google Takeout .mbox file; "
            "auto = mbox when location names a .mbox file",
        },
        # where the credentials are read from and sent to: the user's choice alone
        "token_file": trusted_only({
            "type": "string", "minLength": 1,
            "description": "OAuth authorized-user token file written by "
            f"`{AUTH_COMMAND}` (default $XDG_CONFIG_HOME/recall/gmail-token.json)",
        }),
        "token_uri": trusted_only({
            "type": "string", "minLength": 1,
            "description": "OAuth token endpoint; overrides the token file's own token_uri",
        }),
        "api_base": trusted_only(
            {"type": "string", "minLength": 1, "default": DEFAULT_API_BASE}
        ),
        "query_prefix": {
            "type": "string", "default": DEFAULT_QUERY_PREFIX,
            "description": "Gmail search terms put before every question",
        },
        "max_candidates": {"type": "integer", "minimum": 1, "maximum": 500,
                           "default": DEFAULT_MAX_CANDIDATES},
        "fetch_concurrency": {"type": "integer", "minimum": 1, "maximum": 32,
                              "default": DEFAULT_FETCH_CONCURRENCY},
        "request_timeout_ms": {"type": "integer", "minimum": 100,
                               "default": DEFAULT_REQUEST_TIMEOUT_MS},
    },
}
KNOWN_SETTINGS = tuple(SETTINGS_SCHEMA["properties"])
_API_ONLY = ("token_file", "token_uri", "api_base", "query_prefix", "fetch_concurrency",
             "request_timeout_ms")


@dataclass(frozen=True, slots=True)
class GmailConfig:
    source_id: str
    workdir: Path
    mode: str
    account: str | None  # API mode: the expected account address, when configured
    mbox_path: Path | None
    token_file: Path
    token_uri: str | None
    api_base: str
    query_prefix: str
    max_candidates: int
    fetch_concurrency: int
    request_timeout: float

    @property
    def mbox_identity(self) -> str:
        assert self.mbox_path is not None
        real = os.path.realpath(self.mbox_path)
        return f"mbox:{hashlib.sha256(real.encode()).hexdigest()[:16]}"


def default_token_file() -> Path:
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "recall" / "gmail-token.json"


def load_config(params: InitializeParams) -> GmailConfig:
    settings = dict(params.settings or {})
    unknown = sorted(set(settings) - set(KNOWN_SETTINGS))
    if unknown:
        raise _invalid(
            f"unknown gmail setting(s) {', '.join(unknown)}; known: {', '.join(KNOWN_SETTINGS)}"
        )
    base = Path(params.base_dir) if params.base_dir else Path.cwd()
    mode = _choice(settings, "mode", "auto")
    location = (params.location or "").strip()
    if location.startswith("google://"):
        location = location[len("google://"):]
    if mode == "auto":
        mode = MBOX if location.endswith(".mbox") or (
            location and (base / Path(location).expanduser()).is_file()
        ) else API

    mbox_path: Path | None = None
    account: str | None = None
    if mode == MBOX:
        if not location:
            raise _invalid("gmail mbox mode needs a location: the path of a Takeout .mbox file")
        mbox_path = base / Path(location).expanduser()
        stray = sorted(k for k in settings if k in _API_ONLY)
        if stray:
            raise _invalid(f"gmail setting(s) {', '.join(stray)} apply to API mode only, "
                           "not to an mbox source")
    elif location:
        if "@" not in location or any(ch.isspace() for ch in location):
            raise _invalid(f"gmail location {location!r} is not an account address "
                           "(or a .mbox file for mbox mode)")
        account = location.lower()

    token_file = _text(settings, "token_file", None)
    return GmailConfig(
        source_id=params.source_id,
        workdir=Path(params.workdir),
        mode=mode,
        account=account,
        mbox_path=mbox_path,
        token_file=base / Path(token_file).expanduser() if token_file else default_token_file(),
        token_uri=_text(settings, "token_uri", None),
        api_base=(_text(settings, "api_base", DEFAULT_API_BASE) or DEFAULT_API_BASE).rstrip("/"),
        query_prefix=_text(settings, "query_prefix", DEFAULT_QUERY_PREFIX, allow_empty=True) or "",
        max_candidates=_integer(settings, "max_candidates", DEFAULT_MAX_CANDIDATES, 1, 500),
        fetch_concurrency=_integer(settings, "fetch_concurrency", DEFAULT_FETCH_CONCURRENCY, 1, 32),
        request_timeout=_integer(
            settings, "request_timeout_ms", DEFAULT_REQUEST_TIMEOUT_MS, 100, 600_000
        ) / 1000,
    )


def _choice(settings: dict[str, Any], key: str, default: str) -> str:
    value = settings.get(key, default)
    if value not in MODES:
        raise _invalid(f"gmail setting {key} must be one of {', '.join(MODES)}, not {value!r}")
    return str(value)


def _text(
    settings: dict[str, Any], key: str, default: str | None, *, allow_empty: bool = False
) -> str | None:
    value = settings.get(key, default)
    if value is None:
        return None
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise _invalid(f"gmail setting {key} must be a non-empty string")
    return value.strip()


def _integer(settings: dict[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = settings.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _invalid(f"gmail setting {key} must be an integer in {low}..{high}, not {value!r}")
    return value


def _invalid(message: str) -> RpcError:
    return RpcError(ErrorCode.invalid_params, message)
