"""Drive the real eventstore adapter process over stdio, one JSON-RPC frame at a time."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
FRAME_TIMEOUT_S = 30.0


class AdapterProcess:
    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "adapters.eventstore"],
            cwd=REPO_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        self._frames: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._next_id = 0
        self.manifest: dict[str, Any] = {}
        threading.Thread(target=self._read, daemon=True).start()

    def initialize(
        self, location: str, settings: dict[str, Any] | None = None, source_id: str = "memory"
    ) -> dict[str, Any]:
        return self.request(
            "recall/initialize",
            {
                "protocol_version_min": 1,
                "protocol_version_max": 1,
                "workdir": str(Path(location).parent),
                "source_id": source_id,
                "location": location,
                "settings": settings or {},
            },
        )

    def search(self, query: str, limit: int = 20, **extra: Any) -> dict[str, Any]:
        params = {"query": query, "filters": {}, "limit": limit, "deadline": deadline(), **extra}
        return self.request("recall/search", params)

    def expand(self, locator: str, detail: str = "full", budget_bytes: int = 0) -> dict[str, Any]:
        params = {
            "locator": locator,
            "detail": detail,
            "budget_bytes": budget_bytes,
            "deadline": deadline(),
        }
        return self.request("recall/expand", params)

    def health(self) -> dict[str, Any]:
        return self.request("recall/health", {"deadline": deadline()})

    def send(self, method: str, params: dict[str, Any]) -> int:
        self._next_id += 1
        frame = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(frame) + "\n").encode())
        self.process.stdin.flush()
        return self._next_id

    def receive(self, request_id: int) -> dict[str, Any]:
        while True:
            frame = self._frames.get(timeout=FRAME_TIMEOUT_S)
            if frame is None:
                raise AssertionError(f"adapter exited: {self.stderr()}")
            if frame.get("id") == request_id:
                return frame

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.receive(self.send(method, params))

    def mcp_children(self) -> list[int]:
        """Pids of the adapter's own child processes (Polign's `recall mcp`)."""
        children: list[int] = []
        for task in Path(f"/proc/{self.process.pid}/task").iterdir():
            text = (task / "children").read_text().split()
            children += [int(pid) for pid in text]
        return children

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.request("recall/shutdown", {})
            except (AssertionError, BrokenPipeError, queue.Empty):
                pass
            try:
                self.process.stdin.close()  # type: ignore[union-attr]
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def stderr(self) -> str:
        if self.process.poll() is None or self.process.stderr is None:
            return ""
        return self.process.stderr.read().decode(errors="replace")

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.strip():
                self._frames.put(json.loads(line))
        self._frames.put(None)


def deadline(seconds: float = 20.0) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")
