"""Drive the real gmail adapter process over stdio, one JSON-RPC frame per line."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FAR_DEADLINE = "2099-01-01T00:00:00Z"
SOURCE_ID = "mail"


def deadline_in(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


class AdapterError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class AdapterProcess:
    """``python -m adapters.gmail`` with pipes; every frame it writes is kept in ``transcript``."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "adapters.gmail"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=REPO, env=env,
        )
        self._next_id = 0
        self.manifest: dict[str, Any] = {}
        self.transcript: list[bytes] = []
        self._stderr: str | None = None

    def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self._next_id += 1
        frame = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(frame).encode() + b"\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError(f"adapter closed stdout; stderr: {self.stderr()}")
        self.transcript.append(line)
        reply = json.loads(line)
        assert reply["id"] == self._next_id
        return reply

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        reply = self.send(method, params)
        if "error" in reply:
            error = reply["error"]
            raise AdapterError(error["code"], error["message"], error.get("data"))
        return reply["result"]

    def initialize(
        self, location: Path | str | None, workdir: Path, settings: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "protocol_version_min": 1, "protocol_version_max": 1, "workdir": str(workdir),
            "source_id": SOURCE_ID, "settings": settings or {},
        }
        if location is not None:
            params["location"] = str(location)
        self.manifest = self.call("recall/initialize", params)
        return self.manifest

    def search(
        self, query: str, *, filters: dict[str, Any] | None = None, as_of: str | None = None,
        limit: int = 20, deadline: str = FAR_DEADLINE,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "query": query, "filters": filters or {}, "limit": limit, "deadline": deadline,
        }
        if as_of is not None:
            params["as_of"] = as_of
        return self.call("recall/search", params)

    def expand(self, locator: str, detail: str = "full", budget_bytes: int = 0) -> dict[str, Any]:
        return self.call("recall/expand", {
            "locator": locator, "detail": detail, "budget_bytes": budget_bytes,
            "deadline": FAR_DEADLINE,
        })

    def health(self) -> dict[str, Any]:
        return self.call("recall/health", {"deadline": FAR_DEADLINE})

    def refresh(self, full: bool = False) -> dict[str, Any]:
        return self.call("recall/refresh", {"deadline": FAR_DEADLINE, "full": full})

    def close(self) -> int:
        if self.process.poll() is None:
            try:
                self.call("recall/shutdown", {})
            except (AssertionError, BrokenPipeError, OSError):
                pass
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def stderr(self) -> str:
        if self._stderr is None:
            if self.process.poll() is None:
                return "(still running)"
            assert self.process.stderr is not None
            self._stderr = self.process.stderr.read().decode(errors="replace")
        return self._stderr
