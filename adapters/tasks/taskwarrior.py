"""Read a Taskwarrior data folder through the real ``task`` program, never writing to it.

Every invocation pins the data folder with ``rc.data.location`` and runs with
``TASKRC=/dev/null`` (and ``TASKDATA`` removed), so the user's own rc file,
hooks, reports and colour settings cannot change what is read. Garbage
collection and recurrence are switched off because both rewrite data files;
working-set ids are therefore renumbered here the way Taskwarrior's garbage
collector would number them (pending, waiting and recurring tasks in file order).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from adapter_sdk import ErrorCode, RpcError
from adapters.tasks.task_record import CLOSED_STATUSES, Annotation, TaskRecord

DATA_FILES = ("pending.data", "completed.data")
READ_ONLY_OVERRIDES = (
    "rc.confirmation=off",
    "rc.hooks=off",
    "rc.color=off",
    "rc.verbose=nothing",
    "rc.gc=off",
    "rc.recurrence=off",
    "rc.json.array=on",
)
STDERR_SUMMARY_CHARS = 300
MAX_RUN_SECONDS = 600.0  # bound for far-off deadlines


class TaskProgram:
    """The configured ``task`` executable, run against one data folder."""

    def __init__(self, binary: str, data_folder: Path) -> None:
        self.binary = binary
        self.data_folder = data_folder

    def resolve(self) -> str:
        """The executable's path, or source_unavailable naming the setting to fix."""
        found = shutil.which(self.binary)
        if found is None:
            raise RpcError(
                ErrorCode.source_unavailable,
                f"Taskwarrior program {self.binary!r} not found; install Taskwarrior "
                "or set the tasks source's task_binary setting to its path",
            )
        return found

    def version(self, timeout: float) -> str:
        return self._run(["--version"], timeout).strip()

    def export(self, timeout: float) -> list[TaskRecord]:
        self.require_data_folder()
        output = self._run([f"rc.data.location={self.data_folder}", *READ_ONLY_OVERRIDES,
                            "export"], timeout)
        return parse_export(output, self.data_folder)

    def require_data_folder(self) -> None:
        """Refuse folders that hold no Taskwarrior data: ``task`` would create files there."""
        if not self.data_folder.is_dir():
            raise RpcError(
                ErrorCode.source_unavailable,
                f"Taskwarrior data folder {self.data_folder} does not exist or is not a folder",
            )
        if not any((self.data_folder / name).is_file() for name in DATA_FILES):
            raise RpcError(
                ErrorCode.source_unavailable,
                f"{self.data_folder} holds no pending.data or completed.data; "
                "point the source's location at a Taskwarrior data folder",
            )

    def _run(self, arguments: list[str], timeout: float) -> str:
        executable = self.resolve()
        env = {k: v for k, v in os.environ.items() if k != "TASKDATA"}
        env["TASKRC"] = os.devnull
        try:
            completed = subprocess.run(
                [executable, *arguments],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                env=env,
                timeout=min(max(timeout, 0.05), MAX_RUN_SECONDS),
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise RpcError(
                ErrorCode.deadline_exceeded,
                f"{self.binary} {arguments[-1]} did not finish before the request deadline",
            ) from None
        except OSError as exc:
            raise RpcError(
                ErrorCode.source_unavailable, f"could not run {self.binary!r}: {exc.strerror}"
            ) from None
        if completed.returncode != 0:
            raise RpcError(
                ErrorCode.source_unavailable,
                f"{self.binary} {arguments[-1]} failed (exit {completed.returncode}): "
                + summarize_stderr(completed.stderr),
            )
        return completed.stdout.decode("utf-8", errors="replace")


def summarize_stderr(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode("utf-8", errors="replace").splitlines()]
    text = " | ".join(line for line in lines if line) or "no error output"
    if len(text) > STDERR_SUMMARY_CHARS:
        text = text[: STDERR_SUMMARY_CHARS - 1] + "…"
    return text


def parse_export(output: str, data_folder: Path) -> list[TaskRecord]:
    import orjson

    try:
        items = orjson.loads(output)
    except orjson.JSONDecodeError as exc:
        raise RpcError(
            ErrorCode.source_unavailable,
            f"task export of {data_folder} did not produce JSON ({exc})",
        ) from None
    if not isinstance(items, list):
        raise RpcError(ErrorCode.source_unavailable, "task export did not produce a JSON array")
    records = []
    working_id = 0
    for item in items:
        if not isinstance(item, dict) or not item.get("uuid"):
            continue
        status = str(item.get("status", "pending"))
        if status not in CLOSED_STATUSES:
            working_id += 1
        records.append(_record(item, status, None if status in CLOSED_STATUSES else working_id))
    return records


def _record(item: dict[str, Any], status: str, working_id: int | None) -> TaskRecord:
    project = item.get("project") or None
    urgency = item.get("urgency")
    return TaskRecord(
        record_id=str(item["uuid"]).lower(),
        description=" ".join(str(item.get("description", "")).split()),
        status=status,
        working_id=working_id,
        project=project,
        projects=(project,) if project else (),
        tags=tuple(str(t) for t in item.get("tags") or ()),
        priority=item.get("priority") or None,
        due=_timestamp(item.get("due")),
        entry=_timestamp(item.get("entry")),
        end=_timestamp(item.get("end")),
        modified=_timestamp(item.get("modified")),
        urgency=float(urgency) if isinstance(urgency, int | float) else None,
        annotations=tuple(
            Annotation(_timestamp(a.get("entry")), " ".join(str(a.get("description", "")).split()))
            for a in item.get("annotations") or ()
            if isinstance(a, dict)
        ),
    )


def _timestamp(value: Any) -> datetime | None:
    """Taskwarrior's export form ``20261201T000000Z``."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.strptime(value, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None
