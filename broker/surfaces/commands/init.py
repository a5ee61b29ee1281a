"""recall init: write a commented user configuration, or add and replace the sources it names."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from broker.surfaces.commands._common import add_json, print_json
from broker.surfaces.streams import Streams

if TYPE_CHECKING:
    from pathlib import Path

    from broker.config.starter_sources import SourceChange, StarterSource

HELP = "write a starter user configuration, or add a source to it"
DESCRIPTION = """Write $XDG_CONFIG_HOME/recall/config.toml with a notes source, a tasks source, or both,
each with a freshly minted source_uid, plus commented examples for the other adapters.

  recall init --notes DIR [--tasks PATH]       a new configuration
  recall init --notes DIR --force              change only the sources named
  recall init --semantic                       add the notes ranked by meaning

An existing file is changed only with --force (--semantic alone needs none), and
then only the sources the flags name: a source that is already there over the same
folder is kept with its source_uid and index; one over another folder is replaced
in place (a new source_uid; its old index folders are removed); a missing one is
added and joins the default profile. Every other source, comment and table is
kept. init says what it did to each source: added, replaced or kept."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--notes", metavar="DIR", help="a folder of markdown or text notes")
    parser.add_argument(
        "--tasks",
        metavar="PATH",
        help="a Taskwarrior data directory, or a todo.txt file (named *.txt)",
    )
    parser.add_argument("--semantic", action="store_true",
                        help="also rank the notes source by meaning (the leg comes with the install)")
    parser.add_argument("--force", action="store_true",
                        help="change an existing configuration (only the sources named)")
    add_json(parser)


def run(args: argparse.Namespace, io: Streams) -> int:
    from broker.config.init import (
        SEMANTIC_INSTALL,
        notes_directory,
        semantic_extra_missing,
        tasks_location,
        user_config_path,
        write_user_config,
    )
    from broker.errors import UsageError

    home = os.environ.get("HOME") or None
    path = user_config_path(os.environ)
    if args.semantic and semantic_extra_missing():
        raise UsageError(f"the semantic leg needs its extra: {SEMANTIC_INSTALL}; nothing was changed")
    notes_text, tasks_text = args.notes, args.tasks
    if notes_text is None and tasks_text is None and not args.semantic:
        if args.json or not io.stdin_is_terminal:
            raise UsageError("recall init needs --notes DIR, --tasks PATH, --semantic, or several")
        notes_text = ask(io, "Notes directory: ")
        if not notes_text:
            raise UsageError("recall init needs a notes directory")
    notes = notes_directory(notes_text, home) if notes_text is not None else None
    tasks = tasks_location(tasks_text, home) if tasks_text is not None else None
    result = write_user_config(path, notes=notes, tasks=tasks, semantic=args.semantic,
                               force=args.force, home=home)
    forgotten = _forget_replaced(result.replaced_uids)

    if args.json:
        print_json(
            io,
            {
                "action": result.action,
                "config_path": str(result.config_path),
                "sources": [_change_json(c) for c in result.changes],
                "notes": _source_json(result.named("notes")),
                "tasks": _source_json(result.named("tasks")),
                "next": result.next,
                "removed_indexes": [str(p) for p in forgotten],
            }
        )
        return 0
    lines = [f"{result.action} {result.config_path}", *(_change_line(c) for c in result.changes)]
    if forgotten:
        lines.append(f"removed {len(forgotten)} index folders of the replaced sources")
    lines += ["", "Next:", *(f"  {step}" for step in result.next)]
    io.stdout.write("\n".join(lines) + "\n")
    return 0


def ask(io: Streams, prompt: str) -> str:
    """One line typed at the terminal after ``prompt``, stripped; an ended input ends the command."""
    io.stdout.write(prompt)
    io.stdout.flush()
    line = io.stdin.readline()
    if not line:
        raise EOFError
    return line.strip()


def _change_line(change: SourceChange) -> str:
    """``added notes (UID) /path``; a replaced source also says what it was."""
    source = change.source
    line = f"{change.change} {source.source_id} ({source.source_uid}) {source.location}"
    if change.was is not None:
        line += f", was {change.was.source_uid} over {change.was.location}"
    return line


def _forget_replaced(uids: set[str]) -> list[Path]:
    """Drop the indexes of the sources init replaced: their uids are gone for good."""
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


def _change_json(change: SourceChange) -> dict[str, Any]:
    data: dict[str, Any] = {"change": change.change, **(_source_json(change.source) or {})}
    if change.was is not None:
        data["was"] = _source_json(change.was)
    return data


def _source_json(source: StarterSource | None) -> dict[str, str] | None:
    if source is None:
        return None
    return {
        "source_id": source.source_id,
        "source_uid": source.source_uid,
        "location": source.location,
    }
