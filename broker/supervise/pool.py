"""The pool of adapter clients, one per source and state folder, and the promise that none outlives it."""

from __future__ import annotations

from contextlib import AsyncExitStack
from types import TracebackType

import anyio
from anyio.abc import TaskGroup

from broker.supervise.adapter_client import AdapterClient
from broker.supervise.process import AdapterSpec
from broker.supervise.timings import Timings
from broker.warm.prestart import Prestarted


class Supervisor:
    """Owns every adapter process of a broker run.

    Use as ``async with Supervisor() as supervisor``; background work (frame
    readers, stderr drains, teardown of wedged processes) runs in its task
    group, and leaving the block closes every client and waits until each
    process and its process group are gone.
    """

    def __init__(self, timings: Timings | None = None, prestarted: Prestarted | None = None) -> None:
        self.timings = timings or Timings()
        self.prestarted = prestarted  # processes a cold command started ahead, for its clients to adopt
        self._clients: dict[tuple[str, str], AdapterClient] = {}
        self._replaced: list[AdapterClient] = []
        self._tasks: TaskGroup | None = None
        self._stack: AsyncExitStack | None = None
        self._closed = False

    async def __aenter__(self) -> Supervisor:
        self._stack = AsyncExitStack()
        self._tasks = await self._stack.enter_async_context(anyio.create_task_group())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        assert self._stack is not None and self._tasks is not None
        try:
            await self.aclose()
        finally:
            self._tasks.cancel_scope.cancel()  # readers of closed processes; teardown is shielded
            suppress = await self._stack.__aexit__(exc_type, exc, tb)
        return suppress

    def client(self, spec: AdapterSpec) -> AdapterClient:
        """The pooled client for ``spec``'s source and workdir; a changed spec replaces (and closes) it.

        A source two profiles share has one workdir per profile, so it gets one
        client per profile: asking it through the other profile must not
        restart the process (and rebuild the index) the first one is using.
        """
        if self._tasks is None or self._closed:
            raise RuntimeError("Supervisor is not running: use it as `async with Supervisor()`")
        key = (spec.source_uid, str(spec.workdir))
        current = self._clients.get(key)
        if current is not None and current.spec == spec and not current.closed:
            return current
        if current is not None:
            self._replaced.append(current)
            self._tasks.start_soon(current.close)
        client = AdapterClient(spec, self._tasks, self.timings, self.prestarted)
        self._clients[key] = client
        return client

    def clients(self) -> list[AdapterClient]:
        return list(self._clients.values())

    async def aclose(self) -> None:
        """Close every client; when this returns no adapter process is left. Idempotent."""
        self._closed = True
        everyone = [*self._clients.values(), *self._replaced]
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as closing:
                for client in everyone:
                    closing.start_soon(client.close)
