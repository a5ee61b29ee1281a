"""Integration fixtures: the real built-in adapters over folders the tests write."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def write_note(root: Path, relative: str, text: str, modified: str | None = None) -> Path:
    """Write a note; ``modified`` (ISO date) sets its mtime so as_of filters see a history."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if modified:
        stamp = datetime.fromisoformat(modified).timestamp()
        os.utime(path, (stamp, stamp))
    return path


@pytest.fixture
def builtin_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """A configuration of built-in adapters: keyword = source id, value = (adapter, location)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))

    def build(**sources: tuple[str, Path]):
        from broker.config import config_from_text

        lines: list[str] = []
        for index, (source_id, (adapter, location)) in enumerate(sources.items()):
            lines += [
                "[[sources]]",
                f'source_uid = "INTEG{index:04d}{source_id.upper()[:6]}"',
                f'source_id = "{source_id}"',
                f'adapter = "{adapter}"',
                f"location = {json.dumps(str(location))}",
                "timeout_ms = 10000",
                "",
            ]
        lines += ["[profiles.default]", f"sources = {json.dumps(list(sources))}"]
        return config_from_text("\n".join(lines), base_dir=tmp_path)

    return build
