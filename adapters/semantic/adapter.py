"""The semantic adapter: a second source over a notes folder, ranked by meaning.

It answers the questions whose words the answer does not share (a synonym, a
description for a name), which no lexical rule can. Every chunk of the folder,
chunked as the notes adapter chunks it, is embedded (``encoders.py``: the default
model is all-MiniLM-L6-v2 in int8, run by onnxruntime) in a background thread
started at ``initialize``, whenever the folder changed before a search
(``freshness.py``) or, in an adapter a long-lived broker keeps, as the folder watch
reports a change (``watching.py``, the notes source's watch), and at ``refresh``, which
waits for it: ``recall refresh`` builds the embeddings. One thread does this work; a
rescan asked for while it runs is done when it is through, so no change is lost. A
search embeds only the question and compares it with the embeddings built so far;
while chunks are pending or a scan is under way it answers ``partial`` (with how many
are pending), never a complete success, and a handful of pending chunks (a note just
written) is waited for.

Admission (``admission.py``): a chunk is a candidate when its similarity stands
above the question's background similarity to the corpus by a margin, so the
bar adapts to the corpus instead of being one cosine for all; a chunk whose note
holds no word of the question (``shared_words.py``) must stand out by a larger
margin. ``relevance`` is
the similarity (``relevance_basis = vector_similarity``), and each candidate
names the lexical source's chunk it projects (``derived_from``), so the broker
fuses the two legs by reciprocal rank into one result per chunk.

A cold start maps the snapshot a refresh or a resident adapter last served
(``served_file.py``) when the folder's notes are exactly those it was built from,
instead of rebuilding it from the store.

Excerpts (``excerpts.py``): the best hits show the sentences of their chunk most like
the question, not the chunk's first line.

Ranking: the admitted chunks by similarity, best first. A long note may fill
much of the list; the broker shows it as one result and lists its chunks only
while they outrank the next result (``broker.fusion.explain``), so its weak
chunks never stand ahead of another note's best one, and each chunk's rank
here stays its true similarity rank, which fusion reads.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adapter_sdk import (
    Adapter,
    AdapterSkipReason,
    AsOfSupport,
    Candidate,
    Capability,
    CheckpointProgress,
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
    current_cancellation,
    log,
    long_lived,
)
from adapters.semantic.admission import MIN_MARGIN, admission
from adapters.semantic.encoders import DEFAULT_MODEL, MODELS
from adapters.semantic.excerpts import SentenceExcerpts
from adapters.semantic.index import Pending, VectorIndex
from adapters.semantic.note_bytes import NoteReader
from adapters.semantic.shared_words import NoteWords, question_terms
from adapters.semantic.watching import FolderRescans

if TYPE_CHECKING:
    from adapter_sdk.folder.watch import Watcher

ADAPTER_ID = "recall-semantic/1"
DEFAULT_LIMIT = 20
ANSWER_RESERVE_S = 0.25  # of a deadline, kept for answering after a wait
WAIT_PENDING_BELOW = 64  # a search waits for a build this small (a note just written)
WAIT_PENDING_S = 2.0
EXCERPT_RESERVE_S = 0.5  # of a deadline: with less left, hits keep their preview
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
        "model": {
            "type": "string",
            "enum": sorted(MODELS),
            "default": DEFAULT_MODEL,
            "description": "The embedding model (eval/README.md compares them).",
        },
        "min_margin": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "default": MIN_MARGIN,
            "description": "How far above the question's median similarity to the corpus a"
            " chunk's similarity must be for it to be a candidate.",
        },
    },
}


class SemanticAdapter(Adapter):
    def __init__(self) -> None:
        self.index: VectorIndex | None = None
        self.source_id = ""
        self.lexical_source = "notes"
        self.margin = MIN_MARGIN
        self._builder: threading.Thread | None = None  # the build thread while it has work
        self._build_lock = threading.Lock()
        self._rescan_due = False  # a change was reported: the folder is to be scanned again
        self._scanning = False  # the build thread is scanning the folder for changed notes
        self.watcher: Watcher | None = None
        self._sentence_excerpts: SentenceExcerpts | None = None
        self._note_words: NoteWords | None = None
        self._notes_read: NoteReader | None = None

    def initialize(self, params: InitializeParams) -> Manifest:
        from adapters.semantic.encoders import missing

        settings = dict(params.settings or {})
        unknown = set(settings) - set(SETTINGS_SCHEMA["properties"])
        if unknown:
            raise RpcError(ErrorCode.invalid_params, f"unknown settings: {', '.join(sorted(unknown))}")
        self.lexical_source = str(settings.get("lexical_source", "notes"))
        self.margin = float(settings.get("min_margin", MIN_MARGIN))
        model = str(settings.get("model", DEFAULT_MODEL))
        if model not in MODELS:
            raise RpcError(ErrorCode.invalid_params, f"unknown model {model!r}; one of {', '.join(sorted(MODELS))}")
        if not params.location or not Path(params.location).is_dir():
            raise RpcError(
                ErrorCode.invalid_params,
                f"location {params.location!r} is not a folder; point the source at a notes folder",
            )
        absent = missing(model)
        if absent:
            raise RpcError(
                ErrorCode.source_unavailable,
                f"the {model} model needs {', '.join(absent)}, which is not installed;"
                f" add it with: pip install {' '.join(absent)}",
            )
        self.source_id = params.source_id
        store_dir = str(settings.get("store_dir") or params.workdir)
        self.index = VectorIndex(str(Path(params.location).resolve()), store_dir, model, resident=long_lived())
        self.index.load_encoder_in_background()  # beside reading the store: a cold query needs both
        pending = self.index.prepare()  # the snapshot of what is embedded, before any search
        self._start_build(pending)
        if long_lived():  # a broker that keeps it (resident, serve, mcp): watch the folder
            if pending is None:
                self.index.save_served()  # the next cold start maps what this one rebuilt
            self._watch()
        return Manifest(
            protocol_version=1,
            adapter_id=ADAPTER_ID,
            display_name="Notes by meaning",
            record_types=["document"],
            query_modes=[QueryMode.semantic],
            freshness_modes=[FreshnessMode.indexed],
            freshness_policy="indexed; a watched folder (the adapter of a resident broker, recall"
            " serve or recall mcp) has changed notes embedded as they happen; an unwatched one has its"
            " folders and recent notes checked before each search and a changed note embedded again"
            " (a handful of chunks is waited for, watched or not); recall refresh embeds every change",
            as_of_support=AsOfSupport.none,
            relevance_basis=RelevanceBasis.vector_similarity,
            capabilities=[Capability.search, Capability.expand, Capability.checkpoint],
            sensitivity=Sensitivity.internal,
            settings_schema=SETTINGS_SCHEMA,
        )

    def _start_build(self, pending: Pending | None = None, rescan: bool = False) -> None:
        """Embed what is new on the build thread: ``pending`` as ``prepare`` returned it,
        then (``rescan``) whatever a fresh scan of the folder finds. A rescan asked for
        while the thread runs is done by it when it is through with what it has."""
        index = self._index()
        with self._build_lock:
            self._rescan_due |= rescan
            if self.building or (pending is None and not self._rescan_due):
                return
            self._builder = threading.Thread(
                target=self._build, args=(index, pending), name="semantic-index", daemon=True
            )
            self._builder.start()

    def _build(self, index: VectorIndex, work: Pending | None) -> None:
        while True:
            if work is not None:
                index.embed(work)
            with self._build_lock:
                if not self._rescan_due:
                    self._builder = None  # under the lock: a rescan asked for later starts a thread
                    return
                self._rescan_due = False
                self._scanning = True
            try:
                work = index.prepare()
            finally:
                self._scanning = False

    def _watch(self) -> None:
        """Watch the folder as the notes source does; every change it reports asks for a
        rescan (``watching.py``)."""
        from adapter_sdk.folder.watch import Watcher

        index = self._index()
        if self.watcher is not None:
            return

        def known_dir(rel: str) -> bool:
            return index.watermark is not None and rel in index.watermark.dirs

        rescans = FolderRescans(lambda: self._start_build(rescan=True), lambda: index.scanned_from)
        self.watcher = Watcher(index.root, index.scan_settings, rescans, known_dir)
        self.watcher.start()

    def _index(self) -> VectorIndex:
        if self.index is None:
            raise RpcError(ErrorCode.invalid_request, "recall/initialize must come first")
        return self.index

    @property
    def building(self) -> bool:
        """The build thread has work: chunks to embed, or a scan under way or due."""
        builder = self._builder
        return builder is not None and builder.is_alive()

    def _wait_for_build(self, seconds: float) -> None:
        builder = self._builder
        if builder is None or seconds <= 0:
            return
        cancellation = current_cancellation()
        stop = time.monotonic() + seconds
        while builder.is_alive() and not cancellation.requested and time.monotonic() < stop:
            builder.join(min(0.05, max(0.0, stop - time.monotonic())))

    def _catch_up(self, deadline: datetime) -> None:
        """Before a search: a folder that changed since the last scan is scanned again and
        its new chunks embedded; a small build (a note just written) is waited for. A
        watched folder is not checked: the watch has asked for every rescan it needs, as
        the notes source's does (about 3 ms saved at 10,000 notes)."""
        index = self._index()
        watched = self.watcher is not None and self.watcher.watching
        if not watched and index.watermark is not None and index.watermark.moved():
            self._start_build(rescan=True)
        if self.building and index.snapshot() is not None:  # a first build is never waited for
            self._wait_for_build(min(WAIT_PENDING_S, _seconds_left(deadline) - ANSWER_RESERVE_S)
                                 if index.pending < WAIT_PENDING_BELOW else 0.0)

    def _note_reader(self, index: VectorIndex) -> NoteReader:
        """One reader for the shared-word check and the excerpts: a note read once per search."""
        if self._notes_read is None:
            self._notes_read = NoteReader(index.root)
        return self._notes_read

    def _excerpts(self, index: VectorIndex) -> SentenceExcerpts:
        if self._sentence_excerpts is None:
            self._sentence_excerpts = SentenceExcerpts(self._note_reader(index), index.encoder)
        return self._sentence_excerpts

    def search(self, params: SearchParams) -> SearchResult:
        import numpy as np

        index = self._index()
        record_types = params.filters.record_types
        if record_types is not None and "document" not in record_types:
            return SearchResult(
                candidates=[], outcome=SearchOutcome.skipped,
                reason=AdapterSkipReason.record_type_mismatch,
            )
        self._catch_up(params.deadline)
        snapshot = index.snapshot()
        diagnostics: dict[str, Any] = {"query_mode": "semantic", "model": index.model_key}
        if params.as_of is not None:
            diagnostics["as_of"] = "not_supported"
        if index.elsewhere:
            diagnostics["detail"] = "another process is embedding this folder's notes"
        if snapshot is not None and snapshot.mapped:
            diagnostics["snapshot"] = "mapped from the served file"
        if index.last_error:
            raise RpcError(ErrorCode.source_unavailable, f"semantic index failed: {index.last_error}")
        pending = index.pending if self.building else 0
        if pending:
            diagnostics["pending_chunks"] = pending
        reason = "index_building" if self.building else None
        partial = snapshot is None or self.building
        if snapshot is None or not snapshot.chunks or not params.query.strip():
            return SearchResult(
                candidates=[], outcome=SearchOutcome.partial if partial else SearchOutcome.success,
                diagnostics=diagnostics, reason=reason if partial else None,
            )
        if index.encoder_within(_seconds_left(params.deadline) - ANSWER_RESERVE_S) is None:
            diagnostics["detail"] = ("the model is being prepared for this machine (once, a few seconds);"
                                     " recall refresh prepares it ahead")
            return SearchResult(candidates=[], outcome=SearchOutcome.partial, diagnostics=diagnostics,
                                reason="model_loading")
        query = index.embed_query(params.query)
        similarity = snapshot.matrix @ query
        bar = admission(similarity, self.margin)
        diagnostics["admission"] = bar.explain()
        limit = params.limit or DEFAULT_LIMIT
        pool = min(limit, len(similarity))
        if len(similarity) > pool:  # the top of the pool in linear time, then only those sorted
            top = np.argpartition(-similarity, pool - 1)[:pool]
            order = top[np.argsort(-similarity[top], kind="stable")]
        else:
            order = np.argsort(-similarity, kind="stable")
        cleared = [int(i) for i in order if similarity[i] >= bar.least_similarity]
        if self._note_words is None:
            self._note_words = NoteWords(self._note_reader(index))
        terms = question_terms(params.query)
        shares = {i: self._note_words.shares_a_word(snapshot.chunks[i], terms) for i in cleared}
        # a note near the question (the pool ranked) holds a word of it: else it is about
        # something the folder does not hold, and the model alone vouches for nothing
        anchored = any(shares.values()) or self._note_words.any_shares(
            (snapshot.chunks[int(i)] for i in order), terms)
        admitted = [i for i in cleared
                    if shares[i] or (anchored and similarity[i] >= bar.least_similarity_meaning_only)]
        diagnostics["best_similarity"] = round(float(similarity[order[0]]), 4) if len(order) else None
        diagnostics["admitted"] = len(admitted)
        diagnostics["question_words_nearby"] = anchored
        if len(admitted) < len(cleared):
            diagnostics["withheld_meaning_only"] = len(cleared) - len(admitted)
        hits = [snapshot.chunks[i] for i in admitted]
        excerpts: list[str | None] = [None] * len(hits)
        if _seconds_left(params.deadline) > EXCERPT_RESERVE_S:
            excerpts = self._excerpts(index).excerpts(hits, query)
        observed = datetime.now(UTC)
        candidates = []
        for rank, (i, chunk, matched) in enumerate(zip(admitted, hits, excerpts, strict=True), start=1):
            local = f"{chunk.path}#L{chunk.start_line}-L{chunk.end_line}"
            score = round(float(similarity[i]), 6)
            candidates.append(Candidate(
                candidate_id=local,
                source_record_id=chunk.path,
                locator=f"{self.source_id}:{local}",
                derived_from=[f"{self.lexical_source}:{local}"],
                record_type="document",
                title=chunk.title,
                excerpt=matched or chunk.preview or None,
                excerpt_kind=ExcerptKind.matched if matched else ExcerptKind.preview if chunk.preview else None,
                local_rank=rank,
                local_score=score,
                relevance=min(max(score, 0.0), 1.0),
                match_signals=[MatchSignal.semantic],
                observed_at=observed,
                source_revision="file:" + chunk.sha256[:12],
                sensitivity=Sensitivity.internal,
                metadata={
                    "path": chunk.path, "similarity": score,
                    "margin": round(score - bar.background, 4), "least_similarity": round(bar.least_similarity, 4),
                    "note_shares_a_word": shares[i],
                },
            ))
        return SearchResult(
            candidates=candidates,
            outcome=SearchOutcome.partial if partial else SearchOutcome.success,
            diagnostics=diagnostics, reason=reason if partial else None,
        )

    def expand(self, params: ExpandParams) -> ExpandResult:
        """The chunk's text as the notes adapter renders it, while the note still has a chunk
        spanning exactly those lines."""
        from adapter_sdk.folder.expand import Section, parse_local, render
        from adapter_sdk.markdown.chunking import parse_note

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
        return self._health()

    def _health(self, progress: CheckpointProgress | None = None) -> HealthResult:
        index = self._index()
        snapshot = index.snapshot()
        checked = datetime.now(UTC)
        if index.last_error:
            return HealthResult(status=HealthStatus.unavailable, checked_at=checked,
                                coverage=IndexCoverage.unknown,
                                diagnostics={"reason": index.last_error})
        pending = index.pending if self.building or snapshot is None else 0
        complete = snapshot is not None and not self.building and not pending
        diagnostics: dict[str, Any] = {"building": self.building, "pending_chunks": pending}
        if index.elsewhere:
            diagnostics["embedding_elsewhere"] = True
        if self.watcher is not None and self.watcher.error:
            diagnostics["watch_unavailable"] = self.watcher.error
        if pending:
            diagnostics["detail"] = f"{pending} chunks not embedded yet"
        elif self._scanning:  # what it finds is not known yet: not complete either
            diagnostics["detail"] = "checking the folder for changed notes"
        return HealthResult(
            status=HealthStatus.healthy if complete else HealthStatus.degraded,
            checked_at=checked,
            coverage=IndexCoverage.complete if complete else IndexCoverage.partial,
            index_model=index.model_key,
            record_count=snapshot.files if snapshot else None,
            indexed_count=len(snapshot.chunks) if snapshot else 0,
            last_success_at=datetime.fromtimestamp(snapshot.built_at, UTC) if snapshot else None,
            checkpoint_progress=progress,
            diagnostics=diagnostics,
        )

    def refresh(self, params: RefreshParams) -> HealthResult:
        """Load the model (preparing it the first time, ``prepared_model.py``), scan the folder
        and embed what it lacks, waiting until shortly before the deadline; what is left
        carries on in the background, stored batch by batch."""
        index = self._index()
        before = index.snapshot()
        try:  # the model is part of what a refresh builds: prepared now, not by the next query
            index.load_encoder()
        except Exception as exc:
            raise RpcError(ErrorCode.source_unavailable, f"the model could not be loaded: {exc}") from None
        self._wait_for_build(_seconds_left(params.deadline) - ANSWER_RESERVE_S)  # one already running
        self._start_build(rescan=True)
        self._wait_for_build(_seconds_left(params.deadline) - ANSWER_RESERVE_S)
        after = index.snapshot()
        advanced = after is not before and index.last_error is None
        if not self.building:
            index.save_served()
            if advanced:
                index.prune_replaced()
        return self._health(CheckpointProgress.advanced if advanced else CheckpointProgress.unchanged)

    def shutdown(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
        if self.building:
            log("semantic index build interrupted by shutdown; embedded chunks are kept")
        else:
            self._index().save_served()  # what a resident adapter embedded since it started


def _seconds_left(deadline: datetime) -> float:
    return (deadline - datetime.now(UTC)).total_seconds()
