"""The real notes adapter process, for source ``notes``."""

from __future__ import annotations

from tests.support.adapter_process import AdapterError, AdapterProcess

RpcFailure = AdapterError


class NotesProcess(AdapterProcess):
    def __init__(self, env: dict[str, str] | None = None) -> None:
        super().__init__("notes", "notes", expand_detail="excerpt", env=env)
