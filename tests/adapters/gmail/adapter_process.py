"""The real gmail adapter process, for source ``mail``."""

from __future__ import annotations

from tests.support import adapter_process as support
from tests.support.adapter_process import REPO, AdapterError, deadline_in

__all__ = ["REPO", "AdapterError", "AdapterProcess", "deadline_in"]


class AdapterProcess(support.AdapterProcess):
    def __init__(self, env: dict[str, str] | None = None) -> None:
        super().__init__("gmail", "mail", expand_detail="full", env=env)
