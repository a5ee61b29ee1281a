"""Select and order tasks for a query: pure functions over records, no I/O, no clock.

Order: exact-identifier hits first (in the order the query names them), then
local score (IDF-weighted matched terms — description 1.0, annotations 0.6,
project/tags 0.5 — times the share of query terms covered), then open before
closed, soonest due, record id.

Terms are compared by their Porter stems (``adapter_sdk.lexical.stemmed``),
as the notes and mbox indexes compare them: "backups" finds "backup", and
words sharing a stem are one term.

Admission: a record must contain at least one query term, or two when the
question was natural language (function words removed) and has two or more
content terms, so scaffolding cannot manufacture hits. Field constraints must
all hold. With no free terms, the records satisfying the constraints are hits.

Scope: ``project`` matches the project or any sub-project; ``since``/``until``
and ``as_of`` compare the task's entry time. A task with no entry time (a
todo.txt line without a creation date) cannot be placed in time, so a dated
scope leaves it out and counts it when it would have matched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from adapter_sdk.lexical import stemmed, term_keys, tokenize
from adapter_sdk.protocol import MatchSignal
from adapter_sdk.relevance import lexical_relevance
from adapters.tasks.model import CLOSED_STATUSES, Annotation, TaskRecord
from adapters.tasks.query import TaskQuery

DESCRIPTION_WEIGHT = 1.0
ANNOTATION_WEIGHT = 0.6
FIELD_WEIGHT = 0.5


@dataclass(frozen=True, slots=True)
class Hit:
    record: TaskRecord
    exact: bool
    score: float
    relevance: float
    signals: tuple[MatchSignal, ...]
    matched_terms: frozenset[str]
    matched_annotation: Annotation | None


@dataclass(frozen=True, slots=True)
class Scope:
    """The request's filters and evaluation instant, applied before matching."""

    project: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    as_of: datetime | None = None

    @property
    def needs_dates(self) -> bool:
        return self.since is not None or self.until is not None or self.as_of is not None


@dataclass(frozen=True, slots=True)
class Ranking:
    hits: list[Hit]
    matched_count: int
    pool_size: int
    excluded_by_as_of: int
    undated_matches_excluded: int


@dataclass(frozen=True, slots=True)
class _Terms:
    """A record's token stems, by field."""

    description: frozenset[str]
    annotations: tuple[frozenset[str], ...]
    fields: frozenset[str]
    all_terms: tuple[str, ...]


def rank(records: list[TaskRecord], query: TaskQuery, scope: Scope, limit: int) -> Ranking:
    view: list[TaskRecord] = []
    undated: list[TaskRecord] = []
    excluded_by_as_of = 0
    for record in records:
        if scope.project is not None and not project_matches(record, scope.project):
            continue
        if scope.needs_dates and record.entry is None:
            undated.append(record)
            continue
        if scope.as_of is not None and record.entry is not None and record.entry > scope.as_of:
            excluded_by_as_of += 1
            continue
        if scope.since is not None and record.entry is not None and record.entry < scope.since:
            continue
        if scope.until is not None and record.entry is not None and record.entry > scope.until:
            continue
        view.append(record.as_of(scope.as_of) if scope.as_of is not None else record)

    hits = _match(view, query)
    undated_matches = len(_match(undated, query)) if undated else 0
    return Ranking(hits[:limit], len(hits), len(view), excluded_by_as_of, undated_matches)


def project_matches(record: TaskRecord, wanted: str) -> bool:
    """Equal, or a sub-project of ``wanted`` (``infra.backup`` is in ``infra``), any case."""
    wanted = wanted.casefold()
    return any(
        p.casefold() == wanted or p.casefold().startswith(wanted + ".") for p in record.projects
    )


