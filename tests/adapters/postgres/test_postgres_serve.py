"""``recall serve`` over PostgreSQL: several servers agree, and a warm source survives the
database going away mid-query and coming back."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adapters.postgres.conftest import (
    ARTICLES,
    COLUMNS,
    PLAIN,
    RECALL,
    SLOW_VIEW,
    Workspace,
    assert_no_secret,
    write_workspace,
)
from tests.support.postgres import (
    CLUSTER_SCRIPT,
    Server,
    run_sql,
    start_cluster,
    stop_cluster,
    with_roles,
)

QUESTIONS = ("backups", "restore drill checksums", "kubernetes etcd quorum", "3", "zeppelin")


class Served:
    def __init__(self, ws: Workspace) -> None:
        self.process = subprocess.Popen(
            [RECALL, "serve", "--addr", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ws.env, cwd=ws.root,
        )
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        if not first:
            raise AssertionError(f"recall serve did not start: {self.process.communicate(timeout=10)[1]}")
        self.url = first.rsplit(" at ", 1)[1].strip()
        self.stderr = ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        _, self.stderr = self.process.communicate(timeout=30)


@pytest.fixture
def served(workspace: Workspace) -> Iterator[list[Served]]:
    servers = [Served(workspace), Served(workspace)]
    yield servers
    for server in servers:
        server.stop()


def answer_over(ws: Workspace, server: Served, question: str, *args: str) -> tuple[int, dict]:
    done = ws.recall("query", "--json", "--server", server.url, *args, question)
    answer = json.loads(done.stdout)
    answer.pop("elapsed_ns", None)
    return done.returncode, answer


def test_two_servers_on_one_database_answer_identically(workspace: Workspace, served: list[Served]) -> None:
    first, second = served
    for question in QUESTIONS:
        assert answer_over(workspace, first, question) == answer_over(workspace, second, question), question
    code, answer = answer_over(workspace, first, "backups")
    assert code == 0 and answer["results"][0]["locator"] == "kb:1"


@pytest.fixture
def own_cluster(tmp_path: Path) -> Iterator[tuple[Server, Path]]:
    """A cluster this test may kill: never the one the other tests share."""
    admin, folder = start_cluster()
    try:
        yield with_roles(admin, folder), folder
    finally:
        stop_cluster(folder)


def test_server_killed_mid_query_is_unavailable_and_a_warm_source_reconnects(own_cluster, tmp_path: Path) -> None:
    server, folder = own_cluster
    run_sql(server.dsn("admin", "postgres"), ARTICLES + SLOW_VIEW)
    reader = server.dsn("recall_reader", "postgres")
    ws = write_workspace(
        tmp_path,
        reader,
        {
            "kb": {"table": "articles", "columns": COLUMNS, "_keys": {"timeout_ms": 20000}},
            "slow": {"table": "slow_articles", "columns": PLAIN, "_keys": {"timeout_ms": 20000}},
        },
        [reader, server.passwords["recall_reader"]],
    )
    serve = Served(ws)
    try:
        code, warm = answer_over(ws, serve, "restore drill", "--scope", "source=kb")
        assert code == 0 and warm["results"], warm

        in_flight = subprocess.Popen(
            [RECALL, "query", "--json", "--explain", "--budget-ms", "30000", "--scope", "source=slow",
             "--server", serve.url, "backups"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ws.env, cwd=ws.root,
        )
        _wait_for_active_search(server.dsn("admin", "postgres"))
        subprocess.run(["bash", str(CLUSTER_SCRIPT), "kill", str(folder / "cluster")], check=True, timeout=60)
        out, err = in_flight.communicate(timeout=60)
        answer = json.loads(out)
        outcomes = {row["source_id"]: row["outcome"] for row in answer["source_outcomes"]}
        assert outcomes["slow"] == "unavailable", out
        assert in_flight.returncode in (3, 4), out
        assert_no_secret(ws, out + err)

        subprocess.run(["bash", str(CLUSTER_SCRIPT), "resume", str(folder / "cluster")], check=True, timeout=120)
        code, again = answer_over(ws, serve, "restore drill", "--scope", "source=kb")
        assert code == 0, again
        assert again["results"][0]["locator"] == warm["results"][0]["locator"]
    finally:
        serve.stop()
    assert_no_secret(ws, serve.stderr)


def _wait_for_active_search(admin_dsn: str, timeout: float = 30.0) -> None:
    import psycopg

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with psycopg.connect(admin_dsn) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'recall-postgres'"
                " AND state = 'active' AND query LIKE 'WITH q AS%slow_articles%'"
            ).fetchone()
        if row and row[0]:
            return
        time.sleep(0.05)
    pytest.fail("the slow search never reached the server")
