"""Retrieved text is data: strip what could act on a terminal or a reader.

Applied to every candidate's text before ranking and to every expansion. Removes
C0/C1 controls (tab and newline kept), ANSI escape sequences, bidirectional
controls; neutralizes link schemes that could execute or read local resources;
bounds lengths in characters with a trailing ellipsis.

Identifiers (a locator's local part) are never rewritten: they are kept exact or
refused (:func:`identifier_problem`), as a rewritten locator names nothing. Text
naming a refused identifier is :func:`escaped`, so it is shown, not acted on.
"""

from __future__ import annotations

import re
from typing import Any

TITLE_CHARS = 200
EXCERPT_CHARS = 1000
METADATA_VALUE_CHARS = 200
METADATA_FIELDS = 24
EXPANSION_BYTES = 1 << 20

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# every character an identifier may not hold: all C0 and C1 controls (tab, newline and
# escape included), DEL and the bidirectional controls
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ALWAYS_BLOCKED = "javascript|data|vbscript|file|blob|about|jar|chrome|resource"
_BLOCKED_SCHEME = re.compile(rf"\b({_ALWAYS_BLOCKED}):", re.IGNORECASE)
_OTHER_SCHEME = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*)://")
_ALLOWED_SCHEMES = {"http", "https", "mailto"}


def clean_text(text: str) -> str:
    # Each pattern is run only where its literal part occurs: scanning every position
    # of every excerpt for a scheme costs more than the rest of a warm query's ranking.
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    text = _CONTROLS.sub("", text)
    if _letter_before_colon(text):
        text = _BLOCKED_SCHEME.sub(_blocked, text)
    if "://" in text:
        text = _OTHER_SCHEME.sub(_unless_allowed, text)
    return text


def _letter_before_colon(text: str) -> bool:
    """Whether some ``:`` follows a letter, as every scheme a pattern blocks ends in one."""
    at = text.find(":")
    while at != -1:
        if at and text[at - 1].isalpha():
            return True
        at = text.find(":", at + 1)
    return False


def _blocked(match: re.Match[str]) -> str:
    return f"[blocked:{match.group(1).lower()}]"


def _unless_allowed(match: re.Match[str]) -> str:
    return match.group(0) if match.group(1).lower() in _ALLOWED_SCHEMES else _blocked(match)


def identifier_problem(text: str) -> str | None:
    """Why ``text`` cannot be kept exact as an identifier, or None when it can: it holds
    a character no line of output may carry as is."""
    found = _UNPRINTABLE.search(text)
    if found is None:
        return None
    return f"it holds the control character {_escape(found)}"


def escaped(text: str, limit: int) -> str:
    """``text`` on one line, each control character written as an escape (``\\n``,
    ``\\x1b``, ``\\u202e``) and a backslash doubled, bounded: for naming a value in
    diagnostics, never for a value to be used."""
    return bound(_UNPRINTABLE.sub(_escape, text.replace("\\", "\\\\")), limit)


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def bound(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clean_line(text: str, limit: int) -> str:
    """A single-line field: cleaned, newlines folded to spaces, bounded."""
    return bound(" ".join(clean_text(text).split()), limit)


def clean_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key in sorted(metadata)[:METADATA_FIELDS]:
        kept[key] = _clean_value(metadata[key])
    return kept


def _clean_value(value: Any) -> Any:
    if isinstance(value, str):
        return bound(clean_text(value), METADATA_VALUE_CHARS)
    if isinstance(value, list):
        return [_clean_value(v) for v in value[:METADATA_FIELDS]]
    if isinstance(value, dict):
        return clean_metadata(value)
    return value


def clean_expansion(content: str, limit_bytes: int) -> tuple[str, bool]:
    """Clean expanded content and cut it at a UTF-8 boundary within ``limit_bytes``."""
    content = _ANSI.sub("", content)
    content = _CONTROLS.sub("", content)
    content = clean_text(content)
    encoded = content.encode("utf-8")
    if len(encoded) <= limit_bytes:
        return content, False
    return encoded[:limit_bytes].decode("utf-8", errors="ignore"), True
