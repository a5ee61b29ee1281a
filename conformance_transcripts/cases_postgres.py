"""Conformance cases for the postgres adapter (``python -m adapters.postgres``).

Re-record with

    python conformance_transcripts/record.py postgres conformance_transcripts/cases_postgres.py

The suite reads a real server: load ``postgres/setup.sql`` into an empty
database and export ``RECALL_CONFORMANCE_PG_DSN`` with a connection string for
it, as a role that is neither a superuser nor BYPASSRLS (the adapter refuses
those). ``tests/conformance_suites`` does this on the test cluster before it
replays the suite. The role's name appears in health and is masked.
"""

from __future__ import annotations

import sys

from adapter_sdk.conformance import CaseSpec
from adapter_sdk.conformance.cases import CaseRequests, cancel_inflight, version_rejection

ARGV = [sys.executable, "-m", "adapters.postgres"]
SOURCE_ID = "kb"
DSN_ENV = "RECALL_CONFORMANCE_PG_DSN"
UNSET_ENV = "RECALL_CONFORMANCE_NO_SUCH_DSN"

COLUMNS = {
    "id": "id",
    "title": "title",
    "body": "body",
    "updated_at": "updated_at",
    "tsvector": "search",
    "valid_to": "valid_until",
    "superseded_by": "replaced_by",
}
PLAIN = {key: COLUMNS[key] for key in ("id", "title", "body", "updated_at")}
ARTICLES = {"dsn_env": DSN_ENV, "table": "articles", "columns": COLUMNS}

CANDIDATE_CLOCKS = ("/result/candidates/*/observed_at", "/result/candidates/*/confirmed_at")
SEARCH_VOLATILE = [*CANDIDATE_CLOCKS, "/result/diagnostics/elapsed_ms"]
# Clock readings; a hash naming the server's host and port; the replaying role.
HEALTH_VOLATILE = [
    "/result/checked_at",
    "/result/last_success_at",
    "/result/diagnostics/store_identity",
    "/result/diagnostics/role",
]

KB = CaseRequests(SOURCE_ID, location=None)  # type: ignore[arg-type]  # the source has no location
initialize = KB.initialize
SHUTDOWN_AFTER_SEARCH = "recall/shutdown after a search is answered with {} and nothing is written after it."


CASES = [
    CaseSpec(
        "handshake",
        "Version range 1..1 negotiates 1; the manifest declares a live source with lexical and "
        "exact queries, as_of as a filter on the updated-at column, and its settings schema.",
        [initialize(**ARTICLES)],
    ),
    version_rejection(KB),
    CaseSpec(
        "bad-settings",
        "Settings are checked at the handshake: no dsn_env, a table without a column mapping, "
        "and an unknown key are each refused with -32602 naming what to set.",
        [
            initialize(table="articles", columns=COLUMNS),
            {**initialize(dsn_env=DSN_ENV, table="articles"), "id": 2},
            {**initialize(**ARTICLES, colour="blue"), "id": 3},
        ],
    ),
    CaseSpec(
        "search-ranked",
        "Free text ranks rows by ts_rank_cd with ts_headline excerpts marked matched; a row id "
        "is an exact-identifier hit; a superseded row carries its successor and an expired one "
        "its valid_to, for the broker to judge.",
        [
            initialize(**ARTICLES),
            KB.search(2, "restore drill checksums"),
            KB.search(3, "3"),
            KB.search(4, "backups"),
        ],
        volatile=SEARCH_VOLATILE,
    ),
    CaseSpec(
        "search-as-of",
        "as_of filters on updated_at: at 2025-03-15 the postmortem existed and the drill "
        "(updated 2025-04-01) did not yet.",
        [initialize(**ARTICLES), KB.search(2, "restore", as_of="2025-03-15T00:00:00Z")],
        volatile=SEARCH_VOLATILE,
    ),
    CaseSpec(
        "search-empty",
        "A query nothing matches is an empty success: the whole table was searched.",
        [initialize(**ARTICLES), KB.search(2, "zeppelin")],
        volatile=SEARCH_VOLATILE,
    ),
    CaseSpec(
        "search-skipped",
        "A record type the source does not hold is skipped before retrieval, with its reason.",
        [initialize(**ARTICLES), KB.search(2, "backups", record_types=["email"])],
    ),
    CaseSpec(
        "search-unavailable",
        "A source whose connection-string variable is unset: the handshake succeeds, the "
        "search is -32000 naming the variable, and health says unavailable.",
        [
            initialize(dsn_env=UNSET_ENV, table="articles", columns=COLUMNS),
            KB.search(2, "backups"),
            KB.health(3),
        ],
        volatile=["/result/checked_at"],
    ),
    CaseSpec(
        "expand-details",
        "Expand one row at summary, excerpt and full, then full within 80 bytes: truncated at "
        "budget_bytes and marked.",
        [
            initialize(**ARTICLES),
            KB.expand(2, "4", "summary"),
            KB.expand(3, "4", "excerpt"),
            KB.expand(4, "4", "full"),
            KB.expand(5, "4", "full", budget_bytes=80),
        ],
    ),
    CaseSpec(
        "expand-expired",
        "A well-formed id no row has is -32003 (search again); a key that cannot be an id is "
        "-32002; a budget below the minimum is -32006.",
        [
            initialize(**ARTICLES),
            KB.expand(2, "999", "full"),
            KB.expand(3, "not-a-number", "full"),
            KB.expand(4, "4", "full", budget_bytes=10),
        ],
    ),
    CaseSpec(
        "health",
        "Health reports healthy, complete coverage, the estimated row count, and that a GIN "
        "index serves searches.",
        [initialize(**ARTICLES), KB.health(2)],
        volatile=HEALTH_VOLATILE,
    ),
    cancel_inflight(
        KB,
        "backups",
        settings={"dsn_env": DSN_ENV, "table": "slow_articles", "columns": PLAIN},
        description="A search of a view that takes a second per row is cancelled in flight and "
        "answered with -32007, never a late result.",
    ),
    CaseSpec(
        "shutdown",
        SHUTDOWN_AFTER_SEARCH,
        [initialize(**ARTICLES), KB.search(2, "backups"), KB.shutdown(3)],
        volatile=SEARCH_VOLATILE,
    ),
]
