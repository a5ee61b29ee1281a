"""The Claude Code hook entry in a settings file: added, replaced or removed, nothing else touched.

Claude Code reads hooks from ``~/.claude/settings.json`` (user; under
``$CLAUDE_CONFIG_DIR`` when that is set) and ``.claude/settings.json`` in a
project. Our entry is one command hook under ``hooks.UserPromptSubmit``::

    {"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "/path/to/recall hook claude-code", "timeout": 10}]}]}}

An entry is ours only in the exact shape install writes: those three keys, and
a command that is a ``recall`` executable (or the ``--command`` given), ``hook
claude-code`` and nothing but the flags install adds. A user's own wrapper
(``bash -c "recall hook claude-code | tee -a log"``) is never taken for ours.
Installing twice changes nothing, installing with other flags replaces the
entry in place, and uninstalling removes it and only the containers its
removal left empty. Edits are textual (:mod:`broker.surfaces.json_spans`):
every byte outside the entry stays as it was, and uninstalling after
installing gives the original file back (``{}`` stays ``{}``); only a file
that holds exactly what install creates from nothing is removed again.

A file that is not UTF-8, not JSON, not an object, or that repeats a key on
the way to our entry (readers keep the last, so an edit of the other would be
ignored) is refused with one line and never rewritten. A write goes through
symlinks (a dotfiles repository keeps its link) and replaces the target
atomically, keeping its mode (:mod:`broker.durable`).
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from broker.errors import UsageError
from broker.surfaces import json_spans

EVENT = "UserPromptSubmit"
EXECUTABLE = "recall"
OUR_WORDS = ("hook", "claude-code")
OUR_FLAGS = frozenset({"--profile", "--budget-ms", "--budget-tokens", "--limit"})
"""The flags install may add after ``hook claude-code``, each with one value."""
OUR_KEYS = frozenset({"type", "command", "timeout"})
WHAT = "settings file"


@dataclass(frozen=True)
class SettingsEdit:
    path: Path
    before: str | None
    """The file's text, ``None`` when it does not exist."""
    after: str | None
    """The new text, ``None`` when the file is to be removed."""

    @property
    def changed(self) -> bool:
        return self.before != self.after


def settings_path(scope: str, cwd: Path, environ: Mapping[str, str]) -> Path:
    if scope == "project":
        return cwd / ".claude" / "settings.json"
    configured = environ.get("CLAUDE_CONFIG_DIR")
    if configured:
        return Path(configured) / "settings.json"
    home = environ.get("HOME")
    if not home:
        raise UsageError("HOME is not set; cannot find Claude Code's user settings (use --project)")
    return Path(home) / ".claude" / "settings.json"


def hook_entry(command: str, timeout_s: int) -> dict[str, Any]:
    return {"type": "command", "command": command, "timeout": timeout_s}


def fresh_settings(entry: dict[str, Any]) -> str:
    """What install writes where there was no settings file."""
    return json.dumps({"hooks": {EVENT: [{"hooks": [entry]}]}}, indent=2) + "\n"


def plan_install(path: Path, entry: dict[str, Any]) -> SettingsEdit:
    before = _read(path)
    if before is None or not before.strip():
        return SettingsEdit(path, before, fresh_settings(entry))
    mine = {_executable(entry["command"])}
    text = before
    while True:
        root = _parse(path, text)
        found = _ours(path, root, mine)
        if not found:
            text = _add(path, text, root, entry)
            break
        if found[0].hook.value != entry:
            text = json_spans.replace(text, found[0].hook, entry)
        elif len(found) > 1:
            text = _remove(path, text, root, found[1])
        else:
            break
    return SettingsEdit(path, before, text)


def plan_uninstall(path: Path, executables: Collection[str] = ()) -> SettingsEdit:
    """Remove every entry of ours; ``executables``: a ``--command`` install was given."""
    before = _read(path)
    if before is None or not before.strip():
        return SettingsEdit(path, before, before)
    text = before
    while True:
        root = _parse(path, text)
        found = _ours(path, root, executables)
        if not found:
            break
        if not path.is_symlink() and text == fresh_settings(found[0].hook.value):
            return SettingsEdit(path, before, None)  # install created it from nothing
        text = _remove(path, text, root, found[0])
    return SettingsEdit(path, before, text)


