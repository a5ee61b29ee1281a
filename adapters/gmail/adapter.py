"""The gmail adapter: one Gmail account through the REST API, or a Takeout mbox.

Records are threads (``record_type: message``) behind locators
``<source_id>:thread/<thread id>``. Search returns pointers — subject,
senders, flags — never bodies; ``recall/expand`` reads the thread. Nothing is
ever written to the mailbox. The API client (httpx, google-auth) and the
mbox index load on first use, not at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio.to_thread

from adapter_sdk import (
    Adapter,
    AdapterSkipReason,
    AsOfSupport,
    Capability,
    ErrorCode,
    ExpandParams,
    ExpandResult,
    FreshnessMode,
    HealthParams,
    HealthResult,
    InitializeParams,
    Manifest,
    QueryMode,
    RefreshParams,
    RelevanceBasis,
    RpcError,
    SearchOutcome,
    SearchParams,
    SearchResult,
    Sensitivity,
)
from adapters.gmail.query import parse_question
from adapters.gmail.settings import API, RECORD_TYPE, SETTINGS_SCHEMA, GmailConfig, load_config
from adapters.gmail.threads import thread_id_of

if TYPE_CHECKING:
    from adapters.gmail.live import ApiSource
    from adapters.gmail.mbox_source import MboxSource

ADAPTER_ID = "recall-gmail/1"
MAX_CONCURRENCY = 4
UNSUPPORTED_FILTERS = ("entities", "project")
SUPPORTED_FILTERS = ("record_types", "since", "until")


class GmailAdapter(Adapter):
    """Handlers are ``async``: the SDK runs them inline, so the API mode's concurrent
    requests and a cancel share one event loop; mbox work goes to a worker thread."""

    def __init__(self) -> None:
        self.config: GmailConfig | None = None
        self._api: ApiSource | None = None
        self._mbox: MboxSource | None = None

    def initialize(self, params: InitializeParams) -> Manifest:
        config = load_config(params)
        self.config = config
        live = config.mode == API
        capabilities = [Capability.search, Capability.expand]
        if not live:
            capabilities.append(Capability.checkpoint)
        return Manifest(
            protocol_version=1,
            adapter_id=ADAPTER_ID,
            display_name="Gmail" if live else "Gmail (Takeout mbox)",
            record_types=[RECORD_TYPE],
            query_modes=[QueryMode.lexical],
            freshness_modes=[FreshnessMode.live if live else FreshnessMode.indexed],
            as_of_support=AsOfSupport.filter,
            relevance_basis=RelevanceBasis.lexical_span,
            capabilities=capabilities,
            sensitivity=Sensitivity.confidential,
            max_concurrency=MAX_CONCURRENCY,
            freshness_policy=(
                "live: every search asks Gmail; threads are read as pointers (headers only)"
                if live else
                "indexed: the mbox is indexed in the workdir and caught up on every request "
                "(appended mail is read from the stored offset)"
            ),
            settings_schema=SETTINGS_SCHEMA,
        )

    # -- search ------------------------------------------------------------

    async def search(self, params: SearchParams) -> SearchResult:  # type: ignore[override]
        config = self._config
        filters = params.filters
        if filters.record_types and RECORD_TYPE not in filters.record_types:
            return _skipped(AdapterSkipReason.record_type_mismatch,
                            {"record_types_supported": [RECORD_TYPE]})
        unsupported = [name for name in UNSUPPORTED_FILTERS if getattr(filters, name)]
        if unsupported:
            return _skipped(AdapterSkipReason.filter_unsupported, {
                "unsupported_filters": unsupported,
                "supported_filters": list(SUPPORTED_FILTERS),
            })
        query = parse_question(params.query)
        if query.is_empty:
            return _skipped(AdapterSkipReason.not_applicable, {"query_term_count": 0})
        limit = min(params.limit or config.max_candidates, config.max_candidates)
        if config.mode == API:
            return await self._api_source().search(params, query, limit)
        return await anyio.to_thread.run_sync(
            self._mbox_source().search, params, query, limit, abandon_on_cancel=True)

    # -- expand ------------------------------------------------------------

    async def expand(self, params: ExpandParams) -> ExpandResult:  # type: ignore[override]
        thread_id = thread_id_of(params.locator.split(":", 1)[1])
        if thread_id is None:
            raise RpcError(
                ErrorCode.locator_unknown,
                f"{params.locator!r} does not name a Gmail thread: expected <source>:thread/<id>",
            )
        if self._config.mode == API:
            return await self._api_source().expand(params, thread_id)
        return await anyio.to_thread.run_sync(
            self._mbox_source().expand, params, thread_id, abandon_on_cancel=True)

    # -- health and refresh --------------------------------------------------

    async def health(self, params: HealthParams) -> HealthResult:  # type: ignore[override]
        if self._config.mode == API:
            return await self._api_source().health(params)
        return await anyio.to_thread.run_sync(
            self._mbox_source().health, params, abandon_on_cancel=True)

    async def refresh(self, params: RefreshParams) -> HealthResult:  # type: ignore[override]
        if self._config.mode == API:  # nothing is indexed: report health
            return await self._api_source().health(HealthParams(deadline=params.deadline))
        return await anyio.to_thread.run_sync(
            self._mbox_source().refresh, params, abandon_on_cancel=True)

    async def shutdown(self) -> None:  # type: ignore[override]
        if self._api is not None:
            await self._api.close()
        if self._mbox is not None:
            self._mbox.close()

    # -- shared ------------------------------------------------------------

    @property
    def _config(self) -> GmailConfig:
        if self.config is None:
            raise RpcError(ErrorCode.invalid_request, "gmail adapter is not initialized")
        return self.config

    def _api_source(self) -> ApiSource:
        if self._api is None:
            from adapters.gmail.live import ApiSource

            self._api = ApiSource(self._config)
        return self._api

    def _mbox_source(self) -> MboxSource:
        if self._mbox is None:
            from adapters.gmail.mbox_source import MboxSource

            self._mbox = MboxSource(self._config)
        return self._mbox


def _skipped(reason: AdapterSkipReason, diagnostics: dict[str, Any]) -> SearchResult:
    return SearchResult(candidates=[], outcome=SearchOutcome.skipped, reason=reason,
                        diagnostics=diagnostics)
