"""Adapters shipped with recall: their names, aliases and what each serves.

A catalogue of plain values that the configuration model and its merging read;
it imports neither.
"""

from __future__ import annotations

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

