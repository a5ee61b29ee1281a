"""Clusters: lineage groups about one thing, and how much they corroborate.

Union-find over groups, on whole-value keys only (no substring anywhere):

==================  ===============================================  ======================
key                 value                                            links
==================  ===============================================  ======================
record              source_uid, source_record_id                     dup + same
fingerprint         record_type, content_fingerprint                 dup
location-record     resolved location, record_type, source_record_id dup + same
view                record_type, source_record_id, fingerprint,      dup + same + view
                    source_revision (all non-empty)
entity              metadata.entity_type or record_type, entity_id   same
name                record_type, normalized title or alias           same
                    (at least two tokens)
==================  ===============================================  ======================

``same`` forms clusters (display and corroboration), ``dup`` folds a cluster's
groups into corroboration units (one record seen again), ``view`` folds two views
of one record into one result slot. Every key is scoped by the group's temporal
verdict, so stale evidence never merges with, nor corroborates, current evidence.

Unlike the reference, where location-record only collapses corroboration, one
file at one location is also one result: when two sources over one folder (the
notes adapter and the semantic leg over it) each found other chunks of a note,
the note is shown once, not twice.

    cluster_score = min(sum of accepted unit scores, corroboration_cap * max unit score)

Units are offered non-derivative first, then by score and root; a unit is
accepted only if it raises the independent count of what is already counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from broker.contracts import Candidate, Corroboration, ExcerptKind, Verdict
from broker.fusion.groups import Group
from broker.fusion.lineage import Lineage, independent_count
from broker.fusion.relevance import floor_relevance

MIN_NAME_TOKENS = 2
_NAME_TOKEN = re.compile(r"[^\W_]+")


@dataclass
class Unit:
    """A corroboration unit: the groups that are one record seen again, counted once."""

    groups: list[Group]
    lineages: list[Lineage]
    score: float
    root: str

    @property
    def derivative(self) -> bool:
        """Every view of the record restates something else (composite or derived source)."""
        return bool(self.lineages) and all(
            lineage.ancestors or lineage.source_derives_from for lineage in self.lineages
        )


@dataclass(eq=False)
class Cluster:
    """Groups about one thing, shown as one result, with the group that earned its score."""

    groups: list[Group]
    units: list[Unit]
    view_classes: list[list[Group]]
    basis: Group
    """The strongest group of the strongest unit: it earned the score and explains it."""
    representative: Group
    """What is displayed; differs from ``basis`` only under the document-chunk rule."""
    score: float
    corroboration: Corroboration
    exact: bool
    exact_alias: bool
    exact_identity: bool
    verdict: Verdict

    @property
    def root(self) -> str:
        return self.basis.root

    @property
    def candidates(self) -> Iterator[Candidate]:
        for group in self.groups:
            yield from group.candidates

    @property
    def candidate_count(self) -> int:
        return sum(len(group.candidates) for group in self.groups)

    def below_floor(self, floor: float) -> bool:
        """Nothing in the cluster reaches ``floor`` and no candidate was named exactly.

        A record named by identifier need not describe itself, so exact clusters
        are never below the floor.
        """
        return not self.exact and all(floor_relevance(c) < floor for c in self.candidates)


def strength(group: Group) -> tuple[float, int, str]:
    """Best first; between equal scores, a folder's fused order (:mod:`broker.fusion.folder`)."""
    return (-group.score, folder_rank(group), group.root)


def folder_rank(group: Group) -> int:
    """The group's rank in its folder's fused list, 0 outside one: it breaks ties in score
    within a folder, whose reassigned scores repeat where its records' best terms did."""
    return group.folder.rank if group.folder is not None else 0


class _Disjoint:
    """Union-find whose representative is the lowest index, whatever the merge order."""

    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            low, high = min(ra, rb), max(ra, rb)
            self.parent[high] = low


def build_clusters(
    groups: Sequence[Group], locations: Mapping[str, str | None], cap: float
) -> list[Cluster]:
    """Cluster ``groups`` (in root order) and score each cluster."""
    dup, same, view = (_Disjoint(len(groups)) for _ in range(3))
    first_holder: dict[tuple[object, ...], int] = {}

    def link(i: int, key: tuple[object, ...], *relations: _Disjoint) -> None:
        holder = first_holder.setdefault(key, i)
        if holder != i:
            for relation in relations:
                relation.union(holder, i)

    relations = {
        "record": (dup, same),
        "fingerprint": (dup,),
        "location-record": (dup, same),
        "view": (dup, same, view),
        "entity": (same,),
        "name": (same,),
    }
    for i, group in enumerate(groups):
        scope = group.verdict.value
        for kind, key in _keys(group, locations):
            link(i, (scope, kind, *key), *relations[kind])

    members: dict[int, list[int]] = {}
    for i in range(len(groups)):
        members.setdefault(same.find(i), []).append(i)
    return [_cluster([groups[i] for i in idx], idx, dup, view, cap) for idx in members.values()]


