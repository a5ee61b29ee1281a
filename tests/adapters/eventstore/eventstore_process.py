"""Drive the real eventstore adapter process: each request returns its whole reply frame."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.adapter_process import AdapterPipes, deadline_in

# Requests carry a deadline this far away, so a hung store fails the request, not the run.
DEADLINE_S = 20.0


class AdapterProcess(AdapterPipes):
    def __init__(self, env: dict[str, str] | None = None) -> None:
        super().__init__("eventstore", env)

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
        params = {"query": query, "filters": {}, "limit": limit, "deadline": deadline_in(DEADLINE_S), **extra}
        return self.request("recall/search", params)

    def expand(self, locator: str, detail: str = "full", budget_bytes: int = 0) -> dict[str, Any]:
        params = {
            "locator": locator,
            "detail": detail,
            "budget_bytes": budget_bytes,
            "deadline": deadline_in(DEADLINE_S),
        }
        return self.request("recall/expand", params)

    def health(self) -> dict[str, Any]:
        return self.request("recall/health", {"deadline": deadline_in(DEADLINE_S)})

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.receive(self.send(method, params))

    def mcp_children(self) -> list[int]:
        """Pids of the adapter's own child processes (Polign's `recall mcp`)."""
        children: list[int] = []
        for task in Path(f"/proc/{self.process.pid}/task").iterdir():
            text = (task / "children").read_text().split()
            children += [int(pid) for pid in text]
        return children

