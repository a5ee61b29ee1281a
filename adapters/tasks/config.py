"""The tasks source's configuration: location, store mode and settings.

Three stores: a Taskwarrior data folder, a todo.txt file, and the store of the
Tasks CLI (a ``tasks.jsonl`` GTD list, read through its ``tasks`` program or,
with ``replay``, from a recording of that program's output).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from adapter_sdk import ErrorCode, InitializeParams, RpcError, trusted_only

TASKWARRIOR = "taskwarrior"
TODOTXT = "todotxt"
TASKS_CLI = "tasks-cli"
MODES = ("auto", TASKWARRIOR, TODOTXT, TASKS_CLI)
KNOWN_SETTINGS = ("mode", "task_binary", "binary", "replay")
TASKS_CLI_STORE = "tasks.jsonl"

SETTINGS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "mode": {
            "enum": list(MODES),
            "default": "auto",
            "description": "store format; auto = with replay, or a tasks.jsonl file or a folder "
            "holding one, the Tasks CLI; another file is todo.txt, another folder Taskwarrior",
        },
        "task_binary": trusted_only({
            "type": "string",
            "minLength": 1,
            "default": "task",
            "description": "Taskwarrior program (name on PATH, or a path)",
        }),
        "binary": trusted_only({
            "type": "string",
            "minLength": 1,
            "default": "tasks",
            "description": "Tasks CLI program (name on PATH, or a path)",
        }),
        "replay": trusted_only({
            "type": "string",
            "minLength": 1,
            "description": "Tasks CLI only: a folder (relative to the location) of that program's "
            "recorded output, answered from instead of running it (cli.json maps invocations "
            "to output files)",
        }),
    },
}


@dataclass(frozen=True, slots=True)
class TasksConfig:
    source_id: str
    workdir: Path
    location: Path
    mode: str
    task_binary: str
    binary: str = "tasks"  # the Tasks CLI's program
    replay: Path | None = None  # the Tasks CLI's recorded output, answered from instead

    @property
    def store_identity(self) -> str:
        if self.mode == TASKS_CLI:
            real = os.path.realpath(self.replay or self.location)
            return f"{TASKS_CLI}:{hashlib.sha256(real.encode()).hexdigest()[:16]}"
        kind = "dir" if self.mode == TASKWARRIOR else "file"
        real = os.path.realpath(self.location)
        return f"{kind}:{hashlib.sha256(real.encode()).hexdigest()[:16]}"


def load_config(params: InitializeParams) -> TasksConfig:
    settings = dict(params.settings or {})
    unknown = sorted(set(settings) - set(KNOWN_SETTINGS))
    if unknown:
        raise _invalid(
            f"unknown tasks setting(s) {', '.join(unknown)}; known: {', '.join(KNOWN_SETTINGS)}"
        )
    mode = settings.get("mode", "auto")
    if mode not in MODES:
        raise _invalid(f"tasks setting mode must be one of {', '.join(MODES)}, not {mode!r}")
    binary = settings.get("task_binary", "task")
    if not isinstance(binary, str) or not binary.strip():
        raise _invalid("tasks setting task_binary must be a non-empty program name or path")
    if not params.location:
        raise _invalid(
            "the tasks source needs a location: a Taskwarrior data folder or a todo.txt file"
        )
    cli_binary = settings.get("binary", "tasks")
    if not isinstance(cli_binary, str) or not cli_binary.strip():
        raise _invalid("tasks setting binary must be a non-empty program name or path")
    replay = settings.get("replay")
    if replay is not None and (not isinstance(replay, str) or not replay.strip()):
        raise _invalid("tasks setting replay must name a folder of recorded Tasks CLI output")
    base = Path(params.base_dir) if params.base_dir else Path.cwd()
    location = base / Path(params.location).expanduser()
    if os.sep in binary and not os.path.isabs(binary):
        binary = str(base / binary)
    if os.sep in cli_binary and not os.path.isabs(cli_binary):
        cli_binary = str(base / cli_binary)
    if mode == "auto":
        if replay is not None or location.name == TASKS_CLI_STORE or (location / TASKS_CLI_STORE).is_file():
            mode = TASKS_CLI
        elif location.is_dir():
            mode = TASKWARRIOR
        elif location.is_file() or location.suffix == ".txt":
            mode = TODOTXT
        else:
            mode = TASKWARRIOR
    cli_settings = sorted({"binary", "replay"} & set(settings))
    if cli_settings and mode != TASKS_CLI:
        raise _invalid(
            f"tasks setting(s) {', '.join(cli_settings)} are for the Tasks CLI's store, and this "
            f"source is {mode} (Taskwarrior's program is task_binary; set mode = \"{TASKS_CLI}\" "
            "for a Tasks CLI store)"
        )
    return TasksConfig(
        params.source_id, Path(params.workdir), location, mode, binary, cli_binary,
        location / replay if replay is not None else None,
    )


def _invalid(message: str) -> RpcError:
    return RpcError(ErrorCode.invalid_params, message)
