"""The Claude Code hook entry in a settings file: added, replaced or removed, nothing else touched.

Claude Code reads hooks from ``~/.claude/settings.json`` (user; under
``$CLAUDE_CONFIG_DIR`` when that is set) and ``.claude/settings.json`` in a
project. Our entry is one command hook under ``hooks.UserPromptSubmit``::

    {"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "/path/to/recall hook claude-code", "timeout": 10}]}]}}

It is recognised by its command (``recall hook claude-code``, whatever path or
flags), so installing twice changes nothing, installing with other flags
replaces it in place, and uninstalling removes it and only the containers its
removal left empty. Edits are textual (:mod:`broker.surfaces.json_spans`):
every byte outside the entry stays as it was, and uninstalling after
installing gives the original file back. A file that is not a JSON object is
refused, never rewritten; a write replaces the file atomically and keeps its
mode.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from broker.errors import UsageError
from broker.surfaces import json_spans

EVENT = "UserPromptSubmit"
OUR_COMMAND = re.compile(r"(^|[\s/'\"])recall['\"]? hook claude-code(\s|$)")


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


def plan_install(path: Path, entry: dict[str, Any]) -> SettingsEdit:
    before = _read(path)
    if before is None or not before.strip():
        fresh = {"hooks": {EVENT: [{"hooks": [entry]}]}}
        return SettingsEdit(path, before, json.dumps(fresh, indent=2) + "\n")
    text = before
    while True:
        root = _parse(path, text)
        found = _ours(path, root)
        if not found:
            text = _add(text, root, entry)
            break
        if found[0].hook.value != entry:
            text = json_spans.replace(text, found[0].hook, entry)
        elif len(found) > 1:
            text = _remove(text, root, found[1]) or text  # never None: found[0] stays
        else:
            break
    return SettingsEdit(path, before, text)


def plan_uninstall(path: Path) -> SettingsEdit:
    before = _read(path)
    if before is None or not before.strip():
        return SettingsEdit(path, before, before)
    text: str | None = before
    while text is not None:
        root = _parse(path, text)
        found = _ours(path, root)
        if not found:
            break
        text = _remove(text, root, found[0])
    return SettingsEdit(path, before, text)


def apply(edit: SettingsEdit) -> None:
    if not edit.changed:
        return
    if edit.after is None:
        edit.path.unlink(missing_ok=True)
        return
    edit.path.parent.mkdir(parents=True, exist_ok=True)
    mode = edit.path.stat().st_mode & 0o777 if edit.path.exists() else None
    handle, temporary = tempfile.mkstemp(prefix=".settings.", dir=edit.path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(edit.after)
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, edit.path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@dataclass(frozen=True)
class _Found:
    """One hook of ours and the containers around it, outermost first."""

    groups: json_spans.Node
    group_index: int
    group: json_spans.Node
    hook_index: int
    hook: json_spans.Node


def _is_ours(hook: Any) -> bool:
    return (
        isinstance(hook, dict)
        and hook.get("type") == "command"
        and isinstance(hook.get("command"), str)
        and OUR_COMMAND.search(hook["command"]) is not None
    )


def _ours(path: Path, root: json_spans.Node) -> list[_Found]:
    groups = _groups(path, root)
    if groups is None:
        return []
    found = []
    for group_index, group in enumerate(groups.items):
        hooks = group.member("hooks") if isinstance(group.value, dict) else None
        if hooks is None or not isinstance(hooks.value, list):
            continue
        for hook_index, hook in enumerate(hooks.items):
            if _is_ours(hook.value):
                found.append(_Found(groups, group_index, group, hook_index, hook))
    return found


def _groups(path: Path, root: json_spans.Node) -> json_spans.Node | None:
    hooks = root.member("hooks")
    if hooks is None:
        return None
    if not isinstance(hooks.value, dict):
        raise UsageError(f"{path}: 'hooks' is not an object; nothing was changed")
    groups = hooks.member(EVENT)
    if groups is not None and not isinstance(groups.value, list):
        raise UsageError(f"{path}: 'hooks.{EVENT}' is not a list; nothing was changed")
    return groups


def _add(text: str, root: json_spans.Node, entry: dict[str, Any]) -> str:
    group = {"hooks": [entry]}
    hooks = root.member("hooks")
    if hooks is None:
        return json_spans.add_member(text, root, "hooks", {EVENT: [group]})
    groups = hooks.member(EVENT)
    if groups is None:
        return json_spans.add_member(text, hooks, EVENT, [group])
    return json_spans.append_item(text, groups, group)


def _remove(text: str, root: json_spans.Node, found: _Found) -> str | None:
    """Remove one hook of ours, and each container its removal leaves empty.

    ``None`` when the whole document held nothing else.
    """
    hooks_list = found.group.member("hooks")
    assert hooks_list is not None
    if len(hooks_list.items) > 1:
        return json_spans.remove_item(text, hooks_list, found.hook_index)
    if len(found.groups.items) > 1:
        return json_spans.remove_item(text, found.groups, found.group_index)
    hooks = root.member("hooks")
    assert hooks is not None
    if len(hooks.members) > 1:
        return json_spans.remove_member(text, hooks, EVENT)
    if len(root.members) > 1:
        return json_spans.remove_member(text, root, "hooks")
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None


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
