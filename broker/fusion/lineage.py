"""Lineage: which original record does a candidate project?

A candidate's own root is its persisted locator ``<source_uid>:<local>``.
Declared ``derived_from`` edges (display locators, resolved through the source
map; unresolvable ones are dropped) are followed within the pool:

* one parent: the root becomes the parent's, and following continues if the
  parent was retrieved too, up to ``LINEAGE_MAX_DEPTH`` edges;
* a cycle: every member takes the smallest root on the cycle, so they agree;
* several parents: a composite keeps its own root and records its ancestors.

A manifest's source-level ``derives_from`` applies only to candidates without a
record-level edge; it never moves a root, it only tells corroboration that the
evidence is not independent of that source.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from broker.contracts import LINEAGE_MAX_DEPTH, Candidate


@dataclass(frozen=True)
class Lineage:
    """A candidate's chain of derivation, followed to its root."""

    root: str
    ancestors: tuple[str, ...] = ()
    depth: int = 0
    source_derives_from: str | None = None
    truncated: str | None = None
    """Why following stopped early: ``max_depth`` or ``cycle``."""
    dropped: tuple[str, ...] = ()
    """``derived_from`` edges naming no configured source."""


def source_of(root: str) -> str:
    return root.split(":", 1)[0]


class LineageGraph:
    def __init__(
        self,
        pool: Sequence[Candidate],
        source_uid_by_id: Mapping[str, str],
        source_derivations: Mapping[str, str],
    ) -> None:
        """``pool`` in candidate order: the first candidate holding a root speaks for it."""
        self._uid_by_id = source_uid_by_id
        self._derivations = source_derivations
        self._by_root: dict[str, Candidate] = {}
        for candidate in pool:
            self._by_root.setdefault(candidate.persisted_locator, candidate)

    def of(self, candidate: Candidate) -> Lineage:
        own = candidate.persisted_locator
        upstream = (
            None if candidate.derived_from else self._derivations.get(candidate.source_uid)
        )
        root, depth, dropped = own, 0, []
        order = [own]
        current = candidate
        while True:
            parents, lost = self._parents(current)
            dropped += lost
            if not parents:
                break
            if len(parents) > 1:
                return Lineage(root, tuple(parents), depth, upstream, None, tuple(dropped))
            (parent,) = parents
            if parent in order:
                return Lineage(min([*order, parent]), (), depth, upstream, "cycle", tuple(dropped))
            if depth + 1 > LINEAGE_MAX_DEPTH:
                return Lineage(root, (), depth, upstream, "max_depth", tuple(dropped))
            order.append(parent)
            root, depth = parent, depth + 1
            retrieved = self._by_root.get(parent)
            if retrieved is None:
                break
            current = retrieved
        return Lineage(root, (), depth, upstream, None, tuple(dropped))

    def _parents(self, candidate: Candidate) -> tuple[list[str], list[str]]:
        roots: list[str] = []
        dropped: list[str] = []
        for edge in candidate.derived_from or ():
            source_id, sep, local = edge.partition(":")
            uid = self._uid_by_id.get(source_id)
            if not sep or not local or uid is None:
                dropped.append(edge)
                continue
            roots.append(f"{uid}:{local}")
        return sorted(set(roots)), dropped


def independent_count(lineages: Iterable[Lineage]) -> int:
    """How much independent evidence a set of lineages is.

    Lineages sharing a root are one record; a composite drawing on a counted
    root, and a candidate whose source declares it projects a source present
    here, are not independent of what they restate.
    """
    roots: dict[str, Lineage] = {}
    sources: set[str] = set()
    for lineage in lineages:
        kept = roots.get(lineage.root)
        if kept is None or lineage.depth < kept.depth:
            roots[lineage.root] = lineage
        sources.add(source_of(lineage.root))
    count = 0
    for lineage in roots.values():
        if any(a in roots for a in lineage.ancestors):
            continue
        if lineage.source_derives_from is not None and lineage.source_derives_from in sources:
            continue
        count += 1
    return count
