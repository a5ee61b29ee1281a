"""End-to-end fixtures: real adapter processes configured through real TOML."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.fixture_config import adapter_registration, fixture_sources


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def write_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """Write one fixture source per keyword argument and load a configuration for them.

    Each argument is ``{"records": [...], "settings": {...}, "sensitivity": ...,
    "timeout_ms": ..., "base_prior": ...}``; the source id is the keyword.
    """
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))

    def build(profile_ceiling: str = "restricted", extra: str = "", **sources: dict[str, Any]):
        from broker.config import config_from_text

        lines = adapter_registration()
        lines += fixture_sources(tmp_path, sources, keys={
            "location_kind": "path", "sensitivity": "internal", "timeout_ms": 3000, "base_prior": 1.0,
        })
        lines += [
            "[profiles.default]",
            f"sources = {json.dumps(list(sources))}",
            f'max_sensitivity = "{profile_ceiling}"',
            extra,
        ]
        return config_from_text("\n".join(lines), base_dir=tmp_path)

    return build
