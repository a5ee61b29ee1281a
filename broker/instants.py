"""Reading an instant a person or a host typed: one rule for every surface.

An RFC 3339 instant, or a plain date (midnight UTC); a time without a zone is
UTC. Each surface words its own refusal, naming the field as its users know it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from broker.errors import UsageError


def parse_instant(text: str) -> datetime:
    """``text`` as an aware instant; :class:`ValueError` when it is none."""
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def parse_time(value: str, flag: str) -> datetime:
    """``value`` (surrounding blanks ignored) as an instant; a :class:`UsageError` naming ``flag`` if not."""
    try:
        return parse_instant(value.strip())
    except ValueError:
        raise UsageError(
            f"{flag}: {value!r} is not a time; use RFC 3339 such as 2026-03-01T12:00:00Z "
            "or a date such as 2026-03-01"
        ) from None
