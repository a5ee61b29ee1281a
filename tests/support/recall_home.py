"""A user home for the real ``recall`` command: configuration on disk, real notes adapters.

``RecallHome.build(root, notes=..., fixtures=..., others=...)`` writes one notes
source per folder (the built-in notes adapter), one fixture-adapter source per
records file, one source per other ``(adapter, location)``, a ``default``
profile over all of them, and an environment whose XDG
folders live under ``root``. ``recall(...)`` runs the installed command there.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.support.fixture_config import adapter_registration, settings_table, source_table
from tests.support.recall_workspace import RECALL, workspace_environ


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)


@dataclass
class RecallHome:
    root: Path
    env: dict[str, str]

    @classmethod
    def build(
        cls,
        root: Path,
        *,
        notes: dict[str, Path],
        fixtures: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]] | None = None,
        others: dict[str, tuple[str, Path]] | None = None,
    ) -> RecallHome:
        lines = adapter_registration()
        for index, (source_id, folder) in enumerate(notes.items()):
            lines += source_table(f"UIDNOTES{index:04d}{source_id.upper()[:5]}", source_id, "notes",
                                  folder, location_kind="path", sensitivity="internal", timeout_ms=10000)
            lines.append("")
        for index, (source_id, (records, settings)) in enumerate((fixtures or {}).items()):
            data = root / f"{source_id}.json"
            data.write_text(json.dumps({"records": records}))
            lines += source_table(f"UIDFIXT{index:04d}{source_id.upper()[:6]}", source_id, "fixture",
                                  data, sensitivity="internal", timeout_ms=60000)
            lines += settings_table(settings)
            lines.append("")
        for index, (source_id, (adapter, location)) in enumerate((others or {}).items()):
            lines += source_table(f"UIDOTHR{index:04d}{source_id.upper()[:6]}", source_id, adapter,
                                  location, sensitivity="internal", timeout_ms=10000)
            lines.append("")
        sources = [*notes, *(fixtures or {}), *(others or {})]
        lines += ["[profiles.default]", f"sources = {json.dumps(sources)}", 'max_sensitivity = "internal"']
        config_dir = root / "config" / "recall"
        config_dir.mkdir(parents=True, exist_ok=True)
        (config_dir / "config.toml").write_text("\n".join(lines) + "\n")
        home = cls(root, workspace_environ(root))
        for source_id in notes:
            refreshed = home.recall("refresh", "--source", source_id)
            assert refreshed.code == 0, refreshed.stderr
        return home

    def recall(self, *args: str, stdin: str = "", timeout: float = 60) -> Run:
        done = subprocess.run(
            [RECALL, *args], input=stdin, capture_output=True, text=True, env=self.env,
            cwd=self.root, timeout=timeout,
        )
        return Run(done.returncode, done.stdout, done.stderr)


def write_note(folder: Path, name: str, text: str, modified: str | None = None) -> Path:
    """Write a note; ``modified`` (ISO date) sets its mtime, the time the source recorded it."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if modified:
        stamp = datetime.fromisoformat(modified).timestamp()
        os.utime(path, (stamp, stamp))
    return path
