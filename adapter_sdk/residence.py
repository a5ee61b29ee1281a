"""Whether an adapter serves a long-lived broker, told through one environment variable.

A process that stays up and keeps its adapters warm (the resident broker, ``recall
serve``, ``recall mcp``) calls :func:`mark_long_lived` once at start; the adapters
it spawns inherit :data:`LONG_LIVED_ENV` (holding that process's id), and an
adapter reads it with :func:`long_lived`. A command run once and gone does not set
it, and an inherited value (a program started from a long-lived broker's process
tree, running ``recall`` in turn) is not passed on: only the process that set it
hands it to its adapters (:func:`set_here`).

Standard library only: the thin client imports this before anything else.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing itself costs a fresh process milliseconds
if TYPE_CHECKING:
    from collections.abc import Mapping, MutableMapping

LONG_LIVED_ENV = "RECALL_LONG_LIVED_BROKER"


def mark_long_lived(environ: MutableMapping[str, str] | None = None) -> None:
    """Say, to every adapter this process spawns from now on, that it is long-lived."""
    (os.environ if environ is None else environ)[LONG_LIVED_ENV] = str(os.getpid())


def set_here(environ: Mapping[str, str]) -> bool:
    """Whether ``environ`` carries the mark set by this very process."""
    return environ.get(LONG_LIVED_ENV) == str(os.getpid())


def long_lived(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this adapter was spawned by a long-lived broker."""
    return bool((os.environ if environ is None else environ).get(LONG_LIVED_ENV))
