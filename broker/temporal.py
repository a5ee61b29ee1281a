"""Temporal verdicts: is a record current at the instants a request asks about?

Two clocks, each an argument (neither is ever read here):

* valid time, ``instant`` (the request's ``valid_at``, else its ``as_of``, else
  the moment it was served): what was true then, by the authors' declarations.
  ``expired`` once ``valid_to <= instant`` (``completed`` when the record
  ended by being done: a task whose ``metadata.status`` is ``completed``),
  ``not_yet_valid`` while ``valid_from > instant``; supersessions are dated
  on it too.
* transaction time, ``known_at`` (the request's ``as_of``; ``None`` asks about
  the sources as they are): what the sources held then. A record the source
  recorded after ``known_at`` (its ``event_time``: when the source wrote it)
  is ``not_yet_known``, and a supersession it asserts does not apply.

Supersession comes from ``metadata.supersedes`` (references this record
replaces) and ``metadata.superseded_by`` (the reference that replaces it). A
reference is ``<source_id>:<ref>``. It names every record of that source whose
locator local part, local part without its ``#...`` fragment, or
``source_record_id`` equals ``ref``, so a note that supersedes
``notes:decisions/old.md`` replaces every chunk of that note. A reference with
no known source prefix is read in the source of the record that wrote it.

A supersession is dated by the successor's ``valid_from``, else its
``event_time``; one dated after the valid-time instant, or asserted by a
successor recorded after ``known_at``, does not apply, so replaying an earlier
instant shows what was current then. An undated supersession applies. Chains
resolve to their terminal successor. Nothing is guessed: the records of a
supersession cycle are left ``current`` and reported as problems, and a record
two different terminal successors claim is ``ambiguous_supersession``: shown,
marked, both claimants named.

Precedence when a record carries several claims: not_yet_known (whether a
record was later replaced means nothing before it existed), superseded,
expired, completed, not_yet_valid, ambiguous_supersession.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from broker.contracts import Clock, Verdict

STALENESS = {
    Verdict.current: 0,
    Verdict.ambiguous_supersession: 1,
    Verdict.not_yet_valid: 2,
    Verdict.completed: 3,
    Verdict.expired: 4,
    Verdict.superseded: 5,
    Verdict.not_yet_known: 6,
}
COMPLETED_STATUS = "completed"
"""``metadata.status`` of a record that ended by being done: past its ``valid_to`` it is
``completed``, not ``expired``."""
UNDATED_END = "end_date_missing"
"""``metadata`` key, true when a record's ``valid_to`` is only the latest it can have
ended (a task marked done with no date): its verdict holds, no end date is claimed."""


def aware(moment: datetime) -> datetime:
    """A timestamp with no zone is read as UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def verdict_for(
    valid_from: datetime | None,
    valid_to: datetime | None,
    instant: datetime,
    *,
    completed: bool = False,
) -> Verdict:
    """The validity verdict of one record at ``instant`` (supersession aside);
    ``completed``: the record ended at ``valid_to`` by being done."""
    instant = aware(instant)
    if valid_to is not None and aware(valid_to) <= instant:
        return Verdict.completed if completed else Verdict.expired
    if valid_from is not None and aware(valid_from) > instant:
        return Verdict.not_yet_valid
    return Verdict.current


def known_verdict(recorded_at: datetime | None, known_at: datetime | None) -> Verdict:
    """The transaction-time verdict: was the record in the source at ``known_at``?

    A record with no recorded time stays visible.
    """
    if known_at is None or recorded_at is None or aware(recorded_at) <= aware(known_at):
        return Verdict.current
    return Verdict.not_yet_known


def clock_of(verdict: Verdict) -> Clock:
    """The clock a verdict is decided on."""
    return Clock.transaction_time if verdict is Verdict.not_yet_known else Clock.valid_time


def stalest(verdicts: Iterable[Verdict]) -> Verdict:
    """The verdict that wins when one record carries several claims."""
    return max(verdicts, key=STALENESS.__getitem__, default=Verdict.current)


@dataclass(frozen=True)
class TemporalRecord:
    """One record's supersession claims, all its retrieved pieces merged.

    ``names`` are the local references the record answers to; ``locator`` is the
    display locator reported when the record is named as a successor; ``dated``
    is when a supersession by this record took effect (``valid_from``, else
    ``event_time``; ``None`` when the record states neither); ``recorded`` is
    when the source wrote it (``event_time``), read on the transaction clock.
    """

    key: Hashable
    source_id: str
    names: frozenset[str]
    locator: str
    dated: datetime | None = None
    recorded: datetime | None = None
    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class Succession:
    """Why a record is superseded: its terminal successor."""

    successor: str
    successor_key: Hashable | None
    """The successor's record key when it was retrieved, else ``None``."""


@dataclass
class Supersessions:
    """Which records are superseded and by what, with the claims that did not apply."""

    superseded: dict[Hashable, Succession] = field(default_factory=dict)
    notes: dict[Hashable, list[str]] = field(default_factory=dict)
    """Per record: claims that were read but did not apply, and why."""
    contested: set[Hashable] = field(default_factory=set)
    """Records left current because they are part of a supersession cycle."""
    ambiguous: dict[Hashable, tuple[str, ...]] = field(default_factory=dict)
    """Records two different terminal successors claim, with the claimants' locators."""
    problems: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    """Terminal successors named by reference that were not retrieved."""


