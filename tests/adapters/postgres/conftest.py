"""A real PostgreSQL database with a mapped table, and real ``recall`` processes over it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.fixture_config import settings_table, source_table, toml_value
from tests.support.postgres import Server, pg_database, pg_server, run_sql
from tests.support.recall_workspace import workspace_environ

__all__ = ["pg_database", "pg_server"]

RECALL = str(Path(sys.executable).parent / "recall")
REPO = Path(__file__).resolve().parents[3]
DSN_ENV = "RECALL_KB_DSN"

ARTICLES = """
CREATE TABLE articles (
  id integer PRIMARY KEY,
  title text NOT NULL,
  body text NOT NULL,
  updated_at timestamptz NOT NULL,
  kind text NOT NULL DEFAULT 'article',
  valid_until timestamptz,
  replaced_by integer,
  owner text NOT NULL DEFAULT 'recall_reader',
  search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', title), 'A') || to_tsvector('english', body)
  ) STORED
);
CREATE INDEX articles_search ON articles USING gin (search);
INSERT INTO articles (id, title, body, updated_at, valid_until, replaced_by, owner) VALUES
 (1, 'Backup policy', 'Nightly database backups run at 02:00 and are kept for thirty days.',
  '2025-03-01T00:00:00Z', NULL, NULL, 'recall_reader'),
 (2, 'Old backup policy', 'Weekly database backups were kept for a year.',
  '2024-01-01T00:00:00Z', NULL, 1, 'recall_reader'),
 (3, 'Kubernetes outage postmortem', 'The cluster lost quorum after an etcd upgrade; restore took an hour.',
  '2025-02-01T00:00:00Z', NULL, NULL, 'recall_reader'),
 (4, 'Restore drill', 'Quarterly restore drill: restore the newest backup and compare checksums.',
  '2025-04-01T00:00:00Z', NULL, NULL, 'recall_reader'),
 (5, 'Tape backups', 'Tape backups were retired at the end of 2020.',
  '2019-06-01T00:00:00Z', '2020-12-31T00:00:00Z', NULL, 'recall_reader'),
 (6, 'Payroll secrets', 'The payroll backup encryption key rotates monthly.',
  '2025-01-15T00:00:00Z', NULL, NULL, 'recall_other');
GRANT SELECT ON articles TO recall_reader, recall_other, recall_bypass;
"""

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
# A view that takes a second per row: a search of it is still running when a test acts.
SLOW_VIEW = """
CREATE FUNCTION slow_body(body text) RETURNS text LANGUAGE sql VOLATILE AS
  $$ SELECT pg_sleep(1); SELECT body $$;
CREATE VIEW slow_articles WITH (security_invoker = on) AS SELECT id, title, slow_body(body) AS body, updated_at FROM articles;
GRANT SELECT ON slow_articles TO recall_reader;
"""


@dataclass
class Workspace:
    """A recall configuration on disk whose sources read one test database."""

    root: Path
    env: dict[str, str]
    secrets: list[str] = field(default_factory=list)

    def recall(self, *args: str, timeout: float = 90, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [RECALL, *args], capture_output=True, text=True, env={**self.env, **(env or {})},
            cwd=self.root, timeout=timeout,
        )

    def query(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
        """``recall query --json``: exit code, parsed answer, and everything printed."""
        done = self.recall("query", "--json", *args, env=env)
        printed = done.stdout + done.stderr
        return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {}, printed


def write_workspace(root: Path, dsn: str, sources: dict[str, dict[str, Any]], secrets: list[str]) -> Workspace:
    """One postgres source per entry (source id → settings, plus optional source keys under ``_keys``)."""
    config_dir = root / "config" / "recall"
    config_dir.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    for index, (source_id, spec) in enumerate(sources.items()):
        spec = dict(spec)
        keys = {"sensitivity": "internal", "timeout_ms": 5000, **spec.pop("_keys", {})}
        uid = f"PGTEST{index:04d}{source_id.upper()[:8]}"
        table = source_table(uid, source_id, "postgres", "", **keys)
        table = [line for line in table if not line.startswith("location")]
        lines += [*table, *settings_table({"dsn_env": DSN_ENV, **spec}), ""]
    lines += ["[profiles.default]", f"sources = {toml_value(list(sources))}", 'max_sensitivity = "internal"']
    (config_dir / "config.toml").write_text("\n".join(lines) + "\n")
    return Workspace(root, {**workspace_environ(root), DSN_ENV: dsn}, secrets)


@pytest.fixture
def articles_db(pg_server: Server, pg_database: str) -> str:
    """The test database with the ``articles`` table loaded."""
    run_sql(pg_server.dsn("admin", pg_database), ARTICLES)
    return pg_database


@pytest.fixture
def make_workspace(tmp_path: Path, pg_server: Server, articles_db: str) -> Callable[..., Workspace]:
    """A workspace over ``articles`` connecting as ``role`` (default the reader)."""

    def make(role: str = "recall_reader", password: str | None = None, **sources: dict[str, Any]) -> Workspace:
        dsn = pg_server.dsn(role, articles_db, password)
        used = password if password is not None else (
            pg_server.admin_password if role == "admin" else pg_server.passwords[role]
        )
        sources = sources or {"kb": {"table": "articles", "columns": COLUMNS}}
        return write_workspace(tmp_path, dsn, sources, [dsn, used])

    return make


@pytest.fixture
def workspace(make_workspace: Callable[..., Workspace]) -> Iterator[Workspace]:
    yield make_workspace()


def assert_no_secret(ws: Workspace, printed: str) -> None:
    for secret in ws.secrets:
        assert secret not in printed
