"""An adapter a cold command launched ahead of time (``broker.warm.prestart``): greeted with
its handshake and perhaps asked its health then, it is adopted only by the spawn it
was greeted for, never greeted twice, and the probe written ahead answers only the
probe it anticipated."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from adapter_sdk.protocol import (
    HealthParams,
    Method,
    RefreshParams,
    SearchParams,
    encode_frame,
    handshake_frame,
    request_frame,
)
from broker.supervise import AdapterSpec, Supervisor
from broker.warm import prestart
from broker.warm.prestart import Prestarted

from .conftest import (
    RAW_ADAPTER,
    SDK_ADAPTER,
    assert_no_process_left,
    deadline_in,
    recorded_pids,
    spec_for,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def prestarted() -> Prestarted:
    """What one cold command launched ahead, handed to the supervisor that may adopt it."""
    return Prestarted()


def _launch_greeted(prestarted: Prestarted, spec: AdapterSpec, probe: HealthParams | None = None) -> None:
    """What a cold command does for a source of the user's own before importing the broker."""
    prestarted.start(
        spec.source_uid, spec.argv, spec.env, spec.workdir, spec.cwd, handshake_frame(spec.init_params)
    )
    if probe is not None:
        frame = encode_frame(request_frame(prestart.AHEAD_ID, Method.health, probe.to_wire()))
        prestarted.start(spec.source_uid, spec.argv, spec.env, spec.workdir, spec.cwd,
                       ahead=(Method.health, probe, frame))


async def _ask(prestarted: Prestarted, spec: AdapterSpec, probe_deadline_s: float | None = None) -> dict[str, Any]:
    """A health probe (under a deadline this far off, if given), then a search, through a
    fresh supervisor: the search's pid, the probe's record count, the client's
    diagnostics. Whatever was launched and not taken is ended."""
    try:
        async with Supervisor(prestarted=prestarted) as supervisor:
            client = supervisor.client(spec)
            health = None
            if probe_deadline_s is not None:
                health = await client.health(deadline_in(probe_deadline_s))
            result = (await client.search(SearchParams(query="x", limit=5, deadline=deadline_in(5)))).result
            assert result.diagnostics is not None
            probes = health.record_count if health is not None else None
            return {"pid": result.diagnostics["pid"], "probes": probes, **client.diagnostics()}
    finally:
        prestarted.discard()


async def test_the_greeted_process_is_adopted_and_its_handshake_is_not_written_again(tmp_path: Path, prestarted: Prestarted) -> None:
    spec = spec_for(tmp_path, RAW_ADAPTER, "plain")
    _launch_greeted(prestarted, spec)
    asked = await _ask(prestarted, spec)
    assert recorded_pids(tmp_path) == [asked["pid"]]  # no second process was started
    # the raw adapter says "ready" once per recall/initialize it reads
    assert asked["stderr_tail"] == ["ready as fault"]
    assert asked["violations"] == 0
    await assert_no_process_left(tmp_path)


async def test_a_process_greeted_with_another_handshake_is_not_adopted_but_ended(tmp_path: Path, prestarted: Prestarted) -> None:
    spec = spec_for(tmp_path, RAW_ADAPTER, "plain")
    _launch_greeted(prestarted, replace(spec, init_params=spec.init_params.model_copy(update={"settings": {"old": True}})))
    (stale,) = (launched.process for launched in prestarted._started.values())
    asked = await _ask(prestarted, spec)
    assert asked["pid"] != stale.pid
    assert stale.returncode is not None  # ended and reaped when the spawn passed it over
    await assert_no_process_left(tmp_path)


async def test_a_handshake_too_long_to_write_at_once_is_left_to_the_spawn(tmp_path: Path, prestarted: Prestarted) -> None:
    """A pipe holds a page at least: a longer greeting could wait on an adapter that never reads."""
    spec = spec_for(tmp_path, RAW_ADAPTER, "plain", settings={"padding": "x" * prestart.MAX_GREETING_BYTES})
    _launch_greeted(prestarted, spec)
    assert [launched.greeting for launched in prestarted._started.values()] == [b""]  # launched all the same
    asked = await _ask(prestarted, spec)
    assert recorded_pids(tmp_path) == [asked["pid"]]
    assert asked["stderr_tail"] == ["ready as fault"]


async def test_a_process_launched_without_a_greeting_is_adopted_and_greeted_by_its_spawn(
    tmp_path: Path, prestarted: Prestarted,
) -> None:
    """How a source a project file declares is launched: its settings wait for vetting."""
    spec = spec_for(tmp_path, RAW_ADAPTER, "plain")
    prestarted.start(spec.source_uid, spec.argv, spec.env, spec.workdir, spec.cwd)
    asked = await _ask(prestarted, spec)
    assert recorded_pids(tmp_path) == [asked["pid"]]
    assert asked["stderr_tail"] == ["ready as fault"] and asked["violations"] == 0


