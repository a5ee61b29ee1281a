"""The real tasks adapter process, for source ``tasks``."""

from __future__ import annotations

from tests.support import adapter_process as support
from tests.support.adapter_process import AdapterError

__all__ = ["AdapterError", "AdapterProcess"]


class AdapterProcess(support.AdapterProcess):
    def __init__(self) -> None:
        super().__init__("tasks", "tasks", expand_detail="excerpt")