def _keys(
    group: Group, locations: Mapping[str, str | None]
) -> Iterator[tuple[str, tuple[str, ...]]]:
    for c in group.candidates:
        record_id, fingerprint, revision = (
            c.source_record_id,
            c.content_fingerprint or "",
            c.source_revision or "",
        )
        if record_id:
            yield "record", (c.source_uid, record_id)
        if fingerprint:
            yield "fingerprint", (c.record_type, fingerprint)
        location = locations.get(c.source_uid)
        if location and record_id:
            yield "location-record", (location, c.record_type, record_id)
        if record_id and fingerprint and revision:
            yield "view", (c.record_type, record_id, fingerprint, revision)
        entity_id = _meta_string(c, "entity_id")
        if entity_id:
            yield "entity", (_meta_string(c, "entity_type") or c.record_type, entity_id)
        for name in _names(c):
            yield "name", (c.record_type, name)


def _meta_string(c: Candidate, key: str) -> str:
    value = (c.metadata or {}).get(key)
    return value.strip() if isinstance(value, str) else ""


def _names(c: Candidate) -> list[str]:
    """Title and declared aliases, case-folded to whole alphanumeric tokens (two or more)."""
    aliases = (c.metadata or {}).get("aliases")
    if isinstance(aliases, str):
        aliases = [aliases]
    raw = [c.title, *(a for a in aliases or () if isinstance(a, str))]
    names = []
    for text in raw:
        tokens = _NAME_TOKEN.findall(text.lower())
        if len(tokens) >= MIN_NAME_TOKENS:
            names.append(" ".join(tokens))
    return names


def _cluster(
    groups: list[Group], indexes: list[int], dup: _Disjoint, view: _Disjoint, cap: float
) -> Cluster:
    units = _collapse(groups, indexes, dup)
    counted: list[Lineage] = []
    independent, accepted, total = 0, 0, 0.0
    sources: set[str] = set()
    for unit in sorted(units, key=lambda u: (u.derivative, -u.score, u.root)):
        trial = [*counted, *unit.lineages]
        got = independent_count(trial)
        if got <= independent:
            continue
        counted, independent = trial, got
        accepted += 1
        total += unit.score
        sources.update(c.source_id for g in unit.groups for c in g.candidates)
    ceiling = cap * units[0].score
    basis = min(units[0].groups, key=strength)
    return Cluster(
        groups=groups,
        units=units,
        view_classes=_view_classes(groups, indexes, view),
        basis=basis,
        representative=_representative(units[0], basis),
        score=min(total, ceiling),
        corroboration=Corroboration.model_construct(
            independent_units=accepted,
            sources=sorted(sources),
            cap=cap,
            cap_applied=total > ceiling,
        ),
        exact=any(g.exact for g in groups),
        exact_alias=any(g.exact_alias for g in groups),
        exact_identity=any(g.exact_identity for g in groups),
        verdict=groups[0].verdict,
    )


def _collapse(groups: list[Group], indexes: list[int], dup: _Disjoint) -> list[Unit]:
    if len(groups) == 1:  # most clusters
        return [Unit([groups[0]], list(groups[0].lineages), groups[0].score, groups[0].root)]
    by_rep: dict[int, Unit] = {}
    for group, i in zip(groups, indexes, strict=True):
        unit = by_rep.get(dup.find(i))
        if unit is None:
            by_rep[dup.find(i)] = Unit([group], list(group.lineages), group.score, group.root)
            continue
        unit.groups.append(group)
        unit.lineages += group.lineages
        unit.score = max(unit.score, group.score)
        unit.root = min(unit.root, group.root)
    return sorted(by_rep.values(), key=lambda u: (-u.score, u.root))


def _view_classes(groups: list[Group], indexes: list[int], view: _Disjoint) -> list[list[Group]]:
    if len(groups) == 1:
        return [[groups[0]]]
    by_rep: dict[int, list[Group]] = {}
    for group, i in zip(groups, indexes, strict=True):
        by_rep.setdefault(view.find(i), []).append(group)
    classes = [sorted(members, key=strength) for members in by_rep.values()]
    return sorted(classes, key=lambda members: members[0].root)


def _representative(unit: Unit, basis: Group) -> Group:
    """The document-chunk rule: a previewed chunk yields to a matched chunk of the same record.

    Only between chunks of one document in one source; structured records and
    an empty excerpt kind (no claim) keep the score basis.
    """
    shown = basis.primary
    if (
        shown.record_type != "document"
        or shown.excerpt_kind != ExcerptKind.preview
        or not shown.source_record_id
    ):
        return basis
    matched = [
        g
        for g in unit.groups
        if g.primary.record_type == "document"
        and g.primary.excerpt_kind == ExcerptKind.matched
        and g.primary.source_uid == shown.source_uid
        and g.primary.source_record_id == shown.source_record_id
    ]
    return min(matched, key=strength) if matched else basis
