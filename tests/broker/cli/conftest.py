"""Run the installed ``recall`` command against fixture sources configured in a temp home."""

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

RECALL = Path(sys.executable).parent / "recall"


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)


@pytest.fixture
def home(tmp_path: Path) -> Callable[..., Callable[..., Run]]:
    """Configure fixture sources (keyword = source id) and return a ``recall`` runner."""

    def configure(**sources: dict[str, Any]) -> Callable[..., Run]:
        config_dir = tmp_path / "config" / "recall"
        config_dir.mkdir(parents=True, exist_ok=True)
        lines = adapter_registration()
        lines += fixture_sources(tmp_path, sources, keys={"timeout_ms": 3000, "sensitivity": "internal"})
        lines += ["[profiles.default]", f"sources = {json.dumps(list(sources))}",
                  'max_sensitivity = "internal"']
        (config_dir / "config.toml").write_text("\n".join(lines) + "\n")
        env = {
            **os.environ,
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
        }

        def recall(*args: str, stdin: str | None = None) -> Run:
            done = subprocess.run(
                [str(RECALL), *args], capture_output=True, text=True, env=env, cwd=tmp_path,
                input=stdin, timeout=60,
            )
            return Run(done.returncode, done.stdout, done.stderr)

        return recall

    return configure
