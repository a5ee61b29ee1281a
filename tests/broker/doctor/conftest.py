"""A private HOME whose configuration runs the settings-driven doctor adapter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from broker.config import Config, load_config
from broker.doctor import Diagnosis, diagnose
from broker.errors import ConfigError
from broker.supervise import Supervisor
from tests.support.fixture_config import adapter_registration, settings_table, source_table
from tests.support.private_home import PrivateHome

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


class Home(PrivateHome):
    """The doctor tests' home: its user file registers the doctor adapter; a bad load is returned."""

    def write_user(self, *parts: str) -> Path:
        self.config_dir.mkdir(parents=True, exist_ok=True)
        self.user_file.write_text(REGISTRATION + "\n".join(parts))
        return self.user_file

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
        return self.run_recall(*args, cwd=self.project_dir, timeout=90)


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home.under(tmp_path)
