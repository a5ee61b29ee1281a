"""End-to-end fixtures: real adapter processes configured through real TOML."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FIXTURE_ADAPTER = Path(__file__).resolve().parents[1] / "fixtures" / "fixture_adapter.py"


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
                f'source_uid = "UID{index:04d}{source_id.upper()[:8]}"',
                f'source_id = "{source_id}"',
                'adapter = "fixture"',
                f"location = {json.dumps(str(data))}",
                'location_kind = "path"',
                f'sensitivity = "{spec.get("sensitivity", "internal")}"',
                f"timeout_ms = {spec.get('timeout_ms', 3000)}",
                f"base_prior = {spec.get('base_prior', 1.0)}",
            ]
            if spec.get("settings"):
                lines.append("[sources.settings]")
                for key, value in spec["settings"].items():
                    lines.append(f"{key} = {json.dumps(value)}")
            lines.append("")
        lines += [
            "[profiles.default]",
            f"sources = {json.dumps(list(sources))}",
            f'max_sensitivity = "{profile_ceiling}"',
            extra,
        ]
        return config_from_text("\n".join(lines), base_dir=tmp_path)

    return build
