"""Read the Tasks CLI's store (a GTD list in ``tasks.jsonl``) through its own program, never writing.

Only read-only subcommands run: ``list --json --all`` (every task, closed ones
included), ``projects --json`` (the project or area each open task is filed
under), ``show ID --json --include-done`` (one task with its notes, for
expand) and ``check --json --all-files`` (health). The program finds the store
from ``TASKS_FILE`` (a location ending ``.jsonl``) or ``TASKS_DIR``.

With the ``replay`` setting nothing runs: each invocation is answered from a
recording of the program's output, the folder's ``cli.json``. Its
``invocations`` are tried in order, each matching an argv exactly (``args``)
or any argv holding all of ``contains``; the first match, else ``default``,
names an output file in the folder (``stdout``), an ``exit_code`` and
``stderr``. Evaluation packs record a source this way so it is the same on
every run and needs no program installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import orjson

from adapter_sdk import ErrorCode, RpcError
from adapters.tasks.task_record import Annotation, TaskRecord

RECORDING = "cli.json"
LIST_ALL = ["list", "--json", "--all"]
PROJECTS = ["projects", "--json"]
CHECK = ["check", "--json", "--all-files"]
CLOSED_STATES = {"DONE": "completed", "CANCELLED": "deleted", "CANCELED": "deleted"}
MAX_RUN_SECONDS = 600.0  # bound for far-off deadlines
STDERR_CHARS = 300


@dataclass(frozen=True, slots=True)
class Output:
    stdout: bytes
    stderr: str
    exit_code: int


class TasksCli(Protocol):
    """Something that answers the Tasks CLI's read-only invocations."""

    def run(self, args: list[str], timeout: float) -> Output: ...

    def data_files(self) -> list[Path]:
        """The files whose change means the store may have changed."""
        ...

    def require(self) -> None:
        """Raise source_unavailable when nothing can answer."""
        ...


class TasksProgram:
    """The ``tasks`` executable over the store at ``location``."""

    def __init__(self, binary: str, location: Path) -> None:
        self.binary = binary
        self.location = location

    def require(self) -> None:
        if shutil.which(self.binary) is None:
            raise RpcError(
                ErrorCode.source_unavailable,
                f"Tasks CLI program {self.binary!r} not found; install it or set the tasks "
                "source's binary setting to its path",
            )

    def data_files(self) -> list[Path]:
        return [self.location if self.location.suffix == ".jsonl" else self.location / "tasks.jsonl"]

    def run(self, args: list[str], timeout: float) -> Output:
        env = {k: v for k, v in os.environ.items() if k not in ("TASKS_FILE", "TASKS_DIR")}
        env["TASKS_FILE" if self.location.suffix == ".jsonl" else "TASKS_DIR"] = str(self.location)
        try:
            done = subprocess.run(
                [self.binary, *args], stdin=subprocess.DEVNULL, capture_output=True, env=env,
                timeout=min(max(timeout, 0.05), MAX_RUN_SECONDS), check=False,
            )
        except subprocess.TimeoutExpired:
            raise RpcError(
                ErrorCode.deadline_exceeded, f"{self.binary} {args[0]} did not finish before the request deadline"
            ) from None
        except OSError as exc:
            raise RpcError(ErrorCode.source_unavailable, f"could not run {self.binary!r}: {exc.strerror}") from None
        return Output(done.stdout, done.stderr.decode("utf-8", errors="replace"), done.returncode)


