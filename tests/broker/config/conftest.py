from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from broker.config import Config, load_config
from broker.errors import ConfigError

NOTES_UID = "01J8ZKQ4M7NOTESX"
TASKS_UID = "01J8ZKQ4M7TASKSX"

# A user configuration the trust-boundary tests build on.
USER_CONFIG = f"""
[[sources]]
source_uid = "{NOTES_UID}"
source_id = "notes"
adapter = "notes"
location = "notes"
location_kind = "path"
sensitivity = "confidential"
settings = {{ extensions = [".md"] }}

[[sources]]
source_uid = "{TASKS_UID}"
source_id = "tasks"
adapter = "tasks"
location = "todo.txt"
location_kind = "path"

[profiles.work]
sources = ["notes", "tasks"]
max_sensitivity = "confidential"
"""


@dataclass
class Home:
    """A private HOME with XDG directories and a project checkout below it."""

    root: Path
    environ: dict[str, str]

    @property
    def config_dir(self) -> Path:
        return Path(self.environ["XDG_CONFIG_HOME"]) / "recall"

    @property
    def user_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def project_dir(self) -> Path:
        return self.root / "project"

    @property
    def project_file(self) -> Path:
        return self.project_dir / "recall.toml"

    def write_user(self, text: str) -> Path:
        self.config_dir.mkdir(parents=True, exist_ok=True)
        self.user_file.write_text(text)
        return self.user_file

    def write_adapters(self, name: str, text: str) -> Path:
        path = self.config_dir / "adapters.d" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def write_project(self, text: str) -> Path:
        self.project_dir.mkdir(parents=True, exist_ok=True)
        self.project_file.write_text(text)
        return self.project_file

    def load(self, cwd: Path | None = None) -> Config:
        return load_config(cwd=cwd or self.project_dir, environ=self.environ)

    def load_error(self, cwd: Path | None = None) -> ConfigError:
        with pytest.raises(ConfigError) as caught:
            self.load(cwd)
        return caught.value

    def recall(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        environ = {**os.environ, **self.environ}
        return subprocess.run(
            [str(Path(sys.executable).parent / "recall"), *args],
            cwd=cwd or self.root,
            env=environ,
            capture_output=True,
            text=True,
            timeout=60,
        )


@pytest.fixture
def home(tmp_path: Path) -> Home:
    root = tmp_path / "home"
    root.mkdir()
    (root / "project").mkdir()
    environ = {
        "HOME": str(root),
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_STATE_HOME": str(root / "state"),
        "XDG_CACHE_HOME": str(root / "cache"),
        "PATH": os.environ.get("PATH", ""),
        "RECALL_DAEMON": "0",
    }
    return Home(root, environ)


@pytest.fixture
def user_home(home: Home) -> Home:
    home.write_user(USER_CONFIG)
    return home


def problem_at(error: ConfigError, key: str) -> str:
    """The rendered problem for a dotted key, failing with the full list if absent."""
    for problem in error.problems:
        if problem.key == key:
            return str(problem)
    raise AssertionError(f"no problem at {key!r}; got: {[str(p) for p in error.problems]}")
