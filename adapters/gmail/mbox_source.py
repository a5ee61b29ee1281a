"""mbox mode: a Google Takeout export, indexed in the workdir and searched there.

Every request first lets the index catch up with the file (usually a stat);
threads are Gmail's own (``X-GM-THRID``), so a thread keeps the locator it
has in API mode. Spam and trash are left out, as in API mode's default query.
The index stores Porter stems; a question's terms are matched, counted and
measured by stem (``adapter_sdk.lexical.stemmed``), words sharing one being one
term.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from adapter_sdk import (
    CheckpointProgress,
    ErrorCode,
    ExpandParams,
    ExpandResult,
    HealthParams,
    HealthResult,
    HealthStatus,
    IndexCoverage,
    RefreshParams,
    RpcError,
    SearchOutcome,
    SearchParams,
    SearchResult,
)
from adapter_sdk.fts_admission import admission_tiers
from adapter_sdk.lexical import STEMMED_FTS5_TOKENIZER, stemmed, term_keys, tokenize
from adapter_sdk.relevance import decisive_terms, term_weight, weighted_coverage
from adapter_sdk.relevance import relevance as span_relevance
from adapters.gmail import render, threads
from adapters.gmail.bodies import message_text
from adapters.gmail.mbox_index import (
    BODY_WEIGHT,
    HEADER_WEIGHT,
    DateWindow,
    MboxIndex,
    MessageHit,
    SyncReport,
)
from adapters.gmail.mbox_reader import MalformedMessage, parse_bytes, read_at
from adapters.gmail.query import MailQuery
from adapters.gmail.settings import GmailConfig

SYNC_SHARE = 0.6  # of the time left, what catching up may use before answering
MESSAGE_POOL_PER_RESULT = 8  # best-scoring messages read per wanted thread
MIN_MESSAGE_POOL = 200
MAX_ADMISSION_TERMS = 10
MAX_COUNTED_TEXTS = 4096  # bounds the memory a long-running adapter spends on it
INDEX_CONFIG = f"fts5 {STEMMED_FTS5_TOKENIZER}; header*{HEADER_WEIGHT:g} body*{BODY_WEIGHT:g}; spam,trash hidden"


class MboxSource:
    def __init__(self, config: GmailConfig) -> None:
        assert config.mbox_path is not None
        self.config = config
        self.path = config.mbox_path
        self.index = MboxIndex(config.mbox_path, config.workdir)
        # text (a body, header or pointer) -> its stem counts, so a warm search re-reads none
        self._counted: dict[str, TermCounts] = {}

    def _term_counts(self, text: str) -> TermCounts:
        counts = self._counted.get(text)
        if counts is None:
            if len(self._counted) >= MAX_COUNTED_TEXTS:
                self._counted.clear()
            counts = self._counted[text] = TermCounts.of(text)
        return counts

    def close(self) -> None:
        self.index.close()

    def _catch_up(self, deadline: datetime, *, full: bool = False) -> SyncReport:
        if not self.path.is_file():
            raise RpcError(
                ErrorCode.source_unavailable,
                f"mbox file {self.path} does not exist or is not a file; "
                "point the source's location at a Google Takeout .mbox export",
            )
        remaining = (deadline - datetime.now(UTC)).total_seconds()
        try:
            return self.index.sync(time.monotonic() + remaining * SYNC_SHARE, full=full)
        except OSError as exc:
            raise RpcError(ErrorCode.source_unavailable,
                           f"cannot read mbox file {self.path}: {exc.strerror}") from None

    # -- search ------------------------------------------------------------

    def search(self, params: SearchParams, query: MailQuery, limit: int) -> SearchResult:
        started = time.perf_counter()
        report = self._catch_up(params.deadline)
        filters = params.filters
        as_of = _ts(params.as_of)
        bounds = [b for b in (_ts(filters.until), as_of) if b is not None]
        window = DateWindow(_ts(filters.since), min(bounds) if bounds else None)
        keyed = term_keys(query.terms, stemmed)  # stem → the question's first spelling of it
        stems = set(keyed)
        frequencies, messages = self.index.document_frequencies(stems)
        weights = {stem: term_weight(frequencies[stem], messages) for stem in stems}
        required = _required_terms(query, len(keyed))
        decisive = [keyed[s] for s in sorted(decisive_terms(weights))] if required > 1 else []

        by_thread: dict[str, list[MessageHit]] = {}
        admitted_by = None
        if keyed:
            pool = max(limit * MESSAGE_POOL_PER_RESULT, MIN_MESSAGE_POOL)
            held = [spelling for stem, spelling in keyed.items() if frequencies[stem]]
            admitted_by, hits = self.index.message_hits(
                admission_tiers(list(keyed.values()), held, required, decisive), window, pool
            )
            for hit in hits:
                by_thread.setdefault(hit.thread_id, []).append(hit)
        thread_ids = list(dict.fromkeys([*query.thread_ids, *by_thread]))
        summaries = self.index.threads(thread_ids, DateWindow(until=as_of))

        scored = []
        for tid in thread_ids:
            summary = summaries.get(tid)
            if summary is None:
                continue
            hits = by_thread.get(tid, [])
            pointer = self._term_counts(summary.pointer_text)
            relevance = pointer.relevance(weights)
            seen = pointer.present(stems)
            for hit in hits:
                body = self._term_counts(hit.body)
                relevance = max(relevance, body.relevance(weights))
                seen |= body.present(stems) | self._term_counts(hit.header).present(stems)
            coverage = weighted_coverage(seen, weights) if stems else 1.0
            best = max((hit.score for hit in hits), default=0.0)
            scored.append((tid not in query.thread_ids, -coverage, -best, tid, summary, relevance))
        scored.sort(key=lambda row: row[:4])

        stats = self.index.stats()
        reasons = []
        if not report.complete:
            reasons.append("index_catching_up")
        if stats["malformed"]:
            reasons.append("malformed_messages")
        outcome = SearchOutcome.partial if reasons else SearchOutcome.success
        now = datetime.now(UTC)
        candidates = [
            threads.candidate(summary, rank=rank, source_id=self.config.source_id,
                              terms=query.terms, relevance=relevance, exact=not not_exact,
                              observed_at=now, confirmed=False)
            for rank, (not_exact, _c, _b, _t, summary, relevance)
            in enumerate(scored[:limit], start=1)
        ]
        diagnostics: dict[str, Any] = {
            "transport": "mbox", "query_mode": "lexical", "query_term_count": len(query.terms),
            **_sync_diagnostics(report, stats), "threads_matched": len(scored),
        }
        if admitted_by is not None:
            diagnostics["admitted_by"] = admitted_by
        if query.removed:
            diagnostics["query_terms_removed"] = list(query.removed)
        if required > 1:
            diagnostics["query_terms_required"] = required
        if params.as_of is not None:
            diagnostics["as_of"] = "filter_on_message_date"
        if reasons:
            diagnostics["coverage_reason"] = ", ".join(reasons)
        diagnostics["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 1)
        return SearchResult(candidates=candidates, outcome=outcome, diagnostics=diagnostics,
                            source_watermark=_watermark(stats))

    # -- expand ------------------------------------------------------------

    def expand(self, params: ExpandParams, thread_id: str) -> ExpandResult:
        self._catch_up(params.deadline)
        summary = self.index.threads([thread_id], DateWindow()).get(thread_id)
        ranges = self.index.thread_ranges(thread_id)
        if summary is None or len(ranges) != len(summary.messages):
            raise RpcError(
                ErrorCode.locator_expired,
                f"thread {thread_id} is not in {self.path.name} any more; search again",
            )
        bodies = []
        if params.detail.value != "summary":
            try:
                bodies = [message_text(parse_bytes(read_at(self.path, offset, length)))
                          for offset, length in ranges]
            except (MalformedMessage, OSError):
                raise RpcError(ErrorCode.locator_expired,
                               f"{self.path.name} changed under thread {thread_id}; search again"
                               ) from None
        shown = render.render(summary, bodies, params.detail, params.budget_bytes)
        return ExpandResult(
            content=shown.content, truncated=shown.truncated, truncation_boundary=shown.boundary,
            source_revision=threads.revision(summary),
            provenance=f"{self.path.name} thread {thread_id} ({len(summary.messages)} messages)",
        )

    # -- health and refresh ------------------------------------------------

    def health(self, params: HealthParams, *, full: bool = False) -> HealthResult:
        checked_at = datetime.now(UTC)
        diagnostics: dict[str, Any] = {"transport": "mbox", "mode": "mbox",
                                       "store_identity": self.config.mbox_identity,
                                       "mbox_file": self.path.name}
        try:
            report = self._catch_up(params.deadline, full=full)
        except RpcError as exc:
            if exc.code != ErrorCode.source_unavailable:
                raise
            return HealthResult(status=HealthStatus.unavailable, checked_at=checked_at,
                                coverage=IndexCoverage.unknown,
                                diagnostics={**diagnostics, "reason": exc.message})
        stats = self.index.stats()
        diagnostics.update(_sync_diagnostics(report, stats))
        if stats["malformed_sample"]:
            diagnostics["malformed_sample"] = stats["malformed_sample"]
        whole = report.complete and not stats["malformed"]
        watermark = _watermark(stats)
        return HealthResult(
            status=HealthStatus.healthy if whole else HealthStatus.degraded,
            checked_at=checked_at,
            coverage=IndexCoverage.complete if whole else IndexCoverage.partial,
            last_success_at=checked_at if report.complete else None,
            source_watermark=watermark, index_watermark=watermark,
            index_generation=str(stats["generation"]), index_config=INDEX_CONFIG,
            record_count=int(stats["threads"]), indexed_count=int(stats["messages"]),
            failed_count=int(stats["malformed"]), diagnostics=diagnostics,
        )

    def refresh(self, params: RefreshParams) -> HealthResult:
        before = self.index.stats()["indexed_to"] if self.index.path.exists() else 0
        health = self.health(HealthParams(deadline=params.deadline), full=bool(params.full))
        after = self.index.stats()["indexed_to"]
        assert isinstance(before, int) and isinstance(after, int)
        progress = (CheckpointProgress.advanced if after > before else
                    CheckpointProgress.regressed if after < before else
                    CheckpointProgress.unchanged)
        return health.model_copy(update={"checkpoint_progress": progress})


@dataclass(frozen=True, slots=True)
class TermCounts:
    """A text's length in tokens and how often each stem occurs in it: what relevance
    (``adapter_sdk.relevance``, ``key=stemmed``) and term coverage are measured from."""

    length: int
    occurrences: dict[str, int]

    @classmethod
    def of(cls, text: str) -> TermCounts:
        tokens = tokenize(text)
        occurrences: dict[str, int] = {}
        for token, count in Counter(tokens).items():
            stem = stemmed(token)
            occurrences[stem] = occurrences.get(stem, 0) + count
        return cls(len(tokens), occurrences)

    def present(self, stems: set[str]) -> set[str]:
        return {stem for stem in stems if stem in self.occurrences}

    def relevance(self, weights: dict[str, float]) -> float:
        """``lexical_relevance(terms, tokenize(text), key=stemmed, weights=weights)``,
        ``weights`` each term's key → its IDF."""
        matched = self.present(set(weights))
        occurrences = sum(self.occurrences[stem] for stem in matched)
        return span_relevance(
            sum(weights[stem] for stem in matched), sum(weights.values()), occurrences, self.length
        )


def _required_terms(query: MailQuery, distinct_terms: int) -> int:
    """A prose question must share two of its words, or one decisive word, with a message,
    so scaffolding can't match."""
    if query.removed and 2 <= distinct_terms <= MAX_ADMISSION_TERMS:
        return 2
    return 1


def _ts(instant: datetime | None) -> float | None:
    if instant is None:
        return None
    return (instant if instant.tzinfo else instant.replace(tzinfo=UTC)).timestamp()


def _watermark(stats: dict[str, Any]) -> str:
    newest = stats["newest"]
    return (f"messages={stats['messages']} threads={stats['threads']}"
            f" newest={newest.isoformat() if newest else 'none'}")


def _sync_diagnostics(report: SyncReport, stats: dict[str, Any]) -> dict[str, Any]:
    return {
        "index_action": report.action, "bytes_read": report.bytes_read,
        "messages_indexed_now": report.messages_indexed, "index_complete": report.complete,
        "indexed_messages": stats["messages"], "malformed_messages": stats["malformed"],
    }
