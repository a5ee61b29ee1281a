"""libpq's variables reach the postgres adapter, and a resident broker is keyed by them."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path

from tests.adapters.postgres.conftest import DSN_ENV, Workspace
from tests.broker.warm.conftest import broker_pids, wait_for_starts, wait_gone
from tests.support.postgres import Server


def test_a_shell_with_another_pguser_gets_its_own_broker_and_the_answer_it_gets_in_process(
    make_workspace: Callable[..., Workspace], pg_server: Server, articles_db: str
) -> None:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    workspace = make_workspace()
    connection = conninfo_to_dict(pg_server.dsn("recall_reader", articles_db))
    user, password = connection.pop("user"), connection.pop("password")
    runtime = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))  # short: socket paths are bounded
    # the DSN names no role: libpq takes it from PGUSER and PGPASSWORD
    shell = {DSN_ENV: make_conninfo(**connection), "RECALL_DAEMON": "1", "XDG_RUNTIME_DIR": str(runtime)}
    reader = {**shell, "PGUSER": str(user), "PGPASSWORD": str(password)}
    stranger = {**shell, "PGUSER": "recall_nobody", "PGPASSWORD": "not-a-password"}
    try:
        started = []
        for env in (reader, stranger):
            done = workspace.recall("daemon", "start", "--json", env=env)
            assert done.returncode == 0, done.stderr
            started.append(json.loads(done.stdout)["pid"])
        assert started[0] != started[1]

        for env in (reader, stranger, reader):
            resident, answer, printed = workspace.query("backup", env=env)
            in_process, _, _ = workspace.query("backup", env={**env, "RECALL_DAEMON": "0"})
            assert resident == in_process, printed
            if env is reader:
                assert resident == 0 and answer["results"], printed
            else:
                assert resident != 0, printed
        for env, served in ((reader, 2), (stranger, 1)):
            status = json.loads(workspace.recall("daemon", "status", "--json", env=env).stdout)
            assert status["commands_served"] == served
    finally:
        wait_for_starts(runtime)
        pids = broker_pids(runtime)
        for pid in pids:
            os.kill(pid, signal.SIGTERM)
        left = [pid for pid in pids if not wait_gone(pid)]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(runtime, ignore_errors=True)
        assert not left, f"resident brokers outlived their test: {left}"
