"""Expanded evidence cut at a detail level's boundary and then to a byte budget.

A cut is always marked in the text itself (``… [truncated: <boundary>]``) and named
in the result's ``truncation_boundary``, so a reader never mistakes a part for the
whole. The budget cut keeps whole UTF-8 characters and leaves room for the mark.
"""

from __future__ import annotations


def marked(boundary: str) -> str:
    return f"\n… [truncated: {boundary}]"


def cut_to_budget(text: str, boundary: str | None, budget_bytes: int) -> tuple[str, str | None]:
    """``text`` with the level ``boundary`` marked, then cut to ``budget_bytes`` (0: none).

    Returns the text and the boundary that applies last (``budget_bytes`` when the
    budget cut it), or ``None`` when nothing was cut.
    """
    if boundary:
        text += marked(boundary)
    if budget_bytes and len(text.encode()) > budget_bytes:
        boundary = "budget_bytes"
        marker = marked(boundary)
        room = max(0, budget_bytes - len(marker.encode()))
        text = text.encode()[:room].decode("utf-8", errors="ignore") + marker
    return text, boundary
