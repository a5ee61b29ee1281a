"""Drive a real adapter process (``python -m adapters.<name>``) over stdio, one JSON-RPC frame per line.

:class:`AdapterPipes` is the process and its frames: ``send`` writes a request,
``receive`` waits for the reply to it, ``exchange`` does both in lockstep.
:class:`AdapterProcess` adds the protocol's requests, each returning its result
or raising :class:`AdapterError`.
"""

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

REPO = Path(__file__).resolve().parents[2]
FAR_DEADLINE = "2099-01-01T00:00:00Z"
# How long a reply may take before the test fails rather than hangs.
FRAME_TIMEOUT_S = 60.0


def deadline_in(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


class AdapterError(Exception):
    """An error frame's ``code``, ``message`` and ``data``."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class AdapterPipes:
    """``python -m adapters.<adapter>`` with pipes; every line it writes is kept in ``transcript``."""

    def __init__(self, adapter: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", f"adapters.{adapter}"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        self.manifest: dict[str, Any] = {}
        self.transcript: list[bytes] = []
        self._frames: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._next_id = 0
        self._stderr: str | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def send(self, method: str, params: dict[str, Any]) -> int:
        """Write one request; return its id."""
        assert self.process.stdin is not None
        self._next_id += 1
        frame = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(frame).encode() + b"\n")
        self.process.stdin.flush()
        return self._next_id

    def receive(self, request_id: int) -> dict[str, Any]:
        """The reply to ``request_id``, passing over frames that answer other requests."""
        while True:
            frame = self._next_frame()
            if frame.get("id") == request_id:
                return frame

    def exchange(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request; the next frame the adapter writes must be its reply."""
        request_id = self.send(method, params)
        reply = self._next_frame()
        assert reply["id"] == request_id
        return reply

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        reply = self.exchange(method, params)
        if "error" in reply:
            error = reply["error"]
            raise AdapterError(error["code"], error["message"], error.get("data"))
        result: dict[str, Any] = reply["result"]
        return result

    def close(self) -> int:
        """recall/shutdown, then end of input; kill the process if it does not exit."""
        if self.process.poll() is None:
            try:
                self.exchange("recall/shutdown", {})
            except (AssertionError, BrokenPipeError, OSError, queue.Empty):
                pass
            assert self.process.stdin is not None
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(timeout=5)
        self.stderr()
        return self.process.returncode

    def stderr(self) -> str:
        """What the adapter wrote to stderr, once it has exited."""
        if self._stderr is None:
            if self.process.poll() is None:
                return "(still running)"
            assert self.process.stderr is not None
            self._stderr = self.process.stderr.read().decode(errors="replace")
            self.process.stderr.close()
        return self._stderr

    def _next_frame(self) -> dict[str, Any]:
        frame = self._frames.get(timeout=FRAME_TIMEOUT_S)
        if frame is None:
            self._frames.put(None)  # later reads see the end too
            self.process.wait(timeout=10)
            raise AssertionError(f"adapter closed stdout; stderr: {self.stderr()}")
        return frame

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.process.stdout:
            for line in self.process.stdout:
                if line.strip():
                    self.transcript.append(line)
                    self._frames.put(json.loads(line))
        self._frames.put(None)


class AdapterProcess(AdapterPipes):
    """An adapter answering the protocol's requests in lockstep, with the far deadline."""

    def __init__(
        self, adapter: str, source_id: str, *, expand_detail: str, env: dict[str, str] | None = None
    ) -> None:
        super().__init__(adapter, env)
        self.source_id = source_id
        self.expand_detail = expand_detail

    def initialize(
        self, location: Path | str | None, workdir: Path | str, settings: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "protocol_version_min": 1,
            "protocol_version_max": 1,
            "workdir": str(workdir),
            "source_id": self.source_id,
            "settings": settings or {},
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

    def expand(self, locator: str, detail: str | None = None, budget_bytes: int = 0) -> dict[str, Any]:
        return self.call("recall/expand", {
            "locator": locator, "detail": detail or self.expand_detail, "budget_bytes": budget_bytes,
            "deadline": FAR_DEADLINE,
        })

    def health(self) -> dict[str, Any]:
        return self.call("recall/health", {"deadline": FAR_DEADLINE})

    def refresh(self, full: bool = False) -> dict[str, Any]:
        return self.call("recall/refresh", {"deadline": FAR_DEADLINE, "full": full})
