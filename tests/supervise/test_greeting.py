"""An adapter a cold command launched and greeted ahead of time (``broker.prestart``) is
adopted only by the spawn it was greeted for, and is never greeted twice."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from adapter_sdk.protocol import SearchParams, handshake_frame
from broker import prestart
from broker.supervise import AdapterSpec, Supervisor

from .conftest import RAW_ADAPTER, assert_no_process_left, deadline_in, recorded_pids, spec_for

pytestmark = pytest.mark.anyio


def _launch_greeted(spec: AdapterSpec) -> None:
    prestart.start(
        spec.source_uid, spec.argv, spec.env, spec.workdir, spec.cwd, handshake_frame(spec.init_params)
    )


async def _ask(spec: AdapterSpec) -> dict[str, object]:
    """One search through a fresh supervisor; whatever was launched and not taken is ended."""
    try:
        async with Supervisor() as supervisor:
            client = supervisor.client(spec)
            result = await client.search(SearchParams(query="x", limit=5, deadline=deadline_in(5)))
            assert result.diagnostics is not None
            return {"pid": result.diagnostics["pid"], **client.diagnostics()}
    finally:
        prestart.discard()


async def test_the_greeted_process_is_adopted_and_its_handshake_is_not_written_again(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, RAW_ADAPTER, "plain")
    _launch_greeted(spec)
    asked = await _ask(spec)
    assert recorded_pids(tmp_path) == [asked["pid"]]  # no second process was started
    # the raw adapter says "ready" once per recall/initialize it reads
    assert asked["stderr_tail"] == ["ready as fault"]
    assert asked["violations"] == 0
    await assert_no_process_left(tmp_path)


async def test_a_process_greeted_with_another_handshake_is_not_adopted_but_ended(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, RAW_ADAPTER, "plain")
    _launch_greeted(replace(spec, init_params=spec.init_params.model_copy(update={"settings": {"old": True}})))
    (stale,) = (launched.process for launched in prestart._started.values())
    asked = await _ask(spec)
    assert asked["pid"] != stale.pid
    assert stale.returncode is not None  # ended and reaped when the spawn passed it over
    await assert_no_process_left(tmp_path)


async def test_a_handshake_too_long_to_write_at_once_is_left_to_the_spawn(tmp_path: Path) -> None:
    """A pipe holds a page at least: a longer greeting could wait on an adapter that never reads."""
    spec = spec_for(tmp_path, RAW_ADAPTER, "plain", settings={"padding": "x" * prestart.MAX_GREETING_BYTES})
    _launch_greeted(spec)
    assert prestart._started == {}
    asked = await _ask(spec)
    assert recorded_pids(tmp_path) == [asked["pid"]]
    assert asked["stderr_tail"] == ["ready as fault"]


async def test_a_process_launched_without_a_greeting_is_adopted_and_greeted_by_its_spawn(
    tmp_path: Path,
) -> None:
    """How a source a project file declares is launched: its settings wait for vetting."""
    spec = spec_for(tmp_path, RAW_ADAPTER, "plain")
    prestart.start(spec.source_uid, spec.argv, spec.env, spec.workdir, spec.cwd)
    asked = await _ask(spec)
    assert recorded_pids(tmp_path) == [asked["pid"]]
    assert asked["stderr_tail"] == ["ready as fault"] and asked["violations"] == 0
