"""MCP to a `recall serve` over plain HTTP: one JSON-RPC message per POST to /mcp.

The same exchanges as the stdio session, behind a Recall key
(``Authorization: Bearer rcl_<id>_<secret>``). The standard library is enough.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from adapters.eventstore.mcp_stdio import (
    CLIENT_INFO,
    MCP_PROTOCOL_VERSION,
    AccessDenied,
    CallTimedOut,
    ProtocolViolation,
    ServerExited,
    tool_answer,
)


class McpHttpSession:
    alive = True
    pid: int | None = None

    def __init__(self, url: str, key: str) -> None:
        self.url = url.rstrip("/")
        self.argv = [f"{self.url}/mcp"]
        self._key = key
        self._next_id = 0
        self.server_info: dict[str, Any] = {}
        self.tools: set[str] = set()

    def handshake(self, timeout: float) -> None:
        params = {
            "protocolVersion": MCP_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": CLIENT_INFO,
        }
        result = self.request("initialize", params, timeout)
        self.server_info = (result or {}).get("serverInfo") or {}
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"}, timeout)
        listed = self.request("tools/list", {}, timeout) or {}
        self.tools = {str(t.get("name")) for t in listed.get("tools") or [] if isinstance(t, dict)}

    def call_tool(self, name: str, arguments: Mapping[str, Any], timeout: float) -> Any:
        result = self.request("tools/call", {"name": name, "arguments": dict(arguments)}, timeout)
        return tool_answer(name, result)

    def request(self, method: str, params: Mapping[str, Any], timeout: float) -> Any:
        self._next_id += 1
        answer = self._post(
            {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": dict(params)},
            timeout,
        )
        if not isinstance(answer, dict) or answer.get("id") != self._next_id:
            raise ProtocolViolation(f"{method} got no JSON-RPC answer from {self.url}")
        if "error" in answer:
            raise ProtocolViolation(f"{method}: {(answer['error'] or {}).get('message')}")
        return answer.get("result")

    def close(self, grace: float = 0.0) -> None:
        """Nothing is held open between requests."""

    def _post(self, message: dict[str, Any], timeout: float) -> Any:
        request = urllib.request.Request(
            f"{self.url}/mcp",
            data=json.dumps(message).encode(),
            method="POST",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json",
                "Authorization": f"Bearer {self._key}",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=max(timeout, 0.001)) as response:  # noqa: S310
                body = response.read()
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403):
                raise AccessDenied(f"{self.url} refused the Recall key (HTTP {exc.code})") from None
            raise ServerExited(f"{self.url} answered HTTP {exc.code}") from None
        except TimeoutError:
            raise CallTimedOut(f"{self.url} gave no answer within {timeout:.2f}s") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                raise CallTimedOut(f"{self.url} gave no answer within {timeout:.2f}s") from None
            raise ServerExited(f"cannot reach {self.url}: {reason}") from None
        if not body.strip():
            return None
        try:
            return json.loads(body)
        except ValueError:
            raise ProtocolViolation(
                f"{self.url} answered with something that is not JSON"
            ) from None
