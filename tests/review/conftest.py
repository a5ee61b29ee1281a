"""A user's setup on disk: fixture sources behind the real ``recall`` command and broker.

``home(**sources)`` writes ``$XDG_CONFIG_HOME/recall/config.toml`` with one
fixture source per keyword (``{"records": [...], "settings": {...}}``) in the
``default`` profile, points this process's XDG variables at it (so
``load_config()`` reads it) and returns a :class:`Home` that runs ``recall``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.fixture_config import adapter_registration, fixture_sources

RECALL = str(Path(sys.executable).parent / "recall")


@dataclass
class Home:
    root: Path
    env: dict[str, str]

    def recall(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [RECALL, *args], input=stdin, capture_output=True, text=True, env=self.env,
            cwd=self.root, timeout=60,
        )


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Home]:
    def configure(**sources: dict[str, Any]) -> Home:
        config_dir = tmp_path / "config" / "recall"
        config_dir.mkdir(parents=True, exist_ok=True)
        lines = adapter_registration()
        lines += fixture_sources(tmp_path, sources, uid_prefix="REVIEW", keys={"timeout_ms": 3000})
        lines += ["[profiles.default]", f"sources = {json.dumps(list(sources))}"]
        (config_dir / "config.toml").write_text("\n".join(lines) + "\n")
        variables = {
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
        }
        for name, value in variables.items():
            monkeypatch.setenv(name, value)
        env = {**os.environ, **variables}
        env.pop("RECALL_SERVER", None)
        return Home(tmp_path, env)

    return configure
