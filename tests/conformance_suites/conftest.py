"""The test PostgreSQL, for suites that replay against a database."""

from __future__ import annotations

from tests.support.postgres import pg_database, pg_server

__all__ = ["pg_database", "pg_server"]
