"""Whether an adapter serves a long-lived broker, told through one environment variable.

A process that stays up and keeps its adapters warm (the resident broker, ``recall
serve``, ``recall mcp``) calls :func:`mark_long_lived` once at start: the variable
:data:`LONG_LIVED_ENV` then holds its process id, and the adapters it spawns
inherit it (every ``RECALL_*`` variable reaches an adapter). An adapter reads it
with :func:`long_lived`, which believes it only from its own parent: a value
inherited further (a shell started from a long-lived broker's process tree, whose
commands run their adapters themselves) names another process.

Standard library only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping

LONG_LIVED_ENV = "RECALL_LONG_LIVED_BROKER"


def mark_long_lived(environ: MutableMapping[str, str] | None = None) -> None:
    """Tell every adapter this process spawns from now on that it is long-lived."""
    (os.environ if environ is None else environ)[LONG_LIVED_ENV] = str(os.getpid())


def long_lived(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this adapter's parent is a long-lived broker that marked itself."""
    return (os.environ if environ is None else environ).get(LONG_LIVED_ENV) == str(os.getppid())
