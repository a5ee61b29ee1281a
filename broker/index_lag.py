"""Whether a source's index was still catching up, read from the health it last reported.

A search that times out while the index is behind its source is not a slow
source: a refresh ends it. The health facts that say so are the protocol's own
(``record_count`` above ``indexed_count`` plus ``failed_count``, an
``index_watermark`` behind the ``source_watermark``) or an adapter's
diagnostics: ``pending`` (a count of items still to index) and ``hint`` (what
to run). Whatever the source, the note says so and what to run.
"""

from __future__ import annotations

from adapter_sdk.protocol import HealthResult


def catching_up(health: HealthResult | None, source_id: str) -> str | None:
    """``the index is catching up (...); run ...``, or None when nothing says it is behind."""
    if health is None:
        return None
    diagnostics = health.diagnostics or {}
    pending = diagnostics.get("pending")
    count = pending if isinstance(pending, int) and not isinstance(pending, bool) else 0
    if not count and health.record_count is not None and health.indexed_count is not None:
        count = max(health.record_count - health.indexed_count - (health.failed_count or 0), 0)
    behind = bool(
        health.source_watermark
        and health.index_watermark
        and health.source_watermark != health.index_watermark
    )
    if not count and not behind:
        return None
    hint = diagnostics.get("hint")
    action = hint if isinstance(hint, str) and hint.strip() else f"recall refresh --source {source_id}"
    what = f"{count} pending" if count else "its index is behind the source"
    return f"the index is catching up ({what}); run {action}"