async def test_the_probe_written_ahead_answers_the_probe_asked_later(tmp_path: Path, prestarted: Prestarted) -> None:
    spec = spec_for(tmp_path, RAW_ADAPTER, "plain")
    _launch_greeted(prestarted, spec, HealthParams(deadline=deadline_in(5)))
    asked = await _ask(prestarted, spec, probe_deadline_s=6)
    # the raw adapter counts the probes it answers: the one written ahead was the only one
    assert asked["probes"] == 1
    assert asked["violations"] == 0 and recorded_pids(tmp_path) == [asked["pid"]]
    await assert_no_process_left(tmp_path)


async def test_a_probe_under_an_earlier_deadline_than_the_one_written_ahead_is_asked_itself(
    tmp_path: Path, prestarted: Prestarted,
) -> None:
    spec = spec_for(tmp_path, RAW_ADAPTER, "plain")
    _launch_greeted(prestarted, spec, HealthParams(deadline=deadline_in(5)))
    asked = await _ask(prestarted, spec, probe_deadline_s=4)
    assert asked["probes"] == 2
    # the answer to the probe written ahead was expected, so no violation is counted
    assert asked["violations"] == 0 and recorded_pids(tmp_path) == [asked["pid"]]


async def test_a_probe_never_asked_for_leaves_no_trace(tmp_path: Path, prestarted: Prestarted) -> None:
    spec = spec_for(tmp_path, RAW_ADAPTER, "plain")
    _launch_greeted(prestarted, spec, HealthParams(deadline=deadline_in(5)))
    asked = await _ask(prestarted, spec)  # a search alone
    assert asked["violations"] == 0 and asked["stderr_tail"] == ["ready as fault"]
    await assert_no_process_left(tmp_path)


async def test_the_probe_written_ahead_holds_a_slot_of_an_adapter_that_takes_one_at_a_time(
    tmp_path: Path, prestarted: Prestarted,
) -> None:
    spec = spec_for(tmp_path, SDK_ADAPTER, settings={"max_concurrency": 1, "health_delay": 0.4})
    _launch_greeted(prestarted, spec, HealthParams(deadline=deadline_in(5)))
    try:
        async with Supervisor(prestarted=prestarted) as supervisor:
            client = supervisor.client(spec)
            result = (await client.search(SearchParams(query="y", limit=5, deadline=deadline_in(5)))).result
            assert result.diagnostics is not None
            # the adapter counts the requests it holds at once: the search came after the probe
            assert result.diagnostics["max_in_flight"] == 1
    finally:
        prestarted.discard()
    await assert_no_process_left(tmp_path)


async def test_a_probe_written_ahead_that_ran_out_of_its_deadline_is_asked_again(tmp_path: Path, prestarted: Prestarted) -> None:
    """Its deadline ran from the launch, the adapter's start-up in it: a cold command must
    not call unhealthy an adapter that the plan's own probe finds healthy."""
    spec = spec_for(tmp_path, SDK_ADAPTER, settings={"health_delay": 0.3})
    _launch_greeted(prestarted, spec, HealthParams(deadline=deadline_in(0.1)))
    try:
        async with Supervisor(prestarted=prestarted) as supervisor:
            health = await supervisor.client(spec).health(deadline_in(5))
    finally:
        prestarted.discard()
    assert health.status == "healthy"
    assert health.record_count == 2  # the adapter's count of probes: the one written ahead, then this


async def test_a_probe_written_ahead_and_passed_over_is_never_taken_later(tmp_path: Path, prestarted: Prestarted) -> None:
    spec = spec_for(tmp_path, RAW_ADAPTER, "plain")
    _launch_greeted(prestarted, spec, HealthParams(deadline=deadline_in(5)))
    try:
        async with Supervisor(prestarted=prestarted) as supervisor:
            client = supervisor.client(spec)
            first = await client.health(deadline_in(4))  # earlier than the one written ahead
            await client.refresh(RefreshParams(deadline=deadline_in(5)))  # the raw adapter counts it too
            later = await client.health(deadline_in(6))
    finally:
        prestarted.discard()
    # the raw adapter counts every probe it answers: ahead 1, first 2, refresh 3, later 4
    assert (first.record_count, later.record_count) == (2, 4)


async def test_a_supervisor_adopts_only_what_its_own_command_started(tmp_path: Path, prestarted: Prestarted) -> None:
    """What one command launched ahead is that command's: another's supervisor starts its own."""
    spec = spec_for(tmp_path, RAW_ADAPTER, "plain")
    _launch_greeted(prestarted, spec)
    (ahead,) = (launched.process for launched in prestarted._started.values())
    asked = await _ask(Prestarted(), spec)
    assert asked["pid"] != ahead.pid and ahead.poll() is None  # not taken, still waiting
    prestarted.discard()
    assert ahead.returncode is not None
    await assert_no_process_left(tmp_path)
