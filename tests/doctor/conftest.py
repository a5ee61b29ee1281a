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

ADAPTER = Path(__file__).resolve().parent / "doctor_adapter.py"
ARGV = [sys.executable, str(ADAPTER)]
REGISTRATION = f"""
[adapters.probe]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(ADAPTER))}]
freshness_modes = ["live"]
"""


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
    lines = [
        "[[sources]]",
        f'source_uid = "{uid}"',
        f'source_id = "{source_id}"',
        f'adapter = "{adapter}"',
        f"location = {json.dumps(str(location))}",
        'location_kind = "path"',
        extra,
    ]
    if settings:
        lines.append("[sources.settings]")
        lines += [f"{key} = {toml_value(value)}" for key, value in settings.items()]
    return "\n".join(lines) + "\n"


def toml_value(value: Any) -> str:
    """A setting as an inline TOML value (strings, numbers, booleans, lists, tables)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)


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
            async with Supervisor() as supervisor:
                return await diagnose(loaded, supervisor, profile)

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
    }
    return Home(root, environ)