def split_reference(
    reference: str, writer_source_id: str, known_source_ids: frozenset[str]
) -> tuple[str, str] | None:
    """``(source_id, ref)`` of a reference, or ``None`` when it names nothing."""
    reference = reference.strip()
    prefix, sep, rest = reference.partition(":")
    if sep and prefix in known_source_ids:
        return (prefix, rest) if rest else None
    return (writer_source_id, reference) if reference else None


@dataclass(frozen=True)
class _External:
    """A successor named by reference that no retrieved record answers to."""

    locator: str


def resolve_supersessions(
    records: Sequence[TemporalRecord],
    instant: datetime,
    source_ids: frozenset[str] = frozenset(),
    known_at: datetime | None = None,
) -> Supersessions:
    """Decide which records are superseded at ``instant`` as known at ``known_at``, and by what.

    ``source_ids`` are the configured source names, so a reference to a source
    that returned nothing is still read as naming that source.
    """
    instant = aware(instant)
    out = Supersessions()
    by_key = {r.key: r for r in records}
    known = source_ids | {r.source_id for r in records}
    index: dict[tuple[str, str], set[Hashable]] = {}
    for r in records:
        for name in r.names:
            index.setdefault((r.source_id, name), set()).add(r.key)

    def named(reference: str, writer: TemporalRecord) -> tuple[str, set[Hashable]] | None:
        parts = split_reference(reference, writer.source_id, known)
        if parts is None:
            return None
        return f"{parts[0]}:{parts[1]}", index.get(parts, set()) - {writer.key}

    def applies(old: TemporalRecord, successor: TemporalRecord) -> bool:
        recorded = successor.recorded
        if recorded is not None and known_verdict(recorded, known_at) is Verdict.not_yet_known:
            out.notes.setdefault(old.key, []).append(
                f"supersession by {successor.locator} recorded "
                f"{aware(recorded).isoformat()} is after the as_of instant "
                "(transaction time) and does not apply"
            )
            return False
        if successor.dated is None or aware(successor.dated) <= instant:
            return True
        out.notes.setdefault(old.key, []).append(
            f"supersession by {successor.locator} dated {aware(successor.dated).isoformat()} "
            "is after the evaluation instant (valid time) and does not apply"
        )
        return False

    edges: dict[Hashable, set[Hashable]] = {}
    for writer in records:
        for reference in writer.supersedes:
            found = named(reference, writer)
            for old_key in sorted(found[1], key=repr) if found else ():
                if applies(by_key[old_key], writer):
                    edges.setdefault(old_key, set()).add(writer.key)
        for reference in writer.superseded_by:
            found = named(reference, writer)
            if found is None:
                continue
            locator, successors = found
            if not successors:
                edges.setdefault(writer.key, set()).add(_External(locator))
            for key in sorted(successors, key=repr):
                if applies(writer, by_key[key]):
                    edges.setdefault(writer.key, set()).add(key)

    def locator_of(node: Hashable) -> str:
        return node.locator if isinstance(node, _External) else by_key[node].locator

    cycles = _cycle_members(edges)
    for members in cycles:
        names = ", ".join(sorted(locator_of(k) for k in members))
        out.problems.append(f"supersession cycle between {names}: all left current")
        out.contested.update(members)

    terminal: dict[Hashable, frozenset[Hashable]] = {}

    def terminals(node: Hashable) -> frozenset[Hashable]:
        """Where following ``node``'s supersessions ends (itself when it is not replaced)."""
        if node in terminal:
            return terminal[node]
        if isinstance(node, _External) or node in out.contested or node not in edges:
            terminal[node] = frozenset({node})
            return terminal[node]
        reached = frozenset().union(*(terminals(s) for s in edges[node]))
        if len(reached) > 1:
            claimants = tuple(sorted(locator_of(k) for k in reached))
            out.problems.append(
                f"ambiguous successor for {locator_of(node)}: {' and '.join(claimants)} "
                "both replace it; marked ambiguous_supersession, neither chosen"
            )
            out.ambiguous[node] = claimants
            reached = frozenset({node})
        terminal[node] = reached
        return reached

    for old_key in sorted(edges, key=lambda k: locator_of(k) + "\x00" + repr(k)):
        (end,) = terminals(old_key)
        if end == old_key:
            continue
        if isinstance(end, _External):
            out.superseded[old_key] = Succession(end.locator, None)
            out.missing.append(end.locator)
        else:
            out.superseded[old_key] = Succession(by_key[end].locator, end)
    out.missing = sorted(set(out.missing))
    out.problems.sort()
    out.notes = {key: sorted(set(notes)) for key, notes in out.notes.items()}
    return out


def _cycle_members(edges: Mapping[Hashable, set[Hashable]]) -> list[frozenset[Hashable]]:
    """Strongly connected sets of more than one record (self-claims are never edges)."""
    reach: dict[Hashable, set[Hashable]] = {}
    for start in edges:
        seen: set[Hashable] = set()
        stack = list(edges[start])
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            stack.extend(edges.get(node, ()))
        reach[start] = seen
    cycles: set[frozenset[Hashable]] = set()
    for node, reached in reach.items():
        if node in reached:
            cycles.add(frozenset({node} | {o for o in reached if node in reach.get(o, ())}))
    return sorted(cycles, key=lambda members: sorted(repr(k) for k in members))
