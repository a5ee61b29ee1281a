"""The explanation block printed under a result by ``--explain``: every populated field, labelled."""

from __future__ import annotations

from datetime import datetime

from broker.contracts import (
    Corroboration,
    Explanation,
    FolderRank,
    Freshness,
    Prior,
    Reranker,
    TemporalExplanation,
)
from broker.render.text import joined, num, signed, stamp

LABEL_WIDTH = 14
UNREPORTED_RELEVANCE = (
    "not reported by this source, so fused as 1 — an untested advantage over sources that report it"
)


def _source(e: Explanation) -> str:
    if e.source_id and e.source_uid:
        return f"{e.source_id} ({e.source_uid})"
    return e.source_id or e.source_uid


def _local_rank(e: Explanation) -> str:
    if not e.local_rank:
        return ""
    if e.local_pool_size > 0:
        return f"{e.local_rank} of {e.local_pool_size}"
    return str(e.local_rank)


def _prior(p: Prior) -> str:
    if not p.effective and not p.base:
        return ""
    if not p.rule:
        return f"{num(p.effective)} (base, no class rule)"
    return f'{num(p.effective)} (base {num(p.base)}, class "{p.rule}" {signed(p.intent)})'


def _relevance(e: Explanation) -> str:
    if e.relevance is None:
        return UNREPORTED_RELEVANCE
    return f"{num(e.relevance)} (scales the prior: how much this record is about the query)"


def _corroboration(c: Corroboration) -> str:
    if not c.independent_units:
        return ""
    unit = "unit" if c.independent_units == 1 else "units"
    text = f"{c.independent_units} independent {unit}"
    if c.sources:
        text += " from " + joined(c.sources)
    if c.cap > 0:
        text += f" (cap {num(c.cap)}{', applied' if c.cap_applied else ''})"
    return text


def _set_fields(fields: tuple[tuple[str, object], ...]) -> list[str]:
    """``label value`` for each field that is set (not None, not empty), in order:
    times stamped, lists joined."""
    return [f"{label} {_field_text(value)}" for label, value in fields if value]


def _field_text(value: object) -> str:
    if isinstance(value, datetime):
        return stamp(value)
    if isinstance(value, list):
        return joined(value)
    return str(value)


def _freshness(f: Freshness) -> str:
    parts = [f.mode] if f.mode else []
    parts += _set_fields(
        (
            ("revision", f.source_revision),
            ("generation", f.index_generation),
            ("model", f.index_model),
            ("index config", f.index_config),
            ("observed", f.observed_at),
            ("confirmed", f.confirmed_at),
            ("as_of", f.as_of_honored),
        )
    )
    return ", ".join(parts)


def _verdict(t: TemporalExplanation | None) -> str:
    """The verdict and every input it was decided from."""
    if t is None:
        return ""
    inputs = _set_fields(
        (
            ("valid time", t.evaluated_at),
            ("transaction time", t.known_at),
            ("recorded", t.recorded_at),
            ("valid from", t.valid_from),
            ("valid to", t.valid_to),
            ("superseded by", t.superseded_by),
            ("supersedes", t.supersedes),
            ("claimed by", t.claimed_by),
            ("note", t.note),
        )
    )
    clock = str(t.clock).replace("_", " ")
    return f"{t.verdict} by {clock} ({'; '.join(inputs)})"


def _reranker(r: Reranker) -> str:
    if not r.used:
        return "not used"
    text = "used" + (f" ({r.model})" if r.model else "")
    if r.rank_before:
        text += f", was rank {r.rank_before}"
    if r.delta:
        text += f", delta {signed(r.delta)}"
    return text


def _folder(f: FolderRank | None) -> str:
    if f is None:
        return ""
    legs = ", ".join(f"{leg.source_id} {leg.local_rank}" for leg in f.legs)
    text = f"rank {f.rank} in {f.location}, fused within it from {legs}"
    if f.weak_lexical_match is not None:
        text += (f"; ordered by meaning, the best lexical match holding little of the question"
                 f" (relevance {f.weak_lexical_match:.2f})")
    return text


def _score(e: Explanation) -> str:
    if not e.score and not e.rank_constant:
        return ""
    text = num(e.score)
    if e.rank_constant > 0:
        text += f" (rank constant {num(e.rank_constant)})"
    if e.exact_promoted:
        text += ", promoted on exact identifier"
    return text


def explanation_block(e: Explanation) -> str:
    rows = (
        ("source", _source(e)),
        ("local rank", _local_rank(e)),
        ("folder rank", _folder(e.folder)),
        ("matches", joined(e.match_signals)),
        ("prior", _prior(e.prior)),
        ("relevance", _relevance(e)),
        ("lineage", e.lineage_root),
        ("corroboration", _corroboration(e.corroboration)),
        ("freshness", _freshness(e.freshness)),
        ("verdict", _verdict(e.temporal)),
        ("reranker", _reranker(e.reranker)),
        ("score", _score(e)),
    )
    return "".join(f"{label + ':':<{LABEL_WIDTH}} {value}\n" for label, value in rows if value)
