"""A row's text at the detail asked for, within the byte budget."""

from __future__ import annotations

import hashlib

from adapter_sdk import DetailLevel, ErrorCode, ExpandResult, RpcError
from adapter_sdk.truncation import cut_to_budget
from adapters.postgres.rows import Row, preview

MIN_BUDGET_BYTES = 64
EXCERPT_CHARS = 1200


def render(row: Row, detail: DetailLevel, budget_bytes: int) -> ExpandResult:
    if 0 < budget_bytes < MIN_BUDGET_BYTES:
        raise RpcError(
            ErrorCode.budget_exceeded, f"budget_bytes {budget_bytes} is below the {MIN_BUDGET_BYTES}-byte minimum"
        )
    title = row.title or row.key
    boundary: str | None = None
    if detail is DetailLevel.summary:
        text = f"{title}\n{preview(row.body)}".strip()
    elif detail is DetailLevel.excerpt and len(row.body) > EXCERPT_CHARS:
        text, boundary = f"{title}\n\n{row.body[:EXCERPT_CHARS].rstrip()}", "excerpt_chars"
    else:
        text = f"{title}\n\n{row.body}"
    text, boundary = cut_to_budget(text, boundary, budget_bytes)
    return ExpandResult(
        content=text,
        truncated=boundary is not None,
        truncation_boundary=boundary,
        source_revision="row:" + hashlib.sha256(row.body.encode()).hexdigest()[:12],
        provenance=f"row {row.key}",
    )
