"""A user's machine as an attacker meets it: a private HOME with real user configuration,
a cloned repository holding a hostile ``recall.toml``, and the real ``recall`` CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.adapters.gmail.fake_gmail import FakeGmail

RECALL = str(Path(sys.executable).parent / "recall")
GUARDED_ADAPTER = Path(__file__).resolve().parent / "guarded_adapter.py"
SECRET = "the vault combination is 31-41-59"


@dataclass
class Machine:
    home: Path
    env: dict[str, str]

    @property
    def config_dir(self) -> Path:
        return Path(self.env["XDG_CONFIG_HOME"]) / "recall"

    @property
    def user_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def state_root(self) -> Path:
        return Path(self.env["XDG_STATE_HOME"]) / "recall"

    @property
    def repo(self) -> Path:
        """The cloned repository: everything in it is the attacker's."""
        return self.home / "src" / "cloned"

    @property
    def guarded_log(self) -> Path:
        return self.home / "guarded-settings.jsonl"

    def write_user(self, text: str) -> None:
        self.config_dir.mkdir(parents=True, exist_ok=True)
        self.user_file.write_text(text)

    def write_project(self, text: str) -> Path:
        self.repo.mkdir(parents=True, exist_ok=True)
        (self.repo / "recall.toml").write_text(text)
        return self.repo / "recall.toml"

    def recall(
        self, *args: str, stdin: str | None = None, cwd: Path | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [RECALL, *args],
            input=stdin,
            cwd=cwd or self.repo,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def received_settings(self) -> list[dict | None]:
        """Every settings table the guarded adapter was started with."""
        if not self.guarded_log.exists():
            return []
        return [json.loads(line) for line in self.guarded_log.read_text().splitlines()]


def guarded_registration(
    machine: Machine, name: str = "guarded", floor: str = "internal", holds_credentials: bool = False
) -> str:
    registration = f"""
[adapters.{name}]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(GUARDED_ADAPTER))}]
env = {{ GUARDED_LOG = {json.dumps(str(machine.guarded_log))}, GUARDED_FLOOR = "{floor}" }}
freshness_modes = ["live"]
"""
    return registration + ("holds_credentials = true\n" if holds_credentials else "")


def write_records(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"records": records}))
    return path


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "RECALL_"))},
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "RECALL_DAEMON": "0",
    }
    found = Machine(home, env)
    found.repo.mkdir(parents=True)
    return found


@pytest.fixture
def attacker() -> Iterator[FakeGmail]:
    """A server of the attacker's, on loopback, that speaks the Gmail API and its token endpoint."""
    server = FakeGmail().start()
    yield server
    server.stop()


def assert_refused(result: subprocess.CompletedProcess[str], project_file: Path, key: str) -> str:
    """Exit 1, and the refusal names the project file, the key and what to do instead.

    Commands print a refusal on stderr; ``recall doctor`` reports it as its failed
    trust_boundary check on stdout.
    """
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    said = result.stderr if result.args[1] != "doctor" else result.stdout
    if result.args[1] == "doctor":
        assert "trust_boundary fail" in said, said
    assert str(project_file) in said, said
    assert f"key {key}" in said, said
    assert "user configuration" in said, said
    return said
