"""One workspace with a profile per fault: a healthy source beside one that misbehaves.

Misbehaving adapters are the suite's own fixtures (``tests/fixtures/fixture_adapter.py``
and ``tests/broker/supervise/raw_adapter.py``) and the real notes adapter. Every process a
surface starts inherits ``RECALL_FAULT_RUN``, which is how the tests find orphans.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.fixture_config import (
    FIXTURE_ADAPTER,
    adapter_registration,
    settings_table,
    source_table,
)
from tests.support.recall_workspace import Served, start_server, workspace_environ

RAW_ADAPTER = Path(__file__).resolve().parents[1] / "broker" / "supervise" / "raw_adapter.py"
RECALL = str(Path(sys.executable).parent / "recall")
RESTORE = {"id": "restore", "title": "Restore drill runbook", "body": "Restore the newest snapshot."}
RAW_SCENARIOS = ("exit_in_handshake", "garbage", "oversized", "unknown_id", "hang", "slow_health")
FAULT_TIMEOUT_MS = 1500


@dataclass(frozen=True)
class Fault:
    """One row of the table: the faulty source and what every surface must then say."""

    name: str
    adapter: str  # fixture | raw_<scenario> | notes
    settings: dict[str, object] = field(default_factory=dict)
    outcome: str = "answered"
    coverage: str = "degraded"
    degraded: tuple[str, ...] = ()  # source_summary.degraded entries, as every surface states them

    @property
    def exit_code(self) -> int:
        return 0 if self.coverage == "complete" else 3

    @property
    def http_status(self) -> int:
        return 200 if self.coverage == "complete" else 206


@dataclass
class FaultWorkspace:
    root: Path
    env: dict[str, str]
    run_token: str
    servers: dict[str, Served] = field(default_factory=dict)

    def recall(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [RECALL, *args], input=stdin, capture_output=True, text=True, env=self.env, timeout=90,
            cwd=self.root,
        )

    def server(self, profile: str) -> Served:
        if profile not in self.servers:
            self.servers[profile] = start_server(self, "--profile", profile)  # type: ignore[arg-type]
        return self.servers[profile]

    def live_processes(self, *, besides: tuple[int, ...] = ()) -> list[int]:
        """Running (not zombie) processes started for this workspace, other than ``besides``."""
        marker = f"RECALL_FAULT_RUN={self.run_token}".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) in besides or int(entry.name) == os.getpid():
                continue
            try:
                environ = (entry / "environ").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if marker in environ.split(b"\0") and state != "Z":
                found.append(int(entry.name))
        return found


def fault_source(root: Path, index: int, fault: Fault) -> list[str]:
    keys: dict[str, object] = {"location_kind": "path", "sensitivity": "internal", "timeout_ms": FAULT_TIMEOUT_MS}
    if fault.adapter == "notes":
        location: Path = root / f"{fault.name}-notes"
        location.mkdir()
        (location / "drill.md").write_text("# Drill\n\nThe restore drill took 31 minutes.\n")
    else:
        location = root / f"{fault.name}.json"
        location.write_text(json.dumps({"records": [RESTORE]}))
    uid = f"FAULT{index:04d}{fault.name.upper().replace('_', '')[:8]}"
    return [*source_table(uid, fault.name, fault.adapter, location, **keys), *settings_table(fault.settings), ""]


def write_workspace(root: Path, faults: list[Fault]) -> FaultWorkspace:
    config_dir = root / "config" / "recall"
    config_dir.mkdir(parents=True)
    lines = adapter_registration("fixture", FIXTURE_ADAPTER)
    for scenario in RAW_SCENARIOS:
        lines += [
            f"[adapters.raw_{scenario}]",
            f"command = {json.dumps(sys.executable)}",
            f"args = [{json.dumps(str(RAW_ADAPTER))}, {json.dumps(scenario)}]",
            'freshness_modes = ["live"]',
            "",
        ]
    good = root / "good.json"
    good.write_text(json.dumps({"records": [RESTORE]}))
    lines += [*source_table("FAULTGOOD0000001", "good", "fixture", good, location_kind="path",
                            sensitivity="internal", timeout_ms=5000), ""]
    for index, fault in enumerate(faults):
        lines += fault_source(root, index, fault)
    lines += ["[profiles.default]", 'sources = ["good"]', 'max_sensitivity = "internal"', ""]
    for fault in faults:
        lines += [f"[profiles.{fault.name}]", f'sources = ["good", "{fault.name}"]', 'max_sensitivity = "internal"', ""]
    (config_dir / "config.toml").write_text("\n".join(lines) + "\n")
    token = uuid.uuid4().hex
    return FaultWorkspace(root, {**workspace_environ(root), "RECALL_FAULT_RUN": token}, token)


def break_stores(workspace: FaultWorkspace, faults: list[Fault]) -> None:
    """Index each notes store, then delete it: the index remains, the store does not."""
    for fault in faults:
        if fault.adapter == "notes":
            built = workspace.recall("refresh", "--profile", fault.name, "--source", fault.name, "--json")
            assert built.returncode == 0, built.stdout + built.stderr
            shutil.rmtree(workspace.root / f"{fault.name}-notes")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def workspace_fixture(faults: list[Fault]):  # type: ignore[no-untyped-def]
    @pytest.fixture(scope="module")
    def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultWorkspace]:
        ws = write_workspace(tmp_path_factory.mktemp("faults"), faults)
        break_stores(ws, faults)
        yield ws
        for served in ws.servers.values():
            served.stop()
        assert ws.live_processes() == [], "processes outlived every surface"

    return workspace
