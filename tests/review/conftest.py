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

FIXTURE_ADAPTER = Path(__file__).resolve().parents[1] / "fixtures" / "fixture_adapter.py"
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
        lines = [
            "[adapters.fixture]",
            f"command = {json.dumps(sys.executable)}",
            f"args = [{json.dumps(str(FIXTURE_ADAPTER))}]",
            'freshness_modes = ["live"]',
            "",
        ]
        for index, (source_id, spec) in enumerate(sources.items()):
            data = tmp_path / f"{source_id}.json"
            data.write_text(json.dumps({"records": spec.get("records", [])}))
            lines += [
                "[[sources]]",
                f'source_uid = "REVIEW{index:04d}{source_id.upper()[:8]}"',
                f'source_id = "{source_id}"',
                'adapter = "fixture"',
                f"location = {json.dumps(str(data))}",
                f"timeout_ms = {spec.get('timeout_ms', 3000)}",
            ]
            if spec.get("settings"):
                lines.append("[sources.settings]")
                lines += [f"{k} = {json.dumps(v)}" for k, v in spec["settings"].items()]
            lines.append("")
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
