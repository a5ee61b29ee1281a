"""Configuration text for tests: adapter registrations and ``[[sources]]`` tables, as lines.

``fixture_sources`` writes one fixture-adapter source per entry, its records in
``<root>/<source_id>.json``; the other builders are the pieces it is made of.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FIXTURE_ADAPTER = Path(__file__).resolve().parents[1] / "fixtures" / "fixture_adapter.py"


def toml_value(value: Any) -> str:
    """A value as inline TOML (strings, numbers, booleans, lists, tables)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)


def adapter_registration(name: str = "fixture", script: Path = FIXTURE_ADAPTER) -> list[str]:
    """``[adapters.<name>]`` running ``script`` with this Python, a blank line after it."""
    return [
        f"[adapters.{name}]",
        f"command = {json.dumps(sys.executable)}",
        f"args = [{json.dumps(str(script))}]",
        'freshness_modes = ["live"]',
        "",
    ]


def source_table(uid: str, source_id: str, adapter: str, location: str | Path, **keys: Any) -> list[str]:
    """One ``[[sources]]`` table; ``keys`` follow ``location`` in the order given."""
    return [
        "[[sources]]",
        f'source_uid = "{uid}"',
        f'source_id = "{source_id}"',
        f'adapter = "{adapter}"',
        f"location = {json.dumps(str(location))}",
        *(f"{key} = {toml_value(value)}" for key, value in keys.items()),
    ]


def settings_table(settings: Mapping[str, Any] | None) -> list[str]:
    """``[sources.settings]`` for the table above it; nothing when there are no settings."""
    if not settings:
        return []
    return ["[sources.settings]", *(f"{key} = {toml_value(value)}" for key, value in settings.items())]


def fixture_sources(
    root: Path,
    sources: Mapping[str, Mapping[str, Any]],
    *,
    uid_prefix: str = "UID",
    keys: Mapping[str, Any],
) -> list[str]:
    """A fixture-adapter source per entry (source id: ``{"records": [...], "settings": {...}, ...}``).

    Each source writes the keys named in ``keys``, taking the entry's value
    where it has one and the default given in ``keys`` otherwise.
    """
    lines: list[str] = []
    for index, (source_id, spec) in enumerate(sources.items()):
        data = root / f"{source_id}.json"
        data.write_text(json.dumps({"records": spec.get("records", [])}))
        written = {key: spec.get(key, default) for key, default in keys.items()}
        uid = f"{uid_prefix}{index:04d}{source_id.upper()[:8]}"
        lines += [*source_table(uid, source_id, "fixture", data, **written), *settings_table(spec.get("settings")), ""]
    return lines
