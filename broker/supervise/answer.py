"""Reading a search answer one candidate at a time.

A candidate that does not fit protocol v1 (a locator holding a newline, a rank
of 0, a missing field) is one part of an answer, not the answer: it is dropped
and named, and the candidates beside it stand. Only an answer whose envelope
is wrong (no outcome, candidates that are not a list) is refused whole.
Counting the dropped ones, and what they do to the source's outcome, is
admission's business (:mod:`broker.candidate_admission`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from adapter_sdk.protocol import Candidate, SearchResult, WireValidationError
from broker.sanitize import clean_line, escaped

MALFORMED_NAMED = 10
"""At most this many dropped candidates are named in a source's diagnostics; all are counted."""
_NAMED_CHARS = 300


@dataclass(frozen=True)
class MalformedCandidate:
    """A candidate dropped from an answer, and why; ``index`` is its place in the
    adapter's list, when the drop was decided on the wire."""

    why: str
    locator: str | None = None
    candidate_id: str | None = None
    index: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The diagnostic naming it: identifiers escaped, so a newline or a terminal
        escape in them is shown, not acted on; the reason is prose, cleaned."""
        named: dict[str, Any] = {}
        if self.index is not None:
            named["index"] = self.index
        if self.candidate_id is not None:
            named["candidate_id"] = escaped(self.candidate_id, _NAMED_CHARS)
        if self.locator is not None:
            named["locator"] = escaped(self.locator, _NAMED_CHARS)
        named["why"] = clean_line(self.why, _NAMED_CHARS)
        return named


@dataclass
class SearchAnswer:
    """A search answer as received: its valid candidates in ``result``, the rest named."""

    result: SearchResult
    malformed: list[MalformedCandidate] = field(default_factory=list)


def read_search_answer(raw: Any) -> SearchAnswer:
    """``raw`` (a decoded ``result``) checked candidate by candidate.

    Raises :class:`WireValidationError` only when the envelope itself is wrong.
    """
    if not isinstance(raw, dict) or not isinstance(raw.get("candidates"), list):
        return SearchAnswer(SearchResult.model_validate(raw))
    envelope: SearchResult = SearchResult.model_validate({**raw, "candidates": []})
    kept: list[Candidate] = []
    malformed: list[MalformedCandidate] = []
    for index, item in enumerate(raw["candidates"]):
        try:
            kept.append(Candidate.model_validate(item))
        except WireValidationError as exc:
            malformed.append(
                MalformedCandidate(
                    why=_problems(exc),
                    locator=_text_field(item, "locator"),
                    candidate_id=_text_field(item, "candidate_id"),
                    index=index,
                )
            )
    envelope.candidates = kept
    return SearchAnswer(envelope, malformed)


def _text_field(item: Any, name: str) -> str | None:
    value = item.get(name) if isinstance(item, dict) else None
    return value if isinstance(value, str) else None


def _problems(exc: WireValidationError) -> str:
    """Each offending field of one candidate, e.g. ``local_rank: Input should be ...``."""
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'candidate'}: {error['msg']}"
        for error in exc.errors()
    )
