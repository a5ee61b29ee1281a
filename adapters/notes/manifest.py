"""What the notes adapter declares: its manifest at the handshake, and the index
configuration its health names."""

from __future__ import annotations

from adapter_sdk import (
    AsOfSupport,
    Capability,
    FreshnessMode,
    Manifest,
    QueryMode,
    RelevanceBasis,
    Sensitivity,
)
from adapters.notes.search import QUERY_ANALYZER
from adapters.notes.settings import SETTINGS_SCHEMA, NotesSettings
from adapters.notes.store import TITLE_WEIGHT

ADAPTER_ID = "recall-notes/1"
MAX_CONCURRENCY = 4


def notes_manifest(git_snapshots: bool) -> Manifest:
    """The manifest; ``git_snapshots``: ``as_of`` is answered from the notes as committed."""
    return Manifest(
        protocol_version=1,
        adapter_id=ADAPTER_ID,
        display_name="Notes",
        record_types=["document"],
        query_modes=[QueryMode.lexical, QueryMode.exact],
        freshness_modes=[FreshnessMode.indexed],
        as_of_support=AsOfSupport.snapshot if git_snapshots else AsOfSupport.filter,
        relevance_basis=RelevanceBasis.lexical_span,
        capabilities=[Capability.search, Capability.expand, Capability.checkpoint],
        sensitivity=Sensitivity.internal,
        max_concurrency=MAX_CONCURRENCY,
        freshness_policy="indexed; a watched folder applies changes as they happen, an "
        "unwatched one checks its folders and recent notes before each search; every "
        "returned note is verified against the indexed revision",
        settings_schema=SETTINGS_SCHEMA,
    )


def index_config(settings: NotesSettings) -> str:
    """How the index is built and ranked, as health reports it."""
    return (
        "sqlite-fts5/2 chunking=heading tokenizer=porter+unicode61-remove_diacritics2 "
        f"query={QUERY_ANALYZER} "
        f"scoring=bm25-k1.2-b0.75 weights=title:{TITLE_WEIGHT:g},body:1 "
        f"settings={settings.digest}"
    )
