"""Polign beliefs as protocol candidates.

Each hit is one belief as Polign folded it at the request's ``as_of``. Typed
beliefs come first in Polign's order, notes after them (weaker evidence: later
rank, lower relevance), and last the values those beliefs replaced, as
superseded records pointing at their successor so the broker can withhold them
while counting them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from adapter_sdk import Candidate, MatchSignal, Sensitivity
from adapter_sdk.lexical import tokenize
from adapter_sdk.relevance import lexical_relevance

NOTE_PREDICATE = "note"
NOTE_WEIGHT = 0.5
"""Relevance factor for notes: free text that never supersedes is weaker evidence."""

RECORD_BELIEF = "belief"
RECORD_NOTE = "note"


class MalformedBelief(ValueError):
    """Polign answered a belief this adapter cannot cite."""


@dataclass(frozen=True)
class PairLocator:
    """Local part ``<subject>/<predicate>#<event id>``; subjects may hold '/' or '#'."""

    subject: str
    predicate: str
    event_id: str

    def local(self) -> str:
        return f"{self.subject}/{self.predicate}#{self.event_id}"

    @classmethod
    def parse(cls, local: str) -> PairLocator | None:
        pair, hash_mark, event_id = local.rpartition("#")
        subject, slash, predicate = pair.rpartition("/")
        if not (hash_mark and slash and subject and predicate and event_id):
            return None
        return cls(subject, predicate, event_id)


