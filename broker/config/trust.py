"""The trust boundary: what a project ``recall.toml`` may and may not say.

A project file arrives with a cloned repository, so it is untrusted. It may add
sources and profiles and tune the ranking of sources the user declared. It may
never name anything that runs, choose an identity, redirect, repoint or disable
a user's source, shrink a profile, or loosen a sensitivity floor or ceiling.
Every refusal names the file, the key and the rule; nothing is silently dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from adapter_sdk.vocabulary import Sensitivity
from broker.config.problems import Problems

# A key is executable-looking when any word of its name is one of these, in any case:
# `command` and `ARGS` are, and so are adapter settings such as `task_binary` or
# `polign_server` that name a program to start.
EXECUTABLE_WORDS = frozenset(
    {
        "command", "cmd", "args", "argv", "env", "environment", "exec", "executable", "exe",
        "entrypoint", "shell", "binary", "bin", "program", "interpreter", "script", "hook",
        "hooks", "server",
    }
)  # fmt: skip
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_WORD_SPLIT = re.compile(r"[^a-z0-9]+")


def looks_executable(key: str) -> bool:
    words = _WORD_SPLIT.split(_CAMEL.sub(r"\1_\2", key).lower())
    return any(word in EXECUTABLE_WORDS for word in words)


RULE_EXECUTABLE = (
    "a project file may not name anything that runs; only user configuration decides "
    "which programs recall starts"
)
PROJECT_FORBIDDEN_TABLES: dict[str, str] = {
    "adapters": (
        "a project file may not register adapters; only user configuration decides which "
        "programs recall starts"
    ),
    "defaults": "a project file may not set [defaults]; they belong to user configuration",
    "evaluation": "a project file may not set [evaluation]; it belongs to user configuration",
}
RULE_SOURCE_UID = (
    "a project file may not choose a source_uid; identities are minted once in user "
    "configuration, and a source a project adds gets one derived by recall"
)

# Keys a project may set on a source the user declared; everything else is fixed.
TUNABLE_ON_USER_SOURCES = frozenset(
    {"base_prior", "intent_priors", "record_types", "timeout_ms", "freshness_policy", "sensitivity"}
)
_FIXED_RULES = {
    "adapter": "may not repoint a user's source at another adapter",
    "location": "may not redirect a user's source to another location",
    "location_kind": "may not change how a user's source location is read",
    "settings": "may not change a user's source settings, which decide what its adapter reads",
    "enabled": "may not enable or disable a user's source",
    "freshness_mode": "may not change a user's source freshness mode",
}
_UNSET_DEFAULTS: dict[str, Any] = {"enabled": True, "settings": {}}


def _walk(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            dotted = f"{path}.{key}" if path else key
            yield dotted, key
            yield from _walk(item, dotted)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{path}[{index}]")


def scan_project_document(raw: dict[str, Any], file: Path, problems: Problems) -> None:
    """Refuse everything a project file may never say, wherever it hides."""
    for table, rule in PROJECT_FORBIDDEN_TABLES.items():
        if table in raw:
            problems.trust(file, table, rule)
    scanned = {k: v for k, v in raw.items() if k not in PROJECT_FORBIDDEN_TABLES}
    keys = list(_walk({k: v for k, v in scanned.items() if k != "profiles"}, ""))
    profiles = scanned.get("profiles")
    if isinstance(profiles, dict):
        # Profile names are names, not keys: a profile may be called "server".
        for name, table in profiles.items():
            keys += _walk(table, f"profiles.{name}")
    for dotted, key in keys:
        if looks_executable(key):
            problems.trust(file, dotted, f"{key!r} looks executable: {RULE_EXECUTABLE}")
    sources = raw.get("sources")
    if isinstance(sources, list):
        for index, table in enumerate(sources):
            if isinstance(table, dict) and "source_uid" in table:
                problems.trust(
                    file,
                    f"sources[{index}].source_uid",
                    RULE_SOURCE_UID,
                    source_id=table.get("source_id")
                    if isinstance(table.get("source_id"), str)
                    else None,
                )


def check_source_overlay(
    user_values: dict[str, Any],
    project_values: dict[str, Any],
    file: Path,
    key_prefix: str,
    problems: Problems,
) -> dict[str, Any]:
    """The tuning a project may apply to a user's source; refusals are recorded."""
    source_id = user_values.get("source_id")
    allowed: dict[str, Any] = {}
    for name, value in project_values.items():
        if name == "source_id":
            continue
        key = f"{key_prefix}.{name}"
        if name in TUNABLE_ON_USER_SOURCES:
            if name == "sensitivity":
                floor = Sensitivity(user_values.get("sensitivity", Sensitivity.internal))
                if Sensitivity(value) < floor:
                    problems.trust(
                        file,
                        key,
                        f"a project file may not lower source {source_id!r}'s sensitivity "
                        f"floor from {floor} to {value}; it may only raise it",
                        source_id=source_id,
                    )
                    continue
            allowed[name] = value
        elif value != user_values.get(name, _UNSET_DEFAULTS.get(name)):
            problems.trust(
                file,
                key,
                f"a project file {_FIXED_RULES[name]} (source {source_id!r} is declared in "
                "user configuration); it may tune only "
                + ", ".join(sorted(TUNABLE_ON_USER_SOURCES)),
                source_id=source_id,
            )
    return allowed


def check_ceiling_overlay(
    profile: str, current: Sensitivity, wanted: Sensitivity, file: Path, problems: Problems
) -> bool:
    """A project may narrow a profile's ceiling, never widen it."""
    if wanted <= current:
        return True
    problems.trust(
        file,
        f"profiles.{profile}.max_sensitivity",
        f"a project file may not raise profile {profile!r}'s sensitivity ceiling from "
        f"{current} to {wanted}; it may only lower it",
    )
    return False
