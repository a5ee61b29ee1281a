from __future__ import annotations

import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

from adapter_sdk.protocol import InitializeParams
from broker.supervise import AdapterSpec

HERE = Path(__file__).parent
SDK_ADAPTER = HERE / "sdk_adapter.py"
RAW_ADAPTER = HERE / "raw_adapter.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def spec_for(
    tmp_path: Path,
    script: Path,
    *args: str,
    settings: dict[str, Any] | None = None,
    source_uid: str = "uid-fault",
    source_id: str = "fault",
    argv: list[str] | None = None,
) -> AdapterSpec:
    workdir = tmp_path / "state" / source_uid
    return AdapterSpec(
        source_uid=source_uid,
        source_id=source_id,
        argv=argv or [sys.executable, str(script), *args],
        env={"FAULT_PIDFILE": str(tmp_path / "pids"), "PYTHONPATH": str(HERE.parents[2])},
        workdir=workdir,
        init_params=InitializeParams(
            protocol_version_min=1,
            protocol_version_max=1,
            workdir=str(workdir),
            source_id=source_id,
            settings=settings,
        ),
    )


def deadline_in(seconds: float) -> datetime:
    return datetime.now(UTC) + timedelta(seconds=seconds)


def recorded_pids(tmp_path: Path) -> list[int]:
    path = tmp_path / "pids"
    if not path.exists():
        return []
    return [int(line) for line in path.read_text().split()]


def is_running(pid: int) -> bool:
    """True for a live process; a zombie (exited, not yet reaped by anyone) is not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def group_members(pgid: int) -> list[int]:
    """Live processes whose process group is ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


async def assert_no_process_left(tmp_path: Path, within: float = 3.0) -> list[int]:
    """Every pid the adapters recorded is gone (waiting up to ``within`` seconds)."""
    pids = recorded_pids(tmp_path)
    assert pids, "the adapter recorded no pid"
    with anyio.move_on_after(within):
        while any(is_running(pid) for pid in pids) or any(group_members(pid) for pid in pids):
            await anyio.sleep(0.02)
    left = [pid for pid in pids if is_running(pid)]
    assert left == [], f"processes left behind: {left}"
    stragglers = {pid: group_members(pid) for pid in pids if group_members(pid)}
    assert stragglers == {}, f"process groups not empty: {stragglers}"
    return pids
