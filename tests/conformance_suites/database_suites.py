"""Suites that read a database: a fresh one loaded from the suite's ``setup.sql``.

The postgres suite replays against the test cluster (``tests.support.postgres``):
a new database is created, ``setup.sql`` is loaded into it, and the variable the
suite's handshakes name (``RECALL_CONFORMANCE_PG_DSN``) is set for the adapter to
a connection as the cluster's ordinary reader role.
"""

from __future__ import annotations

from pathlib import Path

import pytest

DSN_ENV = "RECALL_CONFORMANCE_PG_DSN"


def suite_environment(suite: Path, request: pytest.FixtureRequest) -> dict[str, str] | None:
    """Extra environment the suite's adapter needs, or None when it needs nothing."""
    setup = suite / "setup.sql"
    if not setup.is_file():
        return None
    from tests.support.postgres import run_sql

    server = request.getfixturevalue("pg_server")
    database = request.getfixturevalue("pg_database")
    run_sql(server.dsn("admin", database), setup.read_text(encoding="utf-8"))
    return {DSN_ENV: server.dsn("recall_reader", database)}