def apply(edit: SettingsEdit) -> None:
    from broker.durable import replace_file

    if not edit.changed:
        return
    if edit.after is None:
        edit.path.unlink(missing_ok=True)
        return
    target = Path(os.path.realpath(edit.path))
    target.parent.mkdir(parents=True, exist_ok=True)
    replace_file(target, edit.after.encode("utf-8"), what=WHAT)


@dataclass(frozen=True)
class _Found:
    """One hook of ours and the containers around it, outermost first."""

    groups: json_spans.Node
    group_index: int
    group: json_spans.Node
    hook_index: int
    hook: json_spans.Node


def _is_ours(hook: Any, executables: Collection[str]) -> bool:
    """Exactly the shape install writes (see the module's docstring)."""
    if not isinstance(hook, dict) or set(hook) != OUR_KEYS or hook["type"] != "command":
        return False
    command = hook["command"]
    if not isinstance(command, str) or not isinstance(hook["timeout"], int):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) < 3 or tuple(words[1:3]) != OUR_WORDS:
        return False
    if os.path.basename(words[0]) != EXECUTABLE and words[0] not in executables:
        return False
    flags = words[3:]
    return len(flags) % 2 == 0 and all(flag in OUR_FLAGS for flag in flags[::2])


def _executable(command: str) -> str:
    return shlex.split(command)[0]


def _ours(path: Path, root: json_spans.Node, executables: Collection[str]) -> list[_Found]:
    groups = _groups(path, root)
    if groups is None:
        return []
    found = []
    for group_index, group in enumerate(groups.items):
        if not isinstance(group.value, dict):
            continue
        hooks = _member(path, group, "hooks", f"'hooks.{EVENT}[{group_index}]'")
        if hooks is None or not isinstance(hooks.value, list):
            continue
        for hook_index, hook in enumerate(hooks.items):
            if _is_ours(hook.value, executables):
                found.append(_Found(groups, group_index, group, hook_index, hook))
    return found


def _member(path: Path, node: json_spans.Node, key: str, where: str) -> json_spans.Node | None:
    """``node``'s member ``key``; refused when the key is there twice (which one counts?)."""
    named = [child for name, _, child in node.members if name == key]
    if len(named) > 1:
        raise UsageError(
            f"{path}: {where} has the key {key!r} {len(named)} times, and JSON readers keep only "
            "the last; merge them into one first. Nothing was changed"
        )
    return named[0] if named else None


def _groups(path: Path, root: json_spans.Node) -> json_spans.Node | None:
    hooks = _member(path, root, "hooks", "the top level")
    if hooks is None:
        return None
    if not isinstance(hooks.value, dict):
        raise UsageError(f"{path}: 'hooks' is not an object; nothing was changed")
    groups = _member(path, hooks, EVENT, "'hooks'")
    if groups is not None and not isinstance(groups.value, list):
        raise UsageError(f"{path}: 'hooks.{EVENT}' is not a list; nothing was changed")
    return groups


def _add(path: Path, text: str, root: json_spans.Node, entry: dict[str, Any]) -> str:
    group = {"hooks": [entry]}
    hooks = _member(path, root, "hooks", "the top level")
    if hooks is None:
        return json_spans.add_member(text, root, "hooks", {EVENT: [group]})
    groups = _member(path, hooks, EVENT, "'hooks'")
    if groups is None:
        return json_spans.add_member(text, hooks, EVENT, [group])
    return json_spans.append_item(text, groups, group)


def _remove(path: Path, text: str, root: json_spans.Node, found: _Found) -> str:
    """Remove one hook of ours, and each container its removal leaves empty (but the document)."""
    hooks_list = found.group.member("hooks")
    assert hooks_list is not None
    if len(hooks_list.items) > 1:
        return json_spans.remove_item(text, hooks_list, found.hook_index)
    if len(found.groups.items) > 1:
        return json_spans.remove_item(text, found.groups, found.group_index)
    hooks = _member(path, root, "hooks", "the top level")
    assert hooks is not None
    if len(hooks.members) > 1:
        return json_spans.remove_member(text, hooks, EVENT)
    return json_spans.remove_member(text, root, "hooks")


def _read(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{path} is not valid UTF-8 (at byte offset {exc.start}); fix it first, nothing was changed"
        ) from None


def _parse(path: Path, text: str) -> json_spans.Node:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); fix it first, nothing was changed"
        ) from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} is not a JSON object; nothing was changed")
    return json_spans.parse(text)
