"""A minimal MCP client over stdio, enough to call Polign's read-only tools.

Polign's ``recall mcp`` speaks newline-delimited JSON-RPC 2.0. This adapter
needs four exchanges (``initialize``, ``notifications/initialized``,
``tools/list``, ``tools/call``), so it speaks them itself rather than importing
the ``mcp`` SDK, whose import alone would cost every query's adapter start-up
more than the whole exchange with Polign does.

Failures, most specific first::

    McpFailure
    ├── ServerExited     the process ended (or never started); stderr tail attached
    ├── CallTimedOut     no answer before the caller's deadline; the session is unusable
    ├── AccessDenied     the server refused the credential (HTTP transport)
    ├── ProtocolViolation  an answer that is not MCP
    └── ToolRefused      the tool answered with isError: Polign refused, text attached
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import IO, Any

MCP_PROTOCOL_VERSION = "2025-06-18"
CLIENT_INFO = {"name": "recall-eventstore", "version": "1"}
MAX_LINE_BYTES = 8 << 20
_EOF = object()


class McpFailure(Exception):
    """The MCP server could not give an answer."""


class ServerExited(McpFailure):
    pass


class CallTimedOut(McpFailure):
    pass


class ProtocolViolation(McpFailure):
    pass


class AccessDenied(McpFailure):
    pass


class ToolRefused(McpFailure):
    """The tool ran and refused; ``text`` is Polign's own message."""

    def __init__(self, tool: str, text: str) -> None:
        super().__init__(f"{tool}: {text}")
        self.tool = tool
        self.text = text


def tool_answer(tool: str, result: Any) -> Any:
    """The JSON a ``tools/call`` result carries as text; ToolRefused when it is an error."""
    try:
        text = "\n".join(c["text"] for c in result["content"] if c.get("type") == "text")
    except (KeyError, TypeError, AttributeError):
        raise ProtocolViolation(f"{tool} answered without text content") from None
    if result.get("isError"):
        raise ToolRefused(tool, text)
    try:
        return json.loads(text)
    except ValueError:
        raise ProtocolViolation(f"{tool} answered with text that is not JSON: {text[:200]!r}") from None


class McpStdioSession:
    """One MCP server process. Calls are serialized; each has its own timeout."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str]) -> None:
        self.argv = list(argv)
        try:
            self._process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env),
            )
        except OSError as exc:
            raise ServerExited(f"cannot start {self.argv[0]}: {exc.strerror or exc}") from None
        self._responses: queue.Queue[Any] = queue.Queue()
        self._stderr_tail: deque[str] = deque(maxlen=20)
        self._lock = threading.Lock()
        self._next_id = 0
        self.server_info: dict[str, Any] = {}
        self.tools: set[str] = set()
        assert self._process.stdout is not None and self._process.stderr is not None
        threading.Thread(
            target=self._read_stdout, args=(self._process.stdout,), daemon=True
        ).start()
        self._stderr_reader = threading.Thread(
            target=self._read_stderr, args=(self._process.stderr,), daemon=True
        )
        self._stderr_reader.start()

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def handshake(self, timeout: float) -> None:
        """Initialize, announce readiness and learn the tool names."""
        result = self.request(
            "initialize",
            {
                "protocolVersion": MCP_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": CLIENT_INFO,
            },
            timeout,
        )
        if not isinstance(result, dict):
            raise ProtocolViolation("initialize answered without a result object")
        self.server_info = result.get("serverInfo") or {}
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = self.request("tools/list", {}, timeout)
        tools = listed.get("tools") if isinstance(listed, dict) else None
        if not isinstance(tools, list):
            raise ProtocolViolation("tools/list answered without a tools array")
        self.tools = {str(tool.get("name")) for tool in tools if isinstance(tool, dict)}

    def call_tool(self, name: str, arguments: Mapping[str, Any], timeout: float) -> Any:
        """Run one tool and return its JSON answer; raise ToolRefused on isError."""
        result = self.request("tools/call", {"name": name, "arguments": dict(arguments)}, timeout)
        return tool_answer(name, result)

    def request(self, method: str, params: Mapping[str, Any], timeout: float) -> Any:
        with self._lock:
            self._next_id += 1
            request_id = self._next_id
            self._send(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params)}
            )
            give_up = time.monotonic() + max(timeout, 0.0)
            while True:
                try:
                    message = self._responses.get(timeout=max(0.0, give_up - time.monotonic()))
                except queue.Empty:
                    raise CallTimedOut(f"{method} got no answer within {timeout:.2f}s") from None
                if message is _EOF:
                    self._responses.put(_EOF)  # every later call sees the end too
                    raise ServerExited(self._exit_description())
                if isinstance(message, Exception):
                    raise ProtocolViolation(str(message))
                if not isinstance(message, dict) or "method" in message:
                    continue  # notifications and server requests are not answers
                if message.get("id") != request_id:
                    continue  # a late answer to a call that already gave up
                if "error" in message:
                    error = message["error"] or {}
                    raise ProtocolViolation(f"{method}: {error.get('message', error)}")
                return message.get("result")

    def close(self, grace: float = 2.0) -> None:
        """End the process: close its input, then terminate, then kill."""
        process = self._process
        if process.stdin is not None and not process.stdin.closed:
            try:
                process.stdin.close()
            except OSError:
                pass
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _send(self, message: dict[str, Any]) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write((json.dumps(message) + "\n").encode())
            stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            raise ServerExited(self._exit_description()) from None

    def _exit_description(self) -> str:
        try:
            status = self._process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            status = None
        if status is not None:
            self._stderr_reader.join(timeout=0.5)  # its last words explain the exit
        if status is None:
            how = "closed its output"
        elif status < 0:
            how = f"was killed by {signal.Signals(-status).name}"
        else:
            how = f"exited with status {status}"
        said = " | ".join(line for line in self._stderr_tail if line)
        return f"{self.argv[0]} (pid {self._process.pid}) {how}" + (f": {said}" if said else "")

    def _read_stdout(self, stream: IO[bytes]) -> None:
        while True:
            line = stream.readline(MAX_LINE_BYTES + 1)
            if not line:
                self._responses.put(_EOF)
                return
            if len(line) > MAX_LINE_BYTES:
                self._responses.put(ProtocolViolation("an answer exceeds 8 MiB"))
                continue
            if not line.strip():
                continue
            try:
                self._responses.put(json.loads(line))
            except ValueError:
                self._responses.put(ProtocolViolation(f"unparseable line {line[:120]!r}"))

    def _read_stderr(self, stream: IO[bytes]) -> None:
        for raw in stream:
            self._stderr_tail.append(raw.decode("utf-8", "replace").strip())
