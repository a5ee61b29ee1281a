"""Every way a PostgreSQL source can fail ends in a typed outcome, never an empty success,
and nothing printed carries the connection string or a password."""

from __future__ import annotations

import json
import time

import pytest

from tests.adapters.postgres.conftest import (
    COLUMNS,
    DSN_ENV,
    PLAIN,
    SLOW_VIEW,
    Workspace,
    assert_no_secret,
)
from tests.support.adapter_process import AdapterProcess, deadline_in
from tests.support.postgres import Server, run_sql

WRITING_VIEW = """
CREATE TABLE reads (at timestamptz);
GRANT INSERT ON reads TO recall_reader;
CREATE FUNCTION logged_body(body text) RETURNS text LANGUAGE sql VOLATILE AS
  $$ INSERT INTO reads VALUES (now()); SELECT body $$;
CREATE VIEW logged_articles WITH (security_invoker = on) AS SELECT id, title, logged_body(body) AS body, updated_at FROM articles;
GRANT SELECT ON logged_articles TO recall_reader;
"""


# A source whose health probe fails is not searched: the answer abstains with degraded
# coverage (exit 3) and says why. A search that fails is a failed answer (exit 4).
NOT_SEARCHED = 3
SEARCH_FAILED = 4


def outcome(answer: dict) -> tuple[str, str | None]:
    only = answer["source_outcomes"][0]
    return only["outcome"], only.get("reason")


def explained(ws: Workspace, question: str) -> tuple[int, dict, str]:
    """``recall query --json --explain``: the source ledger says why a source did not answer."""
    return ws.query("--explain", question)


def test_wrong_password_is_denied_without_echoing_it(make_workspace) -> None:
    ws = make_workspace("recall_reader", password="not-the-password")
    ws.secrets.append("not-the-password")

    code, answer, printed = explained(ws, "backups")

    assert code == NOT_SEARCHED, printed
    assert outcome(answer) == ("skipped", "denied")
    assert "password authentication failed" in printed
    assert_no_secret(ws, printed)


def test_superuser_is_refused(make_workspace) -> None:
    ws = make_workspace("admin")

    code, answer, printed = explained(ws, "backups")

    assert code == NOT_SEARCHED, printed
    assert outcome(answer) == ("skipped", "denied")
    assert "refusing to search as role" in printed and "superuser" in printed
    assert "Backup policy" not in printed
    assert_no_secret(ws, printed)


def test_a_role_that_bypasses_row_level_security_is_refused(make_workspace) -> None:
    ws = make_workspace("recall_bypass")

    code, answer, printed = explained(ws, "backups")

    assert code == NOT_SEARCHED, printed
    assert outcome(answer) == ("skipped", "denied")
    assert "BYPASSRLS" in printed
    assert "Backup policy" not in printed


def test_missing_table_names_the_setting(make_workspace) -> None:
    ws = make_workspace(kb={"table": "no_such_table", "columns": COLUMNS})

    code, answer, printed = explained(ws, "backups")

    assert code == NOT_SEARCHED, printed
    assert outcome(answer) == ("skipped", "unhealthy")
    assert "relation no_such_table does not exist" in printed
    assert_no_secret(ws, printed)


def test_missing_column_names_it_and_the_columns_there_are(make_workspace) -> None:
    ws = make_workspace(kb={"table": "articles", "columns": {**PLAIN, "body": "content"}})

    code, answer, printed = explained(ws, "backups")

    assert code == NOT_SEARCHED, printed
    assert outcome(answer) == ("skipped", "unhealthy")
    assert "no column 'content' (columns.body)" in printed
    assert "updated_at" in printed  # the columns it does have


def test_missing_secret_names_the_variable(make_workspace) -> None:
    ws = make_workspace()

    done = ws.recall("query", "--json", "--explain", "backups", env={DSN_ENV: ""})
    code, printed = done.returncode, done.stdout + done.stderr

    assert code == NOT_SEARCHED, printed
    assert f"environment variable {DSN_ENV}" in printed


def test_unreachable_server_is_unavailable(make_workspace, pg_server: Server, articles_db: str) -> None:
    ws = make_workspace()
    closed = pg_server.dsn("recall_reader", articles_db).replace(
        f"port={_port(pg_server)}", "port=1"
    )
    ws.secrets.append(closed)

    done = ws.recall("query", "--json", "--explain", "backups", env={DSN_ENV: closed})
    printed = done.stdout + done.stderr

    assert done.returncode == NOT_SEARCHED, printed
    assert "unreachable" in printed and "Connection refused" in printed
    assert_no_secret(ws, printed)


def test_statement_timeout_is_a_timeout(make_workspace, pg_server: Server, articles_db: str) -> None:
    run_sql(pg_server.dsn("admin", articles_db), SLOW_VIEW)
    ws = make_workspace(kb={"table": "slow_articles", "columns": PLAIN, "_keys": {"timeout_ms": 1500}})

    code, answer, printed = explained(ws, "backups")

    assert code == SEARCH_FAILED, printed
    assert outcome(answer)[0] == "timeout"
    assert "statement timeout" in printed


def test_a_search_that_would_write_is_refused_and_writes_nothing(
    make_workspace, pg_server: Server, articles_db: str
) -> None:
    import psycopg

    run_sql(pg_server.dsn("admin", articles_db), WRITING_VIEW)
    ws = make_workspace(kb={"table": "logged_articles", "columns": PLAIN})

    code, answer, printed = explained(ws, "backups")

    assert code == SEARCH_FAILED, printed
    assert outcome(answer)[0] == "denied"
    assert "read-only transaction" in printed
    with psycopg.connect(pg_server.dsn("admin", articles_db)) as conn:
        assert conn.execute("SELECT count(*) FROM reads").fetchone() == (0,)


def test_cancel_stops_the_statement_on_the_server(pg_server: Server, articles_db: str, tmp_path) -> None:
    import psycopg

    admin = pg_server.dsn("admin", articles_db)
    run_sql(admin, SLOW_VIEW)
    adapter = AdapterProcess("postgres", "kb", expand_detail="full", env={DSN_ENV: pg_server.dsn("recall_reader", articles_db)})
    try:
        adapter.initialize(None, tmp_path, {"dsn_env": DSN_ENV, "table": "slow_articles", "columns": PLAIN})
        adapter.health()
        request = adapter.send(
            "recall/search", {"query": "backups", "filters": {}, "limit": 5, "deadline": deadline_in(60)}
        )
        _wait_for(lambda: _active_searches(admin) == 1, "the search to reach the server")
        _notify(adapter, "recall/cancel", {"id": request})
        reply = adapter.receive(request)
        assert reply["error"]["code"] == -32007
        _wait_for(lambda: _active_searches(admin) == 0, "the server to drop the cancelled statement")
        with psycopg.connect(admin) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        adapter.close()


def _notify(adapter: AdapterProcess, method: str, params: dict) -> None:
    assert adapter.process.stdin is not None
    adapter.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode() + b"\n")
    adapter.process.stdin.flush()


def _port(server: Server) -> str:
    from psycopg.conninfo import conninfo_to_dict

    return str(conninfo_to_dict(server.admin_dsn)["port"])


def _active_searches(admin_dsn: str) -> int:
    import psycopg

    with psycopg.connect(admin_dsn) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'recall-postgres' AND state = 'active'"
        ).fetchone()
    return int(row[0]) if row else 0


def _wait_for(condition, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")