def _match(view: list[TaskRecord], query: TaskQuery) -> list[Hit]:
    exact_order = {rid: i for i, rid in enumerate(query.record_ids)}
    working_order = {wid: len(exact_order) + i for i, wid in enumerate(query.working_ids)}
    terms = tuple(term_keys(query.terms, stemmed))
    required = 2 if query.analyzed.normalized and len(terms) >= 2 else 1
    indexed = [(record, _terms_of(record)) for record in view]
    idf = _idf(terms, [t for _, t in indexed])

    exact_hits: list[tuple[int, Hit]] = []
    ranked_hits: list[Hit] = []
    for record, record_terms in indexed:
        position = _exact_position(record, exact_order, working_order)
        if position is not None:
            exact_hits.append((position, _hit(record, record_terms, terms, idf, exact=True)))
            continue
        if not all(_holds(record, name, value) for name, value in query.constraints):
            continue
        if terms:
            matched = _matched(record_terms, terms)
            if len(matched) < min(required, len(terms)):
                continue
        elif not query.constraints:
            continue
        ranked_hits.append(_hit(record, record_terms, terms, idf, exact=False))

    exact_hits.sort(key=lambda item: (item[0], item[1].record.record_id))
    ranked_hits.sort(key=_order_key)
    return [hit for _, hit in exact_hits] + ranked_hits


def _hit(
    record: TaskRecord, record_terms: _Terms, terms: tuple[str, ...], idf: dict[str, float],
    *, exact: bool,
) -> Hit:
    matched = _matched(record_terms, terms)
    signals: list[MatchSignal] = [MatchSignal.exact_identifier] if exact else []
    score = 0.0
    for term in matched:
        weight = (
            DESCRIPTION_WEIGHT if term in record_terms.description
            else ANNOTATION_WEIGHT if any(term in a for a in record_terms.annotations)
            else FIELD_WEIGHT
        )
        score += idf.get(term, 0.0) * weight
    if terms:
        score *= len(matched) / len(terms)
    if matched & (record_terms.description | frozenset().union(*record_terms.annotations)):
        signals.append(MatchSignal.lexical)
    if matched & record_terms.fields or (not exact and not terms):
        signals.append(MatchSignal.field)
    if exact or not terms:
        relevance = 1.0  # the query names this record, or only field constraints it satisfies
    else:
        relevance = lexical_relevance(terms, record_terms.all_terms)
    annotation = next(
        (a for a, a_terms in zip(record.annotations, record_terms.annotations, strict=True)
         if matched & a_terms),
        None,
    )
    return Hit(record, exact, round(score, 6), round(relevance, 6), tuple(signals),
               frozenset(matched), annotation)


def _terms_of(record: TaskRecord) -> _Terms:
    description = _stems(record.description)
    annotations = [_stems(a.description) for a in record.annotations]
    fields = _stems(" ".join((*record.projects, *record.tags, *record.contexts)))
    all_terms = tuple(description + [t for a in annotations for t in a] + fields)
    return _Terms(
        frozenset(description), tuple(frozenset(a) for a in annotations), frozenset(fields),
        all_terms,
    )


def _stems(text: str) -> list[str]:
    return [stemmed(token) for token in tokenize(text)]


def _matched(record_terms: _Terms, terms: tuple[str, ...]) -> set[str]:
    present = record_terms.description | record_terms.fields
    present = present.union(*record_terms.annotations)
    return {t for t in terms if t in present}


def _idf(terms: tuple[str, ...], indexed: list[_Terms]) -> dict[str, float]:
    count = len(indexed)
    idf = {}
    for term in terms:
        df = sum(
            1 for t in indexed
            if term in t.description or term in t.fields or any(term in a for a in t.annotations)
        )
        idf[term] = math.log(1 + (count - df + 0.5) / (df + 0.5))
    return idf


def _exact_position(
    record: TaskRecord, exact_order: dict[str, int], working_order: dict[int, int]
) -> int | None:
    for record_id, position in exact_order.items():
        if record.record_id.startswith(record_id):
            return position
    if record.working_id is not None and record.working_id in working_order:
        return working_order[record.working_id]
    return None


def _holds(record: TaskRecord, name: str, value: str) -> bool:
    folded = value.casefold()
    if name == "project":
        return project_matches(record, value)
    if name == "tag":
        return any(t.casefold() == folded for t in (*record.tags, *record.contexts))
    if name == "status":
        return record.status == folded
    return (record.priority or "").casefold() == folded  # priority


def _order_key(hit: Hit) -> tuple[float, int, float, str]:
    record = hit.record
    due = record.due.timestamp() if record.due is not None else math.inf
    return (-hit.score, record.status in CLOSED_STATUSES, due, record.record_id)