class RecordedTasksCli:
    """Answers from a recording of the program's output (``folder/cli.json``); runs nothing."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def require(self) -> None:
        self._rules()

    def data_files(self) -> list[Path]:
        try:
            rules = self._all_rules()
        except RpcError:  # no usable recording yet: searches say so
            rules = []
        outputs = {rule["stdout"] for rule in rules if isinstance(rule.get("stdout"), str)}
        return [self.folder / RECORDING, *(self.folder / name for name in sorted(outputs))]

    def run(self, args: list[str], timeout: float) -> Output:
        rules = self._rules()
        for rule in rules.get("invocations") or ():
            if _matches(rule, args):
                return self._output(rule)
        default = rules.get("default")
        if isinstance(default, dict):
            return self._output(default)
        raise RpcError(ErrorCode.source_unavailable, f"the Tasks CLI recording has no answer for {' '.join(args)}")

    def _output(self, rule: dict[str, Any]) -> Output:
        stdout = b""
        name = rule.get("stdout")
        if name:
            path = (self.folder / str(name)).resolve()
            if not path.is_relative_to(self.folder.resolve()):
                raise RpcError(ErrorCode.source_unavailable, f"the Tasks CLI recording names {name!r} outside {self.folder}")
            try:
                stdout = path.read_bytes()
            except OSError as exc:
                raise RpcError(ErrorCode.source_unavailable, f"cannot read recorded output {path}: {exc.strerror}") from None
        return Output(stdout, str(rule.get("stderr") or ""), int(rule.get("exit_code") or 0))

    def _all_rules(self) -> list[dict[str, Any]]:
        rules = self._rules()
        found = [r for r in rules.get("invocations") or () if isinstance(r, dict)]
        return [*found, rules["default"]] if isinstance(rules.get("default"), dict) else found

    def _rules(self) -> dict[str, Any]:
        path = self.folder / RECORDING
        try:
            rules = orjson.loads(path.read_bytes())
        except OSError as exc:
            raise RpcError(
                ErrorCode.source_unavailable, f"no Tasks CLI recording at {path}: {exc.strerror}"
            ) from None
        except orjson.JSONDecodeError as exc:
            raise RpcError(ErrorCode.source_unavailable, f"{path} is not JSON: {exc}") from None
        if not isinstance(rules, dict) or not (rules.get("invocations") or rules.get("default")):
            raise RpcError(ErrorCode.source_unavailable, f"{path} records no invocation and no default")
        return rules


def _matches(rule: dict[str, Any], args: list[str]) -> bool:
    if rule.get("args"):
        return list(rule["args"]) == args
    wanted = rule.get("contains") or ()
    return bool(wanted) and all(item in args for item in wanted)


def read_tasks(cli: TasksCli, timeout: float) -> list[TaskRecord]:
    """Every task in the store, each with the project or area it is filed under when the CLI says."""
    items = _json_array(cli, LIST_ALL, timeout)
    projects: dict[str, str] = {}
    for project in _json_array(cli, PROJECTS, timeout):
        for task_id in project.get("task_ids") or ():
            projects.setdefault(str(task_id), str(project.get("title") or ""))
    return [_record(item, projects.get(str(item["id"]))) for item in items if item.get("id")]


def read_task(cli: TasksCli, task_id: str, timeout: float) -> TaskRecord | None:
    """One task with its notes (``show``), or None when the store holds no such id."""
    output = cli.run(["show", task_id, "--json", "--include-done"], timeout)
    if output.exit_code != 0:
        return None
    item = _decode(output.stdout, "show")
    if not isinstance(item, dict) or str(item.get("id")) != task_id:
        return None
    return _record(item, item.get("project") or None)


def check(cli: TasksCli, timeout: float) -> dict[str, Any]:
    """The CLI's own check of its store: ``{"ok": bool, "errors": [...], "warnings": [...]}``."""
    output = cli.run(CHECK, timeout)
    verdict = _decode(output.stdout, "check") if output.stdout.strip() else None
    if not isinstance(verdict, dict):
        return {"ok": False, "errors": [_failure("check", output)]}
    return verdict


def _json_array(cli: TasksCli, args: list[str], timeout: float) -> list[dict[str, Any]]:
    output = cli.run(args, timeout)
    if output.exit_code != 0:
        raise RpcError(ErrorCode.source_unavailable, _failure(" ".join(args[:1]), output))
    items = _decode(output.stdout, args[0])
    if not isinstance(items, list):
        raise RpcError(ErrorCode.source_unavailable, f"tasks {args[0]} did not print a JSON array")
    return [item for item in items if isinstance(item, dict)]


def _decode(stdout: bytes, command: str) -> Any:
    try:
        return orjson.loads(stdout)
    except orjson.JSONDecodeError as exc:
        raise RpcError(ErrorCode.source_unavailable, f"tasks {command} did not print JSON ({exc})") from None


def _failure(command: str, output: Output) -> str:
    stderr = " | ".join(line.strip() for line in output.stderr.splitlines() if line.strip()) or "no error output"
    return f"tasks {command} failed (exit {output.exit_code}): {stderr[:STDERR_CHARS]}"


def _record(item: dict[str, Any], project: str | None) -> TaskRecord:
    """A CLI task: open states keep their name (``next``, ``todo``, ``waiting``), DONE is
    completed and CANCELLED deleted; a task's notes are its annotations (``show`` only)."""
    state = str(item.get("state") or "TODO").upper()
    contexts = tuple(str(c).lstrip("@") for c in item.get("contexts") or ())
    return TaskRecord(
        record_id=str(item["id"]).lower(),
        description=" ".join(str(item.get("title") or "").split()),
        status=CLOSED_STATES.get(state, state.lower()),
        project=project or None,
        projects=(project,) if project else (),
        tags=tuple(str(t) for t in item.get("tags") or ()),
        contexts=contexts,
        priority=item.get("priority") or None,
        due=_date(item.get("deadline")),
        end=_date(item.get("closed")),
        annotations=tuple(Annotation(None, " ".join(str(n).split())) for n in item.get("notes") or () if str(n).strip()),
    )


def _date(value: Any) -> datetime | None:
    """A CLI date (``2026-08-01``, UTC midnight) or instant with its offset."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
