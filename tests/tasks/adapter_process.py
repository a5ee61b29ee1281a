"""Drive the real tasks adapter process over stdio, one JSON-RPC frame per line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FAR_DEADLINE = "2099-01-01T00:00:00Z"


class AdapterError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class AdapterProcess:
    """``python -m adapters.tasks`` with pipes; ``call`` sends a request and reads its reply."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "adapters.tasks"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=REPO,
        )
        self._next_id = 0
        self.manifest: dict[str, Any] = {}

    def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self._next_id += 1
        frame = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(frame).encode() + b"\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError(f"adapter closed stdout; stderr: {self.stderr()}")
        reply = json.loads(line)
        assert reply["id"] == self._next_id
        return reply

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        reply = self.send(method, params)
        if "error" in reply:
            raise AdapterError(reply["error"]["code"], reply["error"]["message"])
        return reply["result"]

    def initialize(
        self, location: Path | str, workdir: Path, settings: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        self.manifest = self.call("recall/initialize", {
            "protocol_version_min": 1,
            "protocol_version_max": 1,
            "workdir": str(workdir),
            "source_id": "tasks",
            "location": str(location),
            "settings": settings or {},
        })
        return self.manifest

    def search(
        self, query: str, *, filters: dict[str, Any] | None = None, as_of: str | None = None,
        limit: int = 20,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "query": query, "filters": filters or {}, "limit": limit, "deadline": FAR_DEADLINE,
        }
        if as_of is not None:
            params["as_of"] = as_of
        return self.call("recall/search", params)

    def expand(self, locator: str, detail: str = "excerpt", budget_bytes: int = 0) -> dict[str, Any]:
        return self.call("recall/expand", {
            "locator": locator, "detail": detail, "budget_bytes": budget_bytes,
            "deadline": FAR_DEADLINE,
        })

    def health(self) -> dict[str, Any]:
        return self.call("recall/health", {"deadline": FAR_DEADLINE})

    def close(self) -> int:
        if self.process.poll() is None:
            try:
                self.call("recall/shutdown", {})
            except (AssertionError, BrokenPipeError, OSError):
                pass
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                return self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                return self.process.wait()
        return self.process.returncode

    def stderr(self) -> str:
        if self.process.poll() is None:
            return "(still running)"
        assert self.process.stderr is not None
        return self.process.stderr.read().decode(errors="replace")
