"""Why a result ranks where it does: its prior, corroboration, freshness, reranker,
folder rank and temporal verdict."""

from __future__ import annotations

from datetime import datetime

from adapter_sdk.protocol import MatchSignal
from adapter_sdk.wire import Field
from broker.contracts.model import Model
from broker.vocabulary import RANK_CONSTANT, Clock, Verdict


class Prior(Model):
    base: float
    intent: float
    rule: str | None = None
    effective: float


class Corroboration(Model):
    independent_units: int
    sources: list[str]
    cap: float
    cap_applied: bool


class Freshness(Model):
    mode: str | None = None
    source_revision: str | None = None
    index_generation: str | None = None
    index_model: str | None = None
    index_config: str | None = None
    observed_at: datetime | None = None
    confirmed_at: datetime | None = None
    as_of_honored: str | None = None


class Reranker(Model):
    used: bool = False
    model: str | None = None
    delta: float | None = None
    rank_before: int | None = None


class LegRank(Model):
    """One source's rank of a record, among the sources that search its location."""

    source_id: str
    local_rank: int


class FolderRank(Model):
    """Where two sources search one location (the notes source and its meaning leg):
    each one's rank of the record, and its rank in the location's one fused list,
    the place whose score cross-source fusion gave it."""

    location: str
    legs: list[LegRank]
    rank: int
    weak_lexical_match: float | None = None
    """Set when the location's best lexical match was too weak to order it (its relevance):
    the rank is then the meaning leg's order (``broker.fusion.folder``)."""


class TemporalExplanation(Model):
    """The verdict, the clock that decided it, and the inputs it was decided from."""

    verdict: Verdict
    clock: Clock = Clock.valid_time
    evaluated_at: datetime
    """The valid-time instant."""
    known_at: datetime | None = None
    """The transaction-time instant (the request's ``as_of``); absent: the sources as they are."""
    recorded_at: datetime | None = None
    """When the source recorded the record (its ``event_time``), read on the transaction clock."""
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    supersedes: list[str] | None = None
    claimed_by: list[str] | None = None
    """``ambiguous_supersession``: the successors that each claim to replace the record."""
    note: str | None = None


class Explanation(Model):
    source_uid: str
    source_id: str
    local_rank: int
    local_pool_size: int
    match_signals: list[MatchSignal] = Field(default_factory=list)
    prior: Prior
    relevance: float | None = None
    lineage_root: str
    corroboration: Corroboration
    freshness: Freshness = Field(default_factory=Freshness)
    reranker: Reranker = Field(default_factory=Reranker)
    folder: FolderRank | None = None
    exact_promoted: bool = False
    score: float
    rank_constant: int = RANK_CONSTANT
    temporal: TemporalExplanation | None = None
