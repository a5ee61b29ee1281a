"""Adapters shipped with recall: registered without the user writing a command."""

from __future__ import annotations

import sys

from broker.adapter_environment import BUILTIN_PASS_ENV
from broker.config.model import BUILTIN, AdapterRegistration

BUILTIN_FRESHNESS: dict[str, list[str]] = {
    "notes": ["indexed"],
    "tasks": ["live"],
    "gmail": ["live", "indexed"],  # the API is live; a Takeout mbox is indexed
    "eventstore": ["live"],
    "postgres": ["live"],
    "semantic": ["indexed"],  # the optional semantic leg over a notes folder
}
# Built-ins that read with the user's credentials: an OAuth token, a database key.
CREDENTIAL_ADAPTERS = frozenset({"gmail", "eventstore", "postgres"})


def inferred_freshness(adapter: str, location: str | None) -> str | None:
    """The mode a built-in adapter serves for this location, when it serves several.

    The gmail adapter reads the live API, or indexes a Takeout ``.mbox`` file.
    """
    if adapter == "gmail":
        return "indexed" if location and location.lower().endswith(".mbox") else "live"
    return None


# Names other implementations use for the same built-in adapter.
ALIASES: dict[str, str] = {"documents": "notes"}

RESERVED_NAMES = frozenset(BUILTIN_FRESHNESS) | frozenset(ALIASES)


def canonical_adapter_name(name: str) -> str:
    return ALIASES.get(name, name)


def builtin_registrations() -> dict[str, AdapterRegistration]:
    return {
        name: AdapterRegistration(
            name=name,
            builtin=True,
            argv=[sys.executable, "-m", f"adapters.{name}"],
            env={},
            freshness_modes=list(modes),
            conformance=None,
            origin=BUILTIN,
            holds_credentials=name in CREDENTIAL_ADAPTERS,
            pass_env=BUILTIN_PASS_ENV[name],
        )
        for name, modes in BUILTIN_FRESHNESS.items()
    }
