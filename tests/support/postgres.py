"""A real PostgreSQL for tests: the cluster ``scripts/test.sh`` started, or one of our own.

``RECALL_TEST_PG_DSN`` names a superuser connection to a running cluster
(``scripts/test.sh`` exports it). Without it a throwaway cluster is started
with ``scripts/postgres-cluster.sh`` for the session. The tests that need a
server fail when neither works; they are skipped only when
``RECALL_TEST_NO_POSTGRES=1`` says on purpose that this machine has none.

Each test database is created fresh, with the roles the tests connect as:
``recall_reader`` (LOGIN, the adapter's normal role), ``recall_other`` (a second
reader, for row-level security), ``recall_bypass`` (BYPASSRLS) and the cluster's
superuser. Passwords are random per session.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLUSTER_SCRIPT = REPO / "scripts" / "postgres-cluster.sh"
ROLES = ("recall_reader", "recall_other", "recall_bypass")


@dataclass(frozen=True)
class Server:
    admin_dsn: str
    passwords: dict[str, str]
    cluster_dir: Path | None = None

    def dsn(self, role: str, database: str, password: str | None = None) -> str:
        """A DSN for ``role`` on ``database`` (the superuser's own when ``role`` is ``admin``)."""
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        info = conninfo_to_dict(self.admin_dsn)
        if role != "admin":
            info["user"] = role
            info["password"] = password if password is not None else self.passwords[role]
        elif password is not None:
            info["password"] = password
        info["dbname"] = database
        return make_conninfo(**info)

    @property
    def admin_password(self) -> str:
        from psycopg.conninfo import conninfo_to_dict

        return str(conninfo_to_dict(self.admin_dsn).get("password", ""))


def start_cluster() -> tuple[str, Path]:
    """A new cluster in a fresh folder under the system temp dir (the server user must reach it)."""
    folder = Path(tempfile.mkdtemp(prefix="recall-pg-", dir="/tmp"))
    folder.chmod(0o755)
    started = subprocess.run(
        ["bash", str(CLUSTER_SCRIPT), "start", str(folder / "cluster")],
        capture_output=True, text=True, timeout=180,
    )
    if started.returncode != 0:
        raise RuntimeError(f"could not start a PostgreSQL cluster: {started.stderr.strip()}")
    return started.stdout.strip().splitlines()[-1], folder


def stop_cluster(folder: Path) -> None:
    subprocess.run(["bash", str(CLUSTER_SCRIPT), "stop", str(folder / "cluster")], capture_output=True, timeout=120)
    subprocess.run(["rm", "-rf", str(folder)], check=False)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Server]:
    if os.environ.get("RECALL_TEST_NO_POSTGRES") == "1":
        pytest.skip("RECALL_TEST_NO_POSTGRES=1: this machine has no PostgreSQL")
    folder: Path | None = None
    admin = os.environ.get("RECALL_TEST_PG_DSN", "")
    if not admin:
        try:
            admin, folder = start_cluster()
        except (RuntimeError, OSError) as exc:
            pytest.fail(
                f"{exc}. The postgres tests need a server: install Debian's postgresql "
                "(scripts/test.sh does), export RECALL_TEST_PG_DSN, or set RECALL_TEST_NO_POSTGRES=1"
            )
    try:
        yield with_roles(admin, folder)
    finally:
        if folder is not None:
            stop_cluster(folder)


def with_roles(admin: str, folder: Path | None = None) -> Server:
    """The server at ``admin``, its test roles (re)created with fresh passwords."""
    passwords = {role: secrets.token_hex(12) for role in ROLES}
    _create_roles(admin, passwords)
    return Server(admin, passwords, folder)


def _create_roles(admin: str, passwords: dict[str, str]) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin, autocommit=True) as conn:
        for role, password in passwords.items():
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role]).fetchone()
            verb = "ALTER" if exists else "CREATE"
            extra = " BYPASSRLS" if role == "recall_bypass" else ""
            conn.execute(
                sql.SQL(verb + " ROLE {} LOGIN PASSWORD {}" + extra).format(
                    sql.Identifier(role), sql.Literal(password)
                )
            )


@pytest.fixture
def pg_database(pg_server: Server) -> Iterator[str]:
    """A fresh, empty database, dropped afterwards; its name."""
    import psycopg
    from psycopg import sql

    name = "recall_test_" + secrets.token_hex(4)
    with psycopg.connect(pg_server.admin_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield name
    finally:
        with psycopg.connect(pg_server.admin_dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def run_sql(dsn: str, statements: str) -> None:
    """Run a script of statements as one transaction."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        conn.execute(statements)
