from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from broker.config import Config, load_config
from broker.errors import ConfigError
from tests.support.private_home import PrivateHome

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


class Home(PrivateHome):
    """The configuration tests' home: each file written as given; a bad load raises."""

    def write_user(self, text: str) -> Path:
        self.config_dir.mkdir(parents=True, exist_ok=True)
        self.user_file.write_text(text)
        return self.user_file

    def write_adapters(self, name: str, text: str) -> Path:
        path = self.config_dir / "adapters.d" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def load(self, cwd: Path | None = None) -> Config:
        return load_config(cwd=cwd or self.project_dir, environ=self.environ)

    def load_error(self, cwd: Path | None = None) -> ConfigError:
        with pytest.raises(ConfigError) as caught:
            self.load(cwd)
        return caught.value

    def recall(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return self.run_recall(*args, cwd=cwd or self.root, timeout=60)


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home.under(tmp_path)


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
