"""A real configuration on disk, real ``recall`` processes, real servers on ephemeral ports.

Profiles: ``default`` (kb, notes, tasks: every source healthy) and ``wide``
(those plus ``broken`` that answers source_unavailable, ``crashy`` that exits
mid-search and ``sick`` that reports itself unavailable), ``down`` (only
``sick``: every source unusable) and ``lagging`` (kb and ``lagging``, which
answers but reports itself degraded).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fixture_config import (
    FIXTURE_ADAPTER,
    adapter_registration,
    settings_table,
    source_table,
)
from tests.support.recall_workspace import (
    RECALL,
    Served,
    Workspace,
    serving,
    start_server,
    workspace_environ,
)

__all__ = ["FIXTURE_ADAPTER", "RECALL", "start_server"]
FIXTURES = Path(__file__).resolve().parent / "fixtures"

RESTORE = {"id": "restore", "title": "Restore drill runbook",
           "body": "Restore the newest snapshot and compare checksums."}
RETENTION = {"id": "retention", "title": "Backup retention", "body": "Snapshots are kept ninety days."}
EXPIRED = {"id": "tape-restore", "title": "Restore drill from tape",
           "body": "Restore the tape drill snapshot.", "valid_to": "2020-01-01T00:00:00Z"}
TASK = {"id": "t1", "title": "Run the quarterly restore drill", "body": "Owner rotates."}
KB_NOTE = """\
# Drill log

The restore drill finished in 31 minutes; checksums matched.
"""


def _source(uid: str, source_id: str, adapter: str, location: Path, settings: dict | None = None,
            record_types: list[str] | None = None) -> list[str]:
    keys: dict = {"location_kind": "path", "sensitivity": "internal", "timeout_ms": 3000}
    if record_types:
        keys["record_types"] = record_types
    return [*source_table(uid, source_id, adapter, location, **keys), *settings_table(settings), ""]


def write_workspace(root: Path) -> Workspace:
    config_dir = root / "config" / "recall"
    config_dir.mkdir(parents=True)
    (root / "kb").mkdir()
    (root / "kb" / "drill-log.md").write_text(KB_NOTE)

    def records(name: str, items: list[dict]) -> Path:
        path = root / f"{name}.json"
        path.write_text(json.dumps({"records": items}))
        return path

    lines = adapter_registration()
    lines += _source("UIDKB000000000001", "kb", "notes", root / "kb")
    lines += _source("UIDNOTES000000001", "notes", "fixture", records("notes", [RESTORE, RETENTION, EXPIRED]),
                     record_types=["note"])
    lines += _source("UIDTASKS000000001", "tasks", "fixture", records("tasks", [TASK]),
                     {"record_type": "task"}, record_types=["task"])
    lines += _source("UIDBROKEN00000001", "broken", "fixture", records("broken", [RESTORE]), {"fail": "error"})
    lines += _source("UIDCRASHY00000001", "crashy", "fixture", records("crashy", [RESTORE]), {"fail": "crash"})
    lines += _source("UIDSICK0000000001", "sick", "fixture", records("sick", [TASK]), {"health": "unavailable"})
    lines += _source("UIDLAGGING0000001", "lagging", "fixture", records("lagging", [TASK]), {"health": "degraded"})
    lines += [
        "[defaults]",
        'profile = "default"',
        "",
        "[profiles.default]",
        'sources = ["kb", "notes", "tasks"]',
        'max_sensitivity = "internal"',
        "",
        "[profiles.wide]",
        'sources = ["kb", "notes", "tasks", "broken", "crashy", "sick"]',
        'max_sensitivity = "internal"',
        "",
        "[profiles.down]",
        'sources = ["sick"]',
        'max_sensitivity = "internal"',
        "",
        "[profiles.lagging]",
        'sources = ["kb", "lagging"]',
        'max_sensitivity = "internal"',
    ]
    (config_dir / "config.toml").write_text("\n".join(lines) + "\n")
    return Workspace(root, workspace_environ(root))


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    ws = write_workspace(tmp_path_factory.mktemp("surfaces"))
    refreshed = ws.recall("refresh", "--source", "kb", "--json")
    assert refreshed.returncode == 0, refreshed.stderr
    return ws


@pytest.fixture(scope="session")
def default_server(workspace: Workspace) -> Iterator[Served]:
    yield from serving(workspace)


@pytest.fixture(scope="session")
def wide_server(workspace: Workspace) -> Iterator[Served]:
    yield from serving(workspace, "--profile", "wide")


def fixture_request(name: str) -> str:
    return (FIXTURES / name).read_text()


def dedent(text: str) -> str:
    return textwrap.dedent(text)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
