"""recall init: write a commented user configuration with its first sources."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from broker.surfaces.commands._common import add_json, print_json

if TYPE_CHECKING:
    from broker.config.init import StarterSource

HELP = "write a starter user configuration"
DESCRIPTION = (
    "Write $XDG_CONFIG_HOME/recall/config.toml with a notes source, a tasks source, or both,\n"
    "each with a freshly minted source_uid, plus commented examples for the other adapters.\n"
    "An existing file is never overwritten without --force."
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--notes", metavar="DIR", help="a folder of markdown or text notes")
    parser.add_argument(
        "--tasks",
        metavar="PATH",
        help="a Taskwarrior data directory, or a todo.txt file (named *.txt)",
    )
    parser.add_argument("--force", action="store_true", help="replace an existing configuration")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    from broker.config.init import (
        declared_source_uids,
        notes_directory,
        refuse_existing,
        tasks_location,
        user_config_path,
        write_user_config,
    )
    from broker.errors import UsageError

    home = os.environ.get("HOME") or None
    path = user_config_path(os.environ)
    refuse_existing(path, force=args.force)
    notes_text, tasks_text = args.notes, args.tasks
    if notes_text is None and tasks_text is None:
        if args.json or not sys.stdin.isatty():
            raise UsageError("recall init needs --notes DIR, --tasks PATH, or both")
        notes_text = input("Notes directory: ").strip()
        if not notes_text:
            raise UsageError("recall init needs a notes directory")
    notes = notes_directory(notes_text, home) if notes_text is not None else None
    tasks = tasks_location(tasks_text, home) if tasks_text is not None else None
    replaced_uids = declared_source_uids(path) if args.force else set()
    result = write_user_config(path, notes=notes, tasks=tasks, force=args.force)
    forgotten = _forget_replaced(replaced_uids)

    if args.json:
        print_json(
            {
                "action": result.action,
                "config_path": str(result.config_path),
                "notes": _source_json(result.notes),
                "tasks": _source_json(result.tasks),
                "next": result.next,
                "removed_indexes": [str(p) for p in forgotten],
            }
        )
        return 0
    lines = [f"{result.action} {result.config_path}"]
    if result.notes is not None:
        lines += [
            f"notes source {result.notes.source_id} ({result.notes.source_uid})",
            f"notes directory {result.notes.location}",
        ]
    if result.tasks is not None:
        lines += [
            f"tasks source {result.tasks.source_id} ({result.tasks.source_uid})",
            f"tasks location {result.tasks.location}",
        ]
    if forgotten:
        lines.append(f"removed {len(forgotten)} index folders of the replaced sources")
    lines += ["", "Next:", *(f"  {step}" for step in result.next)]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _forget_replaced(uids: set[str]) -> list:
    """Drop the indexes of sources the replaced file declared: their uids are gone for good."""
    from broker.config import load_config
    from broker.config.init import forget_sources
    from broker.errors import RecallError

    if not uids:
        return []
    try:
        config = load_config()
    except RecallError:  # the new file is written; an unreadable project file keeps old indexes
        return []
    uids -= {s.source_uid for s in config.sources}
    return forget_sources(config.paths.state_root, config.paths.cache_root, uids)


def _source_json(source: StarterSource | None) -> dict[str, str] | None:
    if source is None:
        return None
    return {
        "source_id": source.source_id,
        "source_uid": source.source_uid,
        "location": source.location,
    }
