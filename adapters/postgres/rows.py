"""Rows as the database returned them, and the candidates they become.

Exact identifier matches come first, then rows in ``ts_rank_cd`` order.
A ranked row's excerpt is its ``ts_headline`` (kind ``matched``) when the
headline marks a match, else the body's opening (``preview``). ``relevance``
is the shared definition measured over the title and excerpt returned, with
terms compared by their Porter stems; an exact identifier match counts the
question's terms its key covers. In a managed corpus the record is the note
(its path), so the chunks of one note are one record, as in the notes adapter.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from adapter_sdk import Candidate, ExcerptKind, MatchSignal, Sensitivity
from adapter_sdk.lexical import stemmed, tokenize
from adapter_sdk.relevance import lexical_relevance
from adapters.postgres.settings import PostgresSettings
from adapters.postgres.statements import FIELDS, START_SEL, STOP_SEL

PREVIEW_CHARS = 400


@dataclass(frozen=True)
class Row:
    key: str
    title: str | None
    updated_at: datetime | None
    record_type: str | None
    valid_from: datetime | None
    valid_to: datetime | None
    superseded_by: str | None
    supersedes: list[str] | None
    body: str
    score: float | None = None
    headline: str | None = None

    @classmethod
    def ranked(cls, values: Sequence[Any]) -> Row:
        """A row of :func:`statements.search`: fields, score, body, headline."""
        *fields, score, body, headline = values
        return cls(**dict(zip(FIELDS, fields, strict=True)), body=body or "", score=float(score), headline=headline)

    @classmethod
    def exact(cls, values: Sequence[Any]) -> Row:
        """A row of :func:`statements.by_key`: fields, then body."""
        *fields, body = values
        return cls(**dict(zip(FIELDS, fields, strict=True)), body=body or "")


def candidates_from(
    ranked: list[Row],
    exact: list[Row],
    *,
    source_id: str,
    settings: PostgresSettings,
    query_terms: list[str],
    observed_at: datetime,
    limit: int,
) -> list[Candidate]:
    exact_keys = {row.key for row in exact}
    ordered = [*exact, *(row for row in ranked if row.key not in exact_keys)][:limit]
    return [
        _candidate(row, rank, row.key in exact_keys, source_id, settings, query_terms, observed_at)
        for rank, row in enumerate(ordered, start=1)
    ]


def _candidate(
    row: Row,
    rank: int,
    exact: bool,
    source_id: str,
    settings: PostgresSettings,
    query_terms: list[str],
    observed_at: datetime,
) -> Candidate:
    title = row.title or row.key
    excerpt, kind = _excerpt(row)
    relevance = lexical_relevance(query_terms, tokenize(f"{title}\n{excerpt}"), key=stemmed)
    signals = [MatchSignal.lexical] if row.score is not None and kind is ExcerptKind.matched else []
    if exact:
        key_terms = {stemmed(token) for token in tokenize(row.key)}
        covered = sum(term in key_terms for term in query_terms) / len(query_terms) if query_terms else 1.0
        relevance = max(relevance, covered)
        signals.insert(0, MatchSignal.exact_identifier)
    metadata: dict[str, Any] = {"key": row.key, "relation": settings.relation_name}
    if row.superseded_by:
        metadata["superseded_by"] = f"{source_id}:{row.superseded_by}"
    if row.supersedes:
        metadata["supersedes"] = [f"{source_id}:{ref}" for ref in row.supersedes]
    digest = hashlib.sha256(row.body.encode()).hexdigest()
    return Candidate(
        candidate_id=row.key,
        source_record_id=row.key.split("#", 1)[0] if settings.managed else row.key,
        locator=f"{source_id}:{row.key}",
        record_type=row.record_type or settings.record_type,
        title=title,
        excerpt=excerpt or None,
        excerpt_kind=kind if excerpt else None,
        local_rank=rank,
        local_score=round(row.score, 6) if row.score is not None else None,
        relevance=round(min(relevance, 1.0), 6),
        match_signals=signals or None,
        observed_at=observed_at,
        confirmed_at=observed_at,
        event_time=row.updated_at,
        valid_from=row.valid_from,
        valid_to=row.valid_to,
        source_revision="row:" + digest[:12],
        sensitivity=Sensitivity.internal,
        metadata=metadata,
        content_fingerprint=hashlib.sha256(" ".join(tokenize(row.body)).encode()).hexdigest()[:16],
    )


def _excerpt(row: Row) -> tuple[str, ExcerptKind]:
    if row.headline and START_SEL in row.headline:
        text = row.headline.replace(START_SEL, "").replace(STOP_SEL, "")
        return " ".join(text.split()), ExcerptKind.matched
    return preview(row.body), ExcerptKind.preview


def preview(body: str) -> str:
    """The body's first paragraph, clipped."""
    paragraph: list[str] = []
    for line in body.split("\n"):
        if not line.strip():
            if paragraph:
                break
            continue
        paragraph.append(line.strip())
    text = " ".join(paragraph)
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1].rstrip() + "…"
