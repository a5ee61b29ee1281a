"""config.example.toml documents every key, and it loads."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from broker.config import load_config
from broker.config.read import (
    ADAPTER_FIELDS,
    DEFAULTS_FIELDS,
    EVALUATION_FIELDS,
    MUST_ABSTAIN_FIELDS,
    PROFILE_FIELDS,
    PROJECT_FIELDS,
    QUERY_CLASSES,
    SOURCE_FIELDS,
)

from .conftest import Home

EXAMPLE = Path(__file__).resolve().parents[3] / "config.example.toml"


def every_valid_key() -> set[str]:
    keys = {f"defaults.{k}" for k in DEFAULTS_FIELDS}
    keys |= {f"sources.{k}" for k in SOURCE_FIELDS}
    keys |= {f"sources.intent_priors.{k}" for k in QUERY_CLASSES}
    keys |= {f"profiles.*.{k}" for k in PROFILE_FIELDS}
    keys |= {f"evaluation.{k}" for k in EVALUATION_FIELDS}
    keys |= {f"evaluation.must_abstain.{k}" for k in MUST_ABSTAIN_FIELDS}
    keys |= {f"adapters.*.{k}" for k in ADAPTER_FIELDS}
    keys |= {f"projects.*.{k}" for k in PROJECT_FIELDS}
    return keys


def keys_in(document: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for name, table in document.items():
        if name in ("profiles", "adapters", "projects"):
            for entry in table.values():
                found |= {f"{name}.*.{k}" for k in entry}
        elif isinstance(table, list):
            for entry in table:
                found |= {f"{name}.{k}" for k in entry}
                for inner in ("intent_priors",):
                    found |= {f"{name}.{inner}.{k}" for k in entry.get(inner, {})}
        else:
            for key, value in table.items():
                found.add(f"{name}.{key}")
                if isinstance(value, list) and value and isinstance(value[0], dict):
                    found |= {f"{name}.{key}.{k}" for entry in value for k in entry}
    return found


def test_the_example_configuration_loads(home: Home) -> None:
    config = load_config(user_file=EXAMPLE, environ=home.environ, discover_project=False)
    assert [s.source_id for s in config.sources] == ["notes", "notes-meaning", "tasks", "gmail", "tickets"]
    assert config.adapters["jira"].argv == ["recall-jira", "--read-only"]
    assert config.evaluation is not None and config.evaluation.must_abstain


def test_the_example_configuration_uses_every_key() -> None:
    document = tomllib.loads(EXAMPLE.read_text())
    assert every_valid_key() - keys_in(document) == set()
