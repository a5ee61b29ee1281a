"""Temporal verdicts applied to the pool: per record, per group, per cluster.

Verdicts come from :mod:`broker.temporal`, on both clocks: validity and
supersession at the valid-time instant, a candidate's ``event_time`` against
the transaction-time instant (``known_at``). A group takes the stalest verdict
of its candidates (precedence in :mod:`broker.temporal`); clustering keys are
scoped by that verdict, so every cluster has one verdict.

Successor promotion. Walk the fused order from the top. For each superseded
cluster X whose terminal successor's cluster Y is current and ranked below X,
move Y to X's position (directly above X; everything from X down to Y's old
place shifts down by one). A successor is moved at most once, to the place of
its highest-ranked predecessor. X is then withheld, so Y holds the place X
earned; with ``include_stale`` X stays, marked, directly below Y. A successor
of a superseded cluster that clears the relevance floor inherits that
relevance and is exempt from the floor, as is any cluster holding a candidate
fetched as a promoted successor (``metadata.promoted_successor``).

A successor the query did not find (fetched by its locator), whose title and
excerpt share no word with the question, takes X's place wherever its own
lookup ranked it; it takes the first place only when X's title or excerpt
shows every content word of the question. Else, when X ranks first, Y goes
directly below the first shown cluster after X (if there is one): a record
that matched part of the question, perhaps by accident, does not hand the top
to a successor that says nothing of it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from broker.contracts import (
    SHOWN_VERDICTS,
    Candidate,
    Suppression,
    SuppressionReason,
    TemporalExplanation,
    Verdict,
)
from broker.fusion.clusters import Cluster, strength
from broker.fusion.groups import Group
from broker.temporal import (
    COMPLETED_STATUS,
    UNDATED_END,
    Succession,
    Supersessions,
    TemporalRecord,
    aware,
    clock_of,
    known_verdict,
    resolve_supersessions,
    stalest,
    verdict_for,
)


def record_key(c: Candidate) -> tuple[str, str]:
    return (c.source_uid, c.source_record_id or c.locator)


def references(c: Candidate, key: str) -> tuple[str, ...]:
    value = (c.metadata or {}).get(key)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str) and v.strip())


def has_temporal_input(c: Candidate) -> bool:
    return bool(
        c.valid_from
        or c.valid_to
        or references(c, "supersedes")
        or references(c, "superseded_by")
    )


def is_completed(c: Candidate) -> bool:
    """Whether the record ended by being done (its source says ``status: completed``)."""
    return (c.metadata or {}).get("status") == COMPLETED_STATUS


def is_dated(c: Candidate) -> bool:
    """Whether the record's ``valid_to`` is when it ended, not only the latest it can have
    (``metadata.end_date_missing``: a task marked done with no date)."""
    return (c.metadata or {}).get(UNDATED_END) is not True


def is_promoted_successor(c: Candidate) -> bool:
    return (c.metadata or {}).get("promoted_successor") is True


@dataclass
class TemporalState:
    """The instants a query is judged at and the supersessions read from its candidates."""

    instant: datetime
    known_at: datetime | None
    supersessions: Supersessions
    record_locators: dict[Hashable, str]

    def candidate_verdict(self, c: Candidate) -> Verdict:
        key = record_key(c)
        claims = [
            known_verdict(c.event_time, self.known_at),
            verdict_for(c.valid_from, c.valid_to, self.instant, completed=is_completed(c)),
        ]
        if key in self.supersessions.superseded:
            claims.append(Verdict.superseded)
        if key in self.supersessions.ambiguous:
            claims.append(Verdict.ambiguous_supersession)
        return stalest(claims)


def decide(
    pool: Sequence[Candidate],
    groups: Sequence[Group],
    instant: datetime,
    source_ids: frozenset[str],
    known_at: datetime | None = None,
) -> TemporalState:
    """Resolve supersessions over ``pool`` (in candidate order) and set each group's verdict."""
    by_record: dict[Hashable, list[Candidate]] = {}
    for c in pool:
        by_record.setdefault(record_key(c), []).append(c)
    records = [_record(key, members) for key, members in by_record.items()]
    state = TemporalState(
        instant=instant,
        known_at=known_at,
        supersessions=resolve_supersessions(records, instant, source_ids, known_at),
        record_locators={r.key: r.locator for r in records},
    )
    for group in groups:
        group.verdict = stalest(state.candidate_verdict(c) for c in group.candidates)
    return state


def _record(key: Hashable, members: list[Candidate]) -> TemporalRecord:
    names: set[str] = set()
    for c in members:
        names.update({c.local_part, c.local_part.split("#", 1)[0]})
        if c.source_record_id:
            names.add(c.source_record_id)
    dates = [aware(d) for c in members if (d := c.valid_from or c.event_time) is not None]
    recorded = [aware(c.event_time) for c in members if c.event_time is not None]
    return TemporalRecord(
        key=key,
        source_id=members[0].source_id,
        names=frozenset(names),
        locator=members[0].locator,
        dated=min(dates) if dates else None,
        recorded=min(recorded) if recorded else None,
        supersedes=tuple(sorted({r for c in members for r in references(c, "supersedes")})),
        superseded_by=tuple(
            sorted({r for c in members for r in references(c, "superseded_by")})
        ),
    )


@dataclass
class Promotion:
    """The ranking after successors take their predecessors' places."""

    ordered: list[Cluster]
    successions: dict[int, Succession] = field(default_factory=dict)
    """Per superseded cluster (by id): its terminal successor."""
    predecessors: dict[int, Cluster] = field(default_factory=dict)
    """Per successor cluster (by id): the highest-ranked cluster it replaces."""
    floor_exempt: set[int] = field(default_factory=set)


