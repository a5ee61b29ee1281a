"""Drive a real ``python -m adapters.notes`` process over stdio, one frame at a time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

DEADLINE = "2099-01-01T00:00:00Z"
REPO = Path(__file__).resolve().parents[2]


class RpcFailure(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error['code']}: {error['message']}")
        self.code = error["code"]
        self.message = error["message"]


class NotesProcess:
    """One adapter process. ``call`` sends a request and returns its result or raises."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "adapters.notes"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        )
        self._next_id = 0
        self.manifest: dict[str, Any] = {}

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        frame = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(frame).encode() + b"\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"adapter exited: {self.proc.stderr.read().decode() if self.proc.stderr else ''}")
        reply = json.loads(line)
        assert reply["id"] == self._next_id
        if "error" in reply:
            raise RpcFailure(reply["error"])
        return reply["result"]  # type: ignore[no-any-return]

    def initialize(
        self, location: str | None, workdir: str, settings: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "protocol_version_min": 1,
            "protocol_version_max": 1,
            "workdir": workdir,
            "source_id": "notes",
        }
        if location is not None:
            params["location"] = location
        if settings is not None:
            params["settings"] = settings
        return self.call("recall/initialize", params)

    def search(self, query: str, **extra: Any) -> dict[str, Any]:
        params = {"query": query, "filters": extra.pop("filters", {}), "limit": 20, "deadline": DEADLINE}
        params.update(extra)
        return self.call("recall/search", params)

    def expand(self, locator: str, detail: str = "excerpt", budget_bytes: int = 0) -> dict[str, Any]:
        return self.call(
            "recall/expand",
            {"locator": locator, "detail": detail, "budget_bytes": budget_bytes, "deadline": DEADLINE},
        )

    def health(self) -> dict[str, Any]:
        return self.call("recall/health", {"deadline": DEADLINE})

    def refresh(self, full: bool = False) -> dict[str, Any]:
        return self.call("recall/refresh", {"deadline": DEADLINE, "full": full})

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.call("recall/shutdown", {})
            except (RuntimeError, BrokenPipeError, RpcFailure):
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
