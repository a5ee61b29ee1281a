"""The trust boundary: what a project ``recall.toml`` may and may not say.

A project file arrives with a cloned repository, so it is untrusted. It may add
sources and profiles and tune the ranking of sources the user declared. It may
never name anything that runs, choose an identity, redirect, repoint or disable
a user's source, shrink a profile, or loosen a sensitivity floor or ceiling.

A source a project adds reads only inside the project folder (the directory
holding ``recall.toml``, symlinks resolved), may not use an adapter that holds
credentials unless the user opted the project in, and may set only the settings
its adapter's schema declares without marking them ``trusted_only``
(:func:`check_project_settings`, applied before the settings reach the adapter).
Every refusal names the file, the key and the rule; nothing is silently dropped.
"""

from __future__ import annotations

import ntpath
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from adapter_sdk.protocol import project_settable
from adapter_sdk.vocabulary import Sensitivity
from broker.config.locations import ResolvedLocation, infer_kind
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
    "projects": (
        "a project file may not set [projects]; only user configuration opts a project in "
        "to more than the trust boundary allows"
    ),
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


# -- sources a project adds ---------------------------------------------------------


def project_root(file: Path) -> Path:
    """The folder a project file may read: the one holding it, symlinks resolved."""
    return Path(os.path.realpath(file.parent))


def _in_user_configuration(user_file: Path) -> str:
    return f"declare the source in user configuration ({user_file})"


def _move_to_user(user_file: Path) -> str:
    return "to read it anyway, " + _in_user_configuration(user_file)


def check_project_location(
    location: str | None,
    kind: str | None,
    file: Path,
    key_prefix: str,
    user_file: Path,
    problems: Problems,
    *,
    source_id: str | None,
    opted_in: bool = False,
) -> tuple[bool, ResolvedLocation | None]:
    """Whether a project source's location is allowed, and what the adapter receives.

    The location is a path relative to the project folder (absolute only if it
    is inside it). It is resolved through every symlink before the check, and
    the adapter receives the resolved path, so a link swapped in later does not
    move the source. A source of a credential-holding adapter the user opted the
    project in to may instead omit its location or give a plain name with no
    path syntax (a mail account): the opt-in is the user's consent to that read.
    """
    root = project_root(file)
    key = f"{key_prefix}.location"
    if opted_in and kind is None and (location is None or infer_kind(location) == "opaque"):
        return True, None if location is None else ResolvedLocation(location, "opaque", False)
    if location is None:
        problems.trust(
            file,
            key,
            "a source a project file adds must name its location, a path inside the project "
            f"folder {root}; without one its adapter would choose a place of its own",
            source_id=source_id,
        )
        return False, None
    if kind is not None and kind != "path":
        problems.trust(
            file,
            f"{key_prefix}.location_kind",
            f"a source a project file adds reads a path inside the project folder {root}; "
            f"location_kind {kind!r} would let it name something else; "
            + _move_to_user(user_file),
            source_id=source_id,
        )
        return False, None
    if location.startswith("~"):
        problems.trust(
            file,
            key,
            f"location {location!r}: a project file's values are not expanded, and '~' would "
            f"name the user's home, not the project; write a path relative to {root}, or "
            + _in_user_configuration(user_file),
            source_id=source_id,
        )
        return False, None
    if ntpath.splitdrive(location)[0] or location.startswith("\\"):
        problems.trust(
            file,
            key,
            f"location {location!r} names a drive or network share, outside the project "
            f"folder {root}; " + _move_to_user(user_file),
            source_id=source_id,
        )
        return False, None
    real = Path(os.path.realpath(root / location))
    if real != root and root not in real.parents:
        problems.trust(
            file,
            key,
            f"location {location!r} resolves to {real}, outside the project folder {root}: "
            "a project file may only read inside its own folder; " + _move_to_user(user_file),
            source_id=source_id,
        )
        return False, None
    return True, ResolvedLocation(str(real), "path", kind is not None)


def check_credential_adapter(
    adapter: str,
    opted_in: frozenset[str],
    file: Path,
    key_prefix: str,
    user_file: Path,
    problems: Problems,
    *,
    source_id: str | None,
) -> bool:
    """Whether a project may add a source of ``adapter``, which holds the user's credentials."""
    if adapter in opted_in:
        return True
    root = project_root(file)
    problems.trust(
        file,
        f"{key_prefix}.adapter",
        f"adapter {adapter!r} holds the user's credentials, so a project file may not add a "
        f"source of it: {_in_user_configuration(user_file)}, or opt this "
        f'project in there with [projects."{root}"] credential_adapters = ["{adapter}"]',
        source_id=source_id,
    )
    return False


def check_project_settings(
    settings: dict[str, Any],
    settings_schema: dict[str, Any] | None,
    adapter: str,
    file: Path,
    key_prefix: str,
    user_file: Path,
    problems: Problems,
    *,
    source_id: str | None,
) -> None:
    """Refuse every setting of a project source its adapter does not let a project choose."""
    properties = (settings_schema or {}).get("properties")
    declared = properties if isinstance(properties, dict) else {}
    for name in sorted(settings):
        if project_settable(settings_schema, name):
            continue
        if settings_schema is None:
            why = f"adapter {adapter!r} publishes no settings schema, so nothing marks it safe"
        elif name not in declared:
            why = f"adapter {adapter!r} does not declare it in its settings schema"
        else:
            why = (
                f"adapter {adapter!r} marks it trusted_only (it chooses an endpoint, a "
                "credential or something else only the user may choose)"
            )
        problems.trust(
            file,
            f"{key_prefix}.settings.{name}",
            f"a project file may not set {name!r}: {why}; set it on a source declared in user "
            f"configuration ({user_file})",
            source_id=source_id,
        )
