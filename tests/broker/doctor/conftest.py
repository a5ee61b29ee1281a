"""A private HOME whose configuration runs the settings-driven doctor adapter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from broker.config import Config, load_config
from broker.doctor import Diagnosis, diagnose
from broker.errors import ConfigError
from broker.supervise import Supervisor
from tests.support.fixture_config import adapter_registration, settings_table, source_table

ADAPTER = Path(__file__).resolve().parent / "doctor_adapter.py"
ARGV = [sys.executable, str(ADAPTER)]
REGISTRATION = "\n" + "\n".join(adapter_registration("probe", ADAPTER))


def source(
    source_id: str,
    uid: str,
    location: str | Path,
    *,
    adapter: str = "probe",
    extra: str = "",
    **settings: Any,
) -> str:
    """One ``[[sources]]`` table for the doctor adapter; keyword arguments become settings."""
    lines = [*source_table(uid, source_id, adapter, location, location_kind="path"), extra, *settings_table(settings)]
    return "\n".join(lines) + "\n"


def profile(*source_ids: str, name: str = "default") -> str:
    return f"[profiles.{name}]\nsources = {json.dumps(list(source_ids))}\n"


def records(path: Path, *titles: str) -> Path:
    path.write_text(json.dumps({"records": [{"id": f"r{i}", "title": t} for i, t in enumerate(titles)]}))
    return path


@dataclass
class Home:
    root: Path
    environ: dict[str, str]

    @property
    def user_file(self) -> Path:
        return Path(self.environ["XDG_CONFIG_HOME"]) / "recall" / "config.toml"

    @property
    def project_dir(self) -> Path:
        return self.root / "project"

    def write_user(self, *parts: str) -> Path:
        self.user_file.parent.mkdir(parents=True, exist_ok=True)
        self.user_file.write_text(REGISTRATION + "\n".join(parts))
        return self.user_file

    def write_project(self, text: str) -> Path:
        file = self.project_dir / "recall.toml"
        file.write_text(text)
        return file

    def load(self) -> Config | ConfigError:
        try:
            return load_config(cwd=self.project_dir, environ=self.environ)
        except ConfigError as exc:
            return exc

    def diagnose(self, profile: str = "") -> Diagnosis:
        loaded = self.load()

        async def main() -> Diagnosis:
            from broker.app import Broker

            async with Supervisor() as supervisor:
                ask = Broker(loaded, supervisor).query if not isinstance(loaded, Exception) else None
                return await diagnose(loaded, supervisor, profile, ask=ask)

        return anyio.run(main)

    def recall(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(Path(sys.executable).parent / "recall"), *args],
            cwd=self.project_dir,
            env={**os.environ, **self.environ},
            capture_output=True,
            text=True,
            timeout=90,
        )


@pytest.fixture
def home(tmp_path: Path) -> Home:
    root = tmp_path / "home"
    (root / "project").mkdir(parents=True)
    environ = {
        "HOME": str(root),
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_STATE_HOME": str(root / "state"),
        "XDG_CACHE_HOME": str(root / "cache"),
        "PATH": os.environ.get("PATH", ""),
        "RECALL_DAEMON": "0",
    }
    return Home(root, environ)
