"""A module's file name says what it holds, so no two broker modules share one.

The one convention that repeats a name: ``surfaces/commands/<name>.py`` is the
``recall <name>`` command, and may share its name with the operation it runs.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

BROKER = Path(__file__).resolve().parents[2] / "broker"
COMMANDS = BROKER / "surfaces" / "commands"


def test_no_two_broker_modules_share_a_name_outside_the_command_convention() -> None:
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in sorted(BROKER.rglob("*.py")):
        if path.name != "__init__.py" and path.parent != COMMANDS:
            by_name[path.name].append(str(path.relative_to(BROKER)))
    assert {name: paths for name, paths in by_name.items() if len(paths) > 1} == {}
