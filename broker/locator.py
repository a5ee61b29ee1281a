"""A locator as the broker reads it: ``<source_id>:<local part>``, parsed once.

The broker knows only the split at the first colon; what the local part means
is its source's adapter's business (it answers ``locator_unknown`` when the
part does not parse, a usage error like any other malformed locator).
"""

from __future__ import annotations

from dataclasses import dataclass

from broker.errors import ExpandError, ExpandErrorCode

MAX_LOCATOR_CHARS = 4096


@dataclass(frozen=True)
class Locator:
    """``<source_id>:<local part>``, split at the first colon; the local part is kept as given."""

    source_id: str
    local: str

    @classmethod
    def parse(cls, text: str) -> Locator:
        source_id, sep, local = text.partition(":")
        if not sep or not source_id.strip() or not local.strip():
            raise _malformed(text, "expected <source_id>:<local part>")
        if len(text) > MAX_LOCATOR_CHARS:
            raise _malformed(text[:80] + "...", f"longer than {MAX_LOCATOR_CHARS} characters")
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
            raise _malformed(text, "it holds control characters")
        return cls(source_id, local)

    def __str__(self) -> str:
        return f"{self.source_id}:{self.local}"


def _malformed(text: str, why: str) -> ExpandError:
    return ExpandError(ExpandErrorCode.malformed_locator, f"malformed locator {text!r}: {why}")
