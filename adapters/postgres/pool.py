"""A few open connections, each checked once: read-only, and not above row-level security.

Every connection is opened read-only (``default_transaction_read_only`` and
``BEGIN READ ONLY``) and refused when its role is a superuser or has
BYPASSRLS, since either would see rows the team's policies hide. A statement
runs in its own transaction with ``statement_timeout`` set from the caller's
deadline. A connection found broken is dropped; a statement that fails on a
reused connection because the server went away is tried once more on a new
one (the warm adapter reconnects). A statement whose caller is cancelled is
cancelled on the server too, and its connection closed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from adapters.postgres.errors import ProblemKind, SourceProblem, classify

if TYPE_CHECKING:
    import psycopg

CONNECT_TIMEOUT_S = 5
CANCEL_TIMEOUT_S = 2.0
ROLE_CHECK = (
    "SELECT current_user::text, r.rolsuper, r.rolbypassrls"
    " FROM pg_roles r WHERE r.rolname = current_user"
)


class ConnectionPool:
    def __init__(self, dsn: str, size: int, secrets: tuple[str, ...]) -> None:
        self._dsn = dsn
        self._size = size
        self._secrets = secrets
        self._idle: list[psycopg.AsyncConnection[Any]] = []
        self.role: str | None = None

    async def run(self, statement: Callable[[psycopg.AsyncCursor[Any]], Any], *, timeout_ms: int, doing: str) -> Any:
        """``await statement(cursor)`` in one read-only transaction bounded by ``timeout_ms``."""
        import psycopg

        for attempt in (1, 2):
            reused = bool(self._idle)
            async with self._connection(doing) as conn:
                try:
                    async with conn.transaction():
                        async with conn.cursor() as cursor:
                            await cursor.execute(f"SET LOCAL statement_timeout = {max(int(timeout_ms), 1)}")
                            return await statement(cursor)
                except psycopg.OperationalError as exc:
                    if reused and attempt == 1 and conn.broken:
                        continue  # the server restarted or dropped us: one fresh connection
                    raise classify(exc, secrets=self._secrets, doing=doing) from None
                except psycopg.Error as exc:
                    raise classify(exc, secrets=self._secrets, doing=doing) from None
        raise AssertionError("unreachable: the second attempt returns or raises")

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            await conn.close()

    @asynccontextmanager
    async def _connection(self, doing: str) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        conn = self._idle.pop() if self._idle else await self._connect(doing)
        try:
            yield conn
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await _cancel_and_close(conn)
            raise
        except BaseException:
            await _discard(conn)
            raise
        if conn.broken or conn.closed or len(self._idle) >= self._size:
            await _discard(conn)
        else:
            self._idle.append(conn)

    async def _connect(self, doing: str) -> psycopg.AsyncConnection[Any]:
        import psycopg

        try:
            conn = await psycopg.AsyncConnection.connect(
                self._dsn, connect_timeout=CONNECT_TIMEOUT_S, application_name="recall-postgres"
            )
        except psycopg.Error as exc:
            raise classify(exc, secrets=self._secrets, doing=doing) from None
        try:
            role, superuser, bypass_rls = await _session_setup(conn)
        except psycopg.Error as exc:
            await _discard(conn)
            raise classify(exc, secrets=self._secrets, doing=doing) from None
        if superuser or bypass_rls:
            await _discard(conn)
            what = "is a superuser" if superuser else "has BYPASSRLS"
            raise SourceProblem(
                ProblemKind.denied,
                f"{doing}: refusing to search as role {role!r}: it {what}, so row-level "
                "security policies would not decide what it sees; connect as a role without "
                "SUPERUSER or BYPASSRLS (see docs/postgres.md)",
            )
        self.role = role
        return conn


async def _session_setup(conn: psycopg.AsyncConnection[Any]) -> tuple[str, bool, bool]:
    await conn.set_read_only(True)
    async with conn.cursor() as cursor:
        await cursor.execute("SET default_transaction_read_only = on")
        await cursor.execute(ROLE_CHECK)
        row = await cursor.fetchone()
    await conn.commit()
    if row is None:
        raise AssertionError("pg_roles has no row for current_user")
    return str(row[0]), bool(row[1]), bool(row[2])


async def _cancel_and_close(conn: psycopg.AsyncConnection[Any]) -> None:
    import psycopg

    try:
        await conn.cancel_safe(timeout=CANCEL_TIMEOUT_S)
    except psycopg.Error:
        pass  # the server is gone or unreachable: closing is all that is left
    await _discard(conn)


async def _discard(conn: psycopg.AsyncConnection[Any]) -> None:
    import psycopg

    try:
        await conn.close()
    except psycopg.Error:
        pass  # already broken