def promote(ordered: list[Cluster], state: TemporalState, floor: float, question: str = "") -> Promotion:
    """Apply the successor promotion rule (module docstring) to the fused order."""
    home: dict[Hashable, Cluster] = {}
    for cluster in ordered:
        for c in cluster.candidates:
            if c.locator == state.record_locators.get(record_key(c)):
                home.setdefault(record_key(c), cluster)
    out = Promotion(ordered=list(ordered))
    for cluster in ordered:
        if any(is_promoted_successor(c) for c in cluster.candidates):
            out.floor_exempt.add(id(cluster))
        if cluster.verdict is not Verdict.superseded:
            continue
        succession = _succession(cluster, state)
        if succession is None:
            continue
        out.successions[id(cluster)] = succession
        successor = (
            home.get(succession.successor_key) if succession.successor_key is not None else None
        )
        if successor is None or successor.verdict not in SHOWN_VERDICTS:
            continue
        if id(successor) not in out.predecessors:
            out.predecessors[id(successor)] = cluster
            at, was = out.ordered.index(cluster), out.ordered.index(successor)
            if not _found_by_the_question(successor, question):
                _inherit_place(out.ordered, successor, cluster, question)
            elif was > at:
                out.ordered.insert(at, out.ordered.pop(was))
        if floor <= 0 or not cluster.below_floor(floor):
            out.floor_exempt.add(id(successor))
    return out


def _words_shown(cluster: Cluster) -> set[str]:
    """The words of the cluster's titles and excerpts, as the notes source matches words."""
    from adapter_sdk.lexical import matching_stem, tokenize

    return {matching_stem(t) for c in cluster.candidates for t in tokenize(f"{c.title}\n{c.excerpt or ''}")}


def _question_words(question: str) -> set[str]:
    from adapter_sdk.lexical import analyze_query, matching_stem

    return {matching_stem(t) for t in analyze_query(question).content_terms}


def _found_by_the_question(cluster: Cluster, question: str) -> bool:
    """Whether the query found the cluster itself, or its title or excerpt holds a
    content word of the question."""
    if not all(is_promoted_successor(c) for c in cluster.candidates):
        return True
    return bool(_question_words(question) & _words_shown(cluster))


def _inherit_place(ordered: list[Cluster], successor: Cluster, predecessor: Cluster, question: str) -> None:
    """Put a successor that shares no word with the question at its predecessor's place
    (wherever its own lookup ranked it). That place is the first only when the
    predecessor shows every content word of the question; else the successor goes
    directly below the first shown cluster after it (the top when there is none)."""
    ordered.remove(successor)
    place = ordered.index(predecessor)
    if place == 0 and not _question_words(question) <= _words_shown(predecessor):
        place = next(
            (i + 1 for i, c in enumerate(ordered) if c is not predecessor and c.verdict in SHOWN_VERDICTS), 0
        )
    ordered.insert(place, successor)


def _succession(cluster: Cluster, state: TemporalState) -> Succession | None:
    for group in sorted(cluster.groups, key=strength):
        for c in group.candidates:
            succession = state.supersessions.superseded.get(record_key(c))
            if succession is not None:
                return succession
    return None


def temporal_explanation(
    cluster: Cluster, state: TemporalState, promotion: Promotion
) -> TemporalExplanation | None:
    """The verdict and its inputs, when the cluster has any temporal input."""
    candidates = list(cluster.candidates)
    keys = {record_key(c) for c in candidates}
    notes = sorted({n for k in keys for n in state.supersessions.notes.get(k, ())})
    if keys & state.supersessions.contested:
        notes.append("supersession left undecided (cycle)")
    claimants = sorted({c for k in keys for c in state.supersessions.ambiguous.get(k, ())})
    predecessor = promotion.predecessors.get(id(cluster))
    if predecessor is not None:
        notes.append(f"successor of superseded {predecessor.representative.primary.locator}")
    succession = promotion.successions.get(id(cluster))
    if not (
        notes
        or succession
        or claimants
        or cluster.verdict is not Verdict.current
        or any(has_temporal_input(c) for c in candidates)
    ):
        return None
    primary = cluster.representative.primary
    dated = next(
        (c for c in [primary, *candidates] if c.valid_from or c.valid_to), primary
    )
    supersedes = references(primary, "supersedes")
    stated_successor = references(primary, "superseded_by")
    recorded = [c.event_time for c in candidates if c.event_time is not None]
    return TemporalExplanation.model_construct(
        verdict=cluster.verdict,
        clock=clock_of(cluster.verdict),
        evaluated_at=state.instant,
        known_at=state.known_at,
        recorded_at=min(recorded) if state.known_at is not None and recorded else None,
        valid_from=dated.valid_from,
        valid_to=dated.valid_to,
        superseded_by=succession.successor
        if succession
        else (stated_successor[0] if stated_successor else None),
        supersedes=list(supersedes) or None,
        claimed_by=claimants or None,
        note="; ".join(notes) or None,
    )


def stale_suppression(cluster: Cluster, succession: Succession | None) -> Suppression:
    """A cluster withheld for its verdict, counted in records, not in the chunks found of
    them: a note of four sections superseded is one superseded note. A superseded one
    names its successor, a completed one when it was done, if that is known."""
    completed = [c.valid_to for c in cluster.candidates if c.valid_to is not None and is_dated(c)]
    return Suppression(
        reason=SuppressionReason(cluster.verdict.value),
        count=len(cluster.units),
        lineage_root=cluster.root,
        successor=succession.successor if succession else None,
        completed_at=max(map(aware, completed)) if cluster.verdict is Verdict.completed and completed else None,
    )
