"""The tasks source's configuration: location, store mode and settings."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from adapter_sdk import ErrorCode, InitializeParams, RpcError, trusted_only

TASKWARRIOR = "taskwarrior"
TODOTXT = "todotxt"
MODES = ("auto", TASKWARRIOR, TODOTXT)
KNOWN_SETTINGS = ("mode", "task_binary")

SETTINGS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "mode": {
            "enum": list(MODES),
            "default": "auto",
            "description": "store format; auto = a file is todo.txt, a folder is Taskwarrior",
        },
        "task_binary": trusted_only({
            "type": "string",
            "minLength": 1,
            "default": "task",
            "description": "Taskwarrior program (name on PATH, or a path)",
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

    @property
    def store_identity(self) -> str:
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
    base = Path(params.base_dir) if params.base_dir else Path.cwd()
    location = base / Path(params.location).expanduser()
    if os.sep in binary and not os.path.isabs(binary):
        binary = str(base / binary)
    if mode == "auto":
        if location.is_dir():
            mode = TASKWARRIOR
        elif location.is_file() or location.suffix == ".txt":
            mode = TODOTXT
        else:
            mode = TASKWARRIOR
    return TasksConfig(params.source_id, Path(params.workdir), location, mode, binary)


def _invalid(message: str) -> RpcError:
    return RpcError(ErrorCode.invalid_params, message)
