"""One source's adapter as the application sees it: typed calls that answer or fail.

The client keeps at most one live :class:`AdapterProcess`, spawning it on first
use and again after it dies or is stopped. Each call runs to an absolute
deadline; what happens at the deadline is the cancel protocol of protocol v1
(see the package docstring for the whole picture).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import anyio
from anyio.abc import TaskGroup

from adapter_sdk.protocol import (
    ErrorCode,
    ExpandParams,
    ExpandResult,
    HealthParams,
    HealthResult,
    Manifest,
    Method,
    RefreshParams,
    SearchOutcome,
    SearchParams,
    WireModel,
    WireValidationError,
    handshake_frame,
)
from broker.contracts import SourceState
from broker.status import source_state
from broker.supervise.answer import SearchAnswer, read_search_answer
from broker.supervise.failure import (
    AdapterFailure,
    FailureReason,
    failure_for_code,
    validation_summary,
)
from broker.supervise.process import AdapterProcess, AdapterSpec, Capture, Pending, spawn
from broker.supervise.timings import Timings
from broker.warm.prestart import Prestarted

ResultT = TypeVar("ResultT")

_UNSET_DEADLINE_BEFORE = datetime(1970, 1, 2, tzinfo=UTC)
_EXIT_STATUS_WAIT = 0.2


@dataclass(frozen=True)
class _HealthEntry:
    """A cached health probe: its answer or its failure, and the spawn it was made against."""

    at: float
    generation: int
    result: HealthResult | None = None
    failure: AdapterFailure | None = None


class AdapterClient:
    def __init__(
        self, spec: AdapterSpec, tasks: TaskGroup, timings: Timings | None = None,
        prestarted: Prestarted | None = None,
    ):
        self.spec = spec
        self._prestarted = prestarted
        self.manifest: Manifest | None = None
        self.spawns = 0
        self._tasks = tasks
        self._timings = timings or Timings()
        self._capture = Capture()
        self._process: AdapterProcess | None = None
        self._starting: AdapterProcess | None = None
        self._stopping: set[AdapterProcess] = set()
        self._spawn_lock = anyio.Lock()
        self._probe_lock = anyio.Lock()
        self._health: _HealthEntry | None = None
        self._last_exit: int | None = None
        self._closed = False
        self._close_done = anyio.Event()

    @property
    def closed(self) -> bool:
        return self._closed

    # -- calls ------------------------------------------------------------

    async def initialize(self) -> Manifest:
        """Spawn if needed and return the manifest the live process agreed to."""
        process = await self._ensure(math.inf)  # bounded by the handshake timeout alone
        assert process.manifest is not None
        return process.manifest

    async def search(self, params: SearchParams, sent: Callable[[], None] | None = None) -> SearchAnswer:
        """The adapter's answer, each malformed candidate dropped and named (the rest
        stands); ``sent`` is called once the request is written, so the caller can do
        what it needs next while the adapter works."""
        answer, _ = await self._call(Method.search, params, read_search_answer, sent)
        return answer

    async def expand(self, params: ExpandParams) -> ExpandResult:
        result, _ = await self._call(Method.expand, params, ExpandResult.model_validate)
        return result

    async def health(self, deadline: datetime | None = None) -> HealthResult:
        """Probe health, reusing any probe (failed ones too) younger than the TTL; one that
        found the source short of healthy only for a second (``_fresh_health``)."""
        if (entry := self._fresh_health()) is not None:
            return _unwrap_health(entry)
        async with self._probe_lock:  # a burst of callers costs one probe
            if (entry := self._fresh_health()) is not None:
                return _unwrap_health(entry)
            try:
                result = await self._probe(deadline)
            except AdapterFailure as failure:
                self._health = _HealthEntry(anyio.current_time(), self.spawns, failure=failure)
                raise
            self._health = _HealthEntry(anyio.current_time(), self.spawns, result=result)
            return result

    async def refresh(self, params: RefreshParams) -> HealthResult:
        try:
            result, _ = await self._call(Method.refresh, params, HealthResult.model_validate)
        finally:
            self._health = None  # whatever happened, an earlier probe is now stale
        return result

    def diagnostics(self) -> dict[str, Any]:
        process = self._process
        last_exit = self._last_exit
        if process is not None and process.returncode is not None:
            last_exit = process.returncode
        return {
            "spawns": self.spawns,
            "last_exit": last_exit,
            "pid": process.pid if process is not None and process.alive else None,
            "stderr_tail": list(self._capture.stderr_tail),
            "violations": self._capture.violations,
            "violation_log": list(self._capture.violation_log),
        }

    async def close(self) -> None:
        """Ask the process to exit, make sure it and its group are gone. Idempotent."""
        if self._closed:
            await self._close_done.wait()
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            if self._starting is not None:
                self._retire(self._starting, "the adapter client was closed")
            process, self._process = self._process, None
            if process is not None:
                self._stopping.add(process)
                await self._stop(process, shutdown=True)
            for stopping in list(self._stopping):
                await stopping.gone.wait()
        self._close_done.set()

    # -- one request --------------------------------------------------------

    async def _call(
        self,
        method: Method,
        params: WireModel,
        read: Callable[[Any], ResultT],
        sent: Callable[[], None] | None = None,
    ) -> tuple[ResultT, AdapterProcess]:
        """``read`` turns the reply's ``result`` into the answer, raising
        :class:`WireValidationError` when it does not fit."""
        deadline_at, wire = self._deadline(params)
        if anyio.current_time() >= deadline_at:
            raise self._timed_out(f"the deadline had passed before {method} was made")
        process = await self._ensure(deadline_at)
        if (ahead := process.take_ahead(method, params)) is not None:
            # written at launch (``broker.warm.prestart``), holding its slot until answered
            try:
                return await self._exchange(process, method, wire, deadline_at, read, ahead, sent), process
            except AdapterFailure as failure:
                # its deadline ran from the launch, the adapter's start-up in it: when that
                # ran out and this call's own has not, the call is made as if never written
                if failure.code != ErrorCode.deadline_exceeded or anyio.current_time() >= deadline_at:
                    raise
        slots = process.slots
        if slots is not None:
            acquired = False
            with anyio.move_on_at(deadline_at):
                await slots.acquire()
                acquired = True
            if not acquired:
                limit = process.manifest.max_concurrency if process.manifest else None
                raise self._timed_out(
                    f"the deadline passed while {method} waited for a free slot "
                    f"(max_concurrency {limit})"
                )
        try:
            return await self._exchange(process, method, wire, deadline_at, read, sent=sent), process
        finally:
            if slots is not None:
                slots.release()

    async def _exchange(
        self,
        process: AdapterProcess,
        method: Method,
        params: dict[str, Any],
        deadline_at: float,
        read: Callable[[Any], ResultT],
        written: Pending | None = None,
        sent: Callable[[], None] | None = None,
    ) -> ResultT:
        """One request and its answer; ``written`` is the request when it was written
        already, ``sent`` called once it is."""
        pending = written or process.open_request()
        handed_off = False
        try:
            with anyio.move_on_at(deadline_at):
                if written is not None or await process.send_request(pending, method, params):
                    if sent is not None:
                        sent()
                    await pending.done.wait()
                else:
                    pending.done.set()
            if not pending.done.is_set() and not pending.sent:
                raise self._timed_out(f"the deadline passed before {method} could be written")
            if not pending.done.is_set():
                acknowledged = await self._cancel_and_wait(process, pending)
                if not acknowledged:
                    self._retire(
                        process, f"{method} outlived its deadline and ignored recall/cancel"
                    )
                raise self._deadline_failure(method, acknowledged)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                handed_off = await self._abandon(process, pending)
            raise
        finally:
            if not handed_off:
                process.forget(pending)
        return await self._result(process, method, pending, read)

    async def _cancel_and_wait(self, process: AdapterProcess, pending: Pending) -> bool:
        """Send recall/cancel; True if any reply to the request arrives within the grace."""
        with anyio.move_on_after(self._timings.cancel_grace):
            await process.send_cancel(pending)
            await pending.done.wait()
        return pending.reply is not None

    async def _abandon(self, process: AdapterProcess, pending: Pending) -> bool:
        """The caller was cancelled: tell the adapter, and judge its answer in the background."""
        if pending.done.is_set() or not pending.sent:
            return False
        with anyio.move_on_after(self._timings.cancel_grace):
            await process.send_cancel(pending)
        self._tasks.start_soon(self._judge_abandoned, process, pending)
        return True

    async def _judge_abandoned(self, process: AdapterProcess, pending: Pending) -> None:
        try:
            with anyio.move_on_after(self._timings.cancel_grace):
                await pending.done.wait()
            if pending.reply is None:
                self._retire(process, "an abandoned request went unanswered after recall/cancel")
        finally:
            process.forget(pending)

    async def _result(
        self, process: AdapterProcess, method: Method, pending: Pending, read: Callable[[Any], ResultT]
    ) -> ResultT:
        reply = pending.reply
        if reply is None:
            raise await self._unreachable(process, method, pending.lost)
        where = f'source "{self.spec.source_id}"'
        if "error" in reply:
            error = reply["error"]
            code = error.get("code") if isinstance(error, dict) else None
            if not isinstance(code, int) or isinstance(code, bool):
                raise AdapterFailure(
                    SearchOutcome.failed,
                    FailureReason.protocol_violation,
                    f"{where}: {method} was answered with a malformed error object",
                )
            message = str(error.get("message") or "no message")
            raise failure_for_code(code, f"{where}: {method} failed: {message} (code {code})")
        try:
            return read(reply["result"])
        except WireValidationError as exc:
            raise AdapterFailure(
                SearchOutcome.failed,
                FailureReason.adapter_error,
                f"{where}: the adapter returned an invalid {method} result: "
                f"{validation_summary(exc)}",
            ) from None

    # -- process lifecycle ------------------------------------------------------

    async def _ensure(self, deadline_at: float) -> AdapterProcess:
        """The live process, spawning (and handshaking) one if there is none."""
        if self._closed:
            raise self._closed_failure()
        process = self._process
        if process is not None and process.alive:
            return process
        acquired = False
        with anyio.move_on_at(deadline_at):
            await self._spawn_lock.acquire()
            acquired = True
        if not acquired:
            raise self._timed_out("the deadline passed while waiting for the adapter to start")
        try:
            process = self._process
            if process is not None and process.alive:
                return process
            if process is not None:
                self._retire(process, "the adapter process exited")
            return await self._start(deadline_at)
        finally:
            self._spawn_lock.release()

    async def _start(self, deadline_at: float) -> AdapterProcess:
        process = await spawn(self.spec, self._capture, self._tasks, self._prestarted)
        self.spawns += 1
        self._starting = process
        limit_at = anyio.current_time() + self._timings.handshake_timeout
        try:
            manifest = await self._handshake(process, deadline_at, limit_at)
            if self._closed:
                raise self._closed_failure()
        except BaseException:
            self._retire(process, "the handshake did not complete")
            raise
        finally:
            self._starting = None
        process.manifest = manifest
        if manifest.max_concurrency:
            process.slots = anyio.Semaphore(manifest.max_concurrency)
            if (ahead := process.written_ahead()) is not None:  # in the adapter's hands already
                process.slots.acquire_nowait()
                self._tasks.start_soon(_release_when_answered, process.slots, ahead)
        process.cold_start_ns = time.perf_counter_ns() - process.started_ns
        self.manifest = manifest
        self._process = process
        return process

    async def _handshake(
        self, process: AdapterProcess, deadline_at: float, limit_at: float
    ) -> Manifest:
        init = self.spec.init_params
        pending = process.open_handshake()
        try:
            with anyio.move_on_at(min(deadline_at, limit_at)):
                if await process.send_handshake(pending, handshake_frame(init)):
                    await pending.done.wait()
                else:
                    pending.done.set()
        finally:
            process.forget(pending)
        if not pending.done.is_set():
            if deadline_at < limit_at:
                raise self._timed_out(
                    "the deadline passed while the adapter was starting "
                    "(recall/initialize unanswered)"
                )
            raise AdapterFailure(
                SearchOutcome.unavailable,
                FailureReason.handshake_timeout,
                f'source "{self.spec.source_id}": the adapter did not answer recall/initialize '
                f"within {self._timings.handshake_timeout:g}s",
            )
        manifest = await self._result(process, Method.initialize, pending, Manifest.model_validate)
        if not init.protocol_version_min <= manifest.protocol_version <= init.protocol_version_max:
            raise AdapterFailure(
                SearchOutcome.unavailable,
                FailureReason.protocol_version_unsupported,
                f'source "{self.spec.source_id}": the adapter answered protocol version '
                f"{manifest.protocol_version}, outside the requested range "
                f"{init.protocol_version_min}..{init.protocol_version_max}",
            )
        return manifest

    def _retire(self, process: AdapterProcess, why: str) -> None:
        """Detach a process and stop it in the background; the caller does not wait."""
        if self._process is process:
            self._process = None
        if process in self._stopping or process.gone.is_set():
            return
        process.retire(why)
        self._stopping.add(process)
        self._tasks.start_soon(self._stop, process, False)

    async def _stop(self, process: AdapterProcess, shutdown: bool) -> None:
        try:
            await process.stop(self._timings.term_grace, shutdown=shutdown)
        finally:
            if process.returncode is not None:
                self._last_exit = process.returncode
            self._stopping.discard(process)

    # -- health -------------------------------------------------------------

    def _fresh_health(self) -> _HealthEntry | None:
        entry = self._health
        if entry is None or entry.generation != self.spawns:
            return None
        ttl = self._timings.health_ttl
        if entry.result is not None and source_state(entry.result) is not SourceState.healthy:
            # a build or catch-up goes on meanwhile: its end must show in the next command
            ttl = min(ttl, self._timings.unsettled_health_ttl)
        if anyio.current_time() - entry.at >= ttl:
            return None
        if entry.result is not None and (self._process is None or not self._process.alive):
            return None  # a healthy answer from a process that has since gone says nothing
        return entry

    async def _probe(self, deadline: datetime | None) -> HealthResult:
        if deadline is None:
            deadline = datetime.now(UTC) + timedelta(seconds=self._timings.probe_timeout)
        result, process = await self._call(
            Method.health, HealthParams(deadline=deadline), HealthResult.model_validate
        )
        update: dict[str, Any] = {}
        if not process.cold_reported:
            process.cold_reported = True
            update["cold_start_ns"] = process.cold_start_ns
        captured = self._captured_diagnostics()
        if captured:
            # adapter keys win: they describe the source, the capture describes the process
            update["diagnostics"] = {**captured, **(result.diagnostics or {})}
        return result.model_copy(update=update) if update else result

    def _captured_diagnostics(self) -> dict[str, Any]:
        captured: dict[str, Any] = {}
        if self._capture.stderr_tail:
            captured["stderr_tail"] = list(self._capture.stderr_tail)
        if self._capture.violations:
            captured["violations"] = self._capture.violations
        return captured

    # -- failures -------------------------------------------------------------

    def _deadline(self, params: WireModel) -> tuple[float, dict[str, Any]]:
        """The call's deadline on anyio's clock, and the params as sent.

        An unset deadline (the zero time) gets the default call timeout rather
        than no bound: waiting forever on a subprocess is never the answer.
        """
        deadline: datetime = params.deadline  # type: ignore[attr-defined]
        if deadline.tzinfo is None:
            deadline = deadline.replace(tzinfo=UTC)
        now = datetime.now(UTC)
        if deadline < _UNSET_DEADLINE_BEFORE:
            deadline = now + timedelta(seconds=self._timings.default_call_timeout)
            params = params.model_copy(update={"deadline": deadline})
        return anyio.current_time() + (deadline - now).total_seconds(), params.to_wire()

    def _deadline_failure(self, method: Method, acknowledged: bool) -> AdapterFailure:
        where = f'source "{self.spec.source_id}"'
        if acknowledged:
            return AdapterFailure(
                SearchOutcome.timeout,
                FailureReason.deadline_exceeded,
                f"{where}: {method} did not finish by its deadline; the adapter acknowledged "
                "recall/cancel",
            )
        return AdapterFailure(
            SearchOutcome.timeout,
            FailureReason.deadline_exceeded_unresponsive,
            f"{where}: {method} did not finish by its deadline and recall/cancel went "
            f"unanswered for {self._timings.cancel_grace:g}s; the adapter process was stopped "
            "and will be restarted on next use",
        )

    def _timed_out(self, what: str) -> AdapterFailure:
        return AdapterFailure(
            SearchOutcome.timeout,
            FailureReason.deadline_exceeded,
            f'source "{self.spec.source_id}": {what}',
        )

    async def _unreachable(
        self, process: AdapterProcess, method: Method, why: str | None
    ) -> AdapterFailure:
        status = None if why else await process.exit_status(_EXIT_STATUS_WAIT)
        if why:  # stopped on purpose
            what = why
        elif status is None:
            what = "the adapter closed its output"
        elif status < 0:
            what = f"the adapter process was killed by signal {-status}"
        else:
            what = f"the adapter process exited with status {status}"
        message = f'source "{self.spec.source_id}": {what} during {method}'
        if (line := self._capture.last_stderr_line()) is not None:
            message += f"; its last stderr line: {line!r}"
        return AdapterFailure(SearchOutcome.unavailable, FailureReason.unreachable, message)

    def _closed_failure(self) -> AdapterFailure:
        return AdapterFailure(
            SearchOutcome.unavailable,
            FailureReason.unreachable,
            f'source "{self.spec.source_id}": the adapter client is closed',
        )


async def _release_when_answered(slots: anyio.Semaphore, pending: Pending) -> None:
    await pending.done.wait()
    slots.release()


def _unwrap_health(entry: _HealthEntry) -> HealthResult:
    if entry.failure is not None:
        raise entry.failure
    assert entry.result is not None
    return entry.result