def format_value(value: Any) -> str:
    """A value as Polign's sentences print it: plain decimals, true/false, text as is."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    if value is None:
        return ""
    return str(value)


def sentence(subject: str, predicate: str, value: Any) -> str:
    """``<subject> <predicate words>: <value>``; a note is its own text."""
    if predicate == NOTE_PREDICATE:
        return format_value(value)
    return f"{subject} {predicate.replace('_', ' ')}: {format_value(value)}"


def to_candidates(
    beliefs: Sequence[Mapping[str, Any]],
    source_id: str,
    query_terms: Sequence[str],
    as_of: str | None,
    sensitivity: Sensitivity,
) -> list[Candidate]:
    """Live beliefs (typed, then notes), then the superseded records they replaced."""
    live = [_Belief.read(raw) for raw in beliefs]
    ordered = [b for b in live if not b.is_note] + [b for b in live if b.is_note]
    candidates: list[Candidate] = []
    superseded: list[Candidate] = []
    cited: set[str] = set()
    for belief in ordered:
        display = f"{source_id}:{belief.locator.local()}"
        if display in cited:
            continue
        replaced = [_replaced_locator(belief, entry) for entry in belief.replaced]
        metadata = belief.metadata(source_id, as_of)
        if replaced:
            metadata["supersedes"] = [f"{source_id}:{loc.local()}" for loc, _ in replaced]
        current = _candidate(
            belief,
            belief.locator,
            belief.value,
            belief.observed_at,
            display,
            query_terms,
            sensitivity,
            metadata,
            rank=len(candidates) + 1,
        )
        older = [
            _candidate(
                belief,
                locator,
                entry.get("value"),
                str(entry.get("observed_at") or ""),
                f"{source_id}:{locator.local()}",
                query_terms,
                sensitivity,
                _superseded_metadata(belief, locator, entry, display, as_of),
                rank=0,
                valid_to=belief.observed_at,
            )
            for locator, entry in replaced
        ]
        if query_terms and not any(c.relevance for c in (current, *older)):
            # Polign's hashed-word search also returns pairs that share no word with
            # the question; they are noise, and keeping them would make abstention
            # impossible on a non-empty store.
            continue
        cited.add(display)
        candidates.append(current)
        for record in older:
            if record.locator not in cited:
                cited.add(record.locator)
                superseded.append(record)
    for rank, withheld in enumerate(superseded, start=len(candidates) + 1):
        candidates.append(withheld.model_copy(update={"local_rank": rank}))
    return candidates


@dataclass(frozen=True)
class _Belief:
    raw: Mapping[str, Any]
    locator: PairLocator
    value: Any
    observed_at: str
    replaced: tuple[Mapping[str, Any], ...]

    @property
    def is_note(self) -> bool:
        return self.locator.predicate == NOTE_PREDICATE

    @classmethod
    def read(cls, raw: Mapping[str, Any]) -> _Belief:
        if not isinstance(raw, Mapping):
            raise MalformedBelief(f"a belief is not an object: {raw!r:.120}")
        missing = [k for k in ("subject", "predicate", "event_id", "observed_at") if not raw.get(k)]
        if missing or "value" not in raw:
            raise MalformedBelief(f"a belief lacks {', '.join(missing or ['value'])}: {raw!r:.200}")
        replaced = raw.get("replaced") or []
        if not isinstance(replaced, list) or not all(isinstance(e, Mapping) for e in replaced):
            raise MalformedBelief(f"a belief's replaced is not a list of objects: {raw!r:.200}")
        locator = PairLocator(str(raw["subject"]), str(raw["predicate"]), str(raw["event_id"]))
        return cls(raw, locator, raw["value"], str(raw["observed_at"]), tuple(replaced))

    def metadata(self, source_id: str, as_of: str | None) -> dict[str, Any]:
        fields = (
            "subject",
            "predicate",
            "value",
            "confidence",
            "source",
            "kind",
            "observed_at",
            "event_id",
            "days_ago",
            "evidence",
            "evidence_id",
            "via",
        )
        metadata = {k: self.raw[k] for k in fields if self.raw.get(k) not in (None, "")}
        elsewhere = self.raw.get("elsewhere")
        if isinstance(elsewhere, list) and elsewhere:
            metadata["elsewhere"] = [self._cited_elsewhere(entry, source_id) for entry in elsewhere]
        if as_of:
            metadata["as_of"] = as_of
        return metadata

    def _cited_elsewhere(self, entry: Any, source_id: str) -> Any:
        """The same value held under another predicate, with a locator to cite it by."""
        if (
            not isinstance(entry, Mapping)
            or not entry.get("event_id")
            or not entry.get("predicate")
        ):
            return entry
        other = PairLocator(self.locator.subject, str(entry["predicate"]), str(entry["event_id"]))
        return {**entry, "locator": f"{source_id}:{other.local()}"}


def _replaced_locator(
    belief: _Belief, entry: Mapping[str, Any]
) -> tuple[PairLocator, Mapping[str, Any]]:
    event_id = entry.get("event_id")
    if not event_id:
        raise MalformedBelief(f"a replaced value lacks its event_id: {dict(entry)!r:.200}")
    predicate = str(entry.get("predicate") or belief.locator.predicate)
    return PairLocator(belief.locator.subject, predicate, str(event_id)), entry


def _superseded_metadata(
    belief: _Belief,
    locator: PairLocator,
    entry: Mapping[str, Any],
    successor: str,
    as_of: str | None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "subject": locator.subject,
        "predicate": locator.predicate,
        "value": entry.get("value"),
        "event_id": locator.event_id,
        "superseded_by": successor,
        "replaced_at": belief.observed_at,
    }
    for key in ("source", "observed_at"):
        if entry.get(key):
            metadata[key] = entry[key]
    if as_of:
        metadata["as_of"] = as_of
    return metadata


def _candidate(
    belief: _Belief,
    locator: PairLocator,
    value: Any,
    observed_at: str,
    display: str,
    query_terms: Sequence[str],
    sensitivity: Sensitivity,
    metadata: dict[str, Any],
    rank: int,
    valid_to: str | None = None,
) -> Candidate:
    title = sentence(locator.subject, locator.predicate, value)
    evidence = str(belief.raw.get("evidence") or "") if locator == belief.locator else ""
    score = _relevance(query_terms, (title, evidence))
    if locator.predicate == NOTE_PREDICATE:
        score *= NOTE_WEIGHT
    return Candidate(
        candidate_id=locator.event_id,
        source_record_id=locator.event_id,
        locator=display,
        record_type=RECORD_NOTE if locator.predicate == NOTE_PREDICATE else RECORD_BELIEF,
        title=title.replace("\n", " "),
        excerpt=evidence or None,
        local_rank=max(rank, 1),
        relevance=round(score, 6),
        match_signals=[MatchSignal.lexical] if score > 0 else None,
        observed_at=observed_at or None,  # type: ignore[arg-type]
        valid_from=observed_at or None,  # type: ignore[arg-type]
        valid_to=valid_to,  # type: ignore[arg-type]
        sensitivity=sensitivity,
        metadata=metadata,
    )


def _relevance(query_terms: Sequence[str], texts: Iterable[str]) -> float:
    if not query_terms:
        return 1.0
    terms = [term for text in texts if text for term in tokenize(text)]
    return lexical_relevance(query_terms, terms)
