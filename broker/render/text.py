"""Formatting shared by the human renderings: labelled fields, numbers, durations, times.

A field whose value is zero or empty is left out: a zero is the absence of a
fact, so leaving it out of the text does not hide one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

_NS_PER_MS = 1_000_000
_NS_PER_S = 1_000_000_000
_NS_PER_MIN = 60 * _NS_PER_S
_NS_PER_HOUR = 60 * _NS_PER_MIN


def num(value: float) -> str:
    """A number in six significant digits, trailing zeros trimmed (``1.2``, ``0.0196721``)."""
    text = format(value, ".6g")
    return "0" if text == "-0" else text


def signed(value: float) -> str:
    return "+" + num(value) if value >= 0 else num(value)


def _fraction(value: int, unit: int) -> str:
    whole, rest = divmod(value, unit)
    if not rest:
        return str(whole)
    digits = str(rest).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"


def duration_text(ns: int) -> str:
    """A duration spelled ``1.5s``, ``25ms``, ``1m30s``, ``1h0m0s`` (exact, not rounded)."""
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000:
        return f"{sign}{ns}ns"
    if ns < _NS_PER_MS:
        return f"{sign}{_fraction(ns, 1_000)}µs"
    if ns < _NS_PER_S:
        return f"{sign}{_fraction(ns, _NS_PER_MS)}ms"
    hours, rest = divmod(ns, _NS_PER_HOUR)
    minutes, rest = divmod(rest, _NS_PER_MIN)
    text = f"{hours}h" if hours else ""
    if hours or minutes:
        text += f"{minutes}m"
    return f"{sign}{text}{_fraction(rest, _NS_PER_S)}s"


def rounded_ms(ns: int) -> int:
    """``ns`` rounded to the millisecond, halves away from zero."""
    sign = -1 if ns < 0 else 1
    whole, rest = divmod(abs(ns), _NS_PER_MS)
    if rest * 2 >= _NS_PER_MS:
        whole += 1
    return sign * whole * _NS_PER_MS


def elapsed_text(ns: int) -> str:
    """A duration a person reads: rounded to the millisecond so two identical runs agree."""
    return duration_text(rounded_ms(ns))


def stamp(moment: datetime) -> str:
    """RFC 3339 in UTC, whole seconds. A time without a zone is taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def stamp_text(value: str) -> str:
    """A JSON time string re-spelled like :func:`stamp`; text that is not a time is kept."""
    try:
        return stamp(datetime.fromisoformat(value))
    except ValueError:
        return value


def value_text(value: Any) -> str:
    """One diagnostic value as plain text: a map as ``(key value, key value)`` in key
    order, a list as ``(a, b)``, nothing as ``none``; never a programming language's
    syntax for either."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    if isinstance(value, Mapping):
        return f"({pairs_text(value)})"
    if isinstance(value, list | tuple):
        return "(" + ", ".join(value_text(v) for v in value) + ")"
    return str(value)


def pairs_text(values: Mapping[str, Any]) -> str:
    """A map's entries as ``key value, key value`` in key order."""
    return ", ".join(f"{key} {value_text(values[key])}" for key in sorted(values, key=str))


def mapping_text(values: Mapping[str, Any] | None) -> str:
    """``k=v, k=v`` in key order, so the same map always reads the same."""
    if not values:
        return ""
    return ", ".join(f"{key}={value_text(values[key])}" for key in sorted(values))


def split_diagnostics(
    values: Mapping[str, Any] | None,
) -> tuple[dict[str, Any], dict[str, Mapping[str, Any]], dict[str, list[Mapping[str, Any]]]]:
    """Diagnostics as (scalar values, maps such as ``freshness``, lists of entries such
    as ``{path, reason, fix}``)."""
    scalars: dict[str, Any] = {}
    nested: dict[str, Mapping[str, Any]] = {}
    listed: dict[str, list[Mapping[str, Any]]] = {}
    for key, value in (values or {}).items():
        if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            listed[key] = value
        elif isinstance(value, Mapping) and value:
            nested[key] = value
        else:
            scalars[key] = value
    return scalars, nested, listed


def item_text(item: Mapping[str, Any]) -> str:
    """One listed diagnostic as a sentence: ``PATH: REASON; fix: FIX`` and any other fields."""
    rest = {k: v for k, v in item.items() if k not in ("path", "reason", "fix")}
    parts = [str(item["reason"])] if item.get("reason") else []
    parts += [f"{key} {value_text(rest[key])}" for key in sorted(rest)]
    if item.get("fix"):
        parts.append(f"fix: {item['fix']}")
    text = "; ".join(parts)
    return f"{item['path']}: {text}" if item.get("path") else text


def joined(values: Iterable[Any] | None) -> str:
    return ", ".join(str(v) for v in values or ())


def one_line(text: str) -> str:
    """Source text flattened to one line, so it cannot imitate the report around it."""
    return " ".join(text.split())


class Fields:
    """A labelled run of values on one line, separated by two spaces."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def text(self, label: str, value: str | None) -> None:
        if value:
            self.parts.append(f"{label} {value}")

    def count(self, label: str, value: int | None) -> None:
        if value:
            self.parts.append(f"{label} {value}")

    def number(self, label: str, value: float | None) -> None:
        if value:
            self.parts.append(f"{label} {num(value)}")

    def elapsed(self, label: str, ns: int | None) -> None:
        if ns:
            self.parts.append(f"{label} {elapsed_text(ns)}")

    def at(self, label: str, moment: datetime | None) -> None:
        if moment is not None:
            self.parts.append(f"{label} {stamp(moment)}")

    def raw(self, value: str | None) -> None:
        """A value that is its own label, such as ``eligible``."""
        if value:
            self.parts.append(value)

    def flag(self, label: str, on: bool) -> None:
        if on:
            self.parts.append(label)

    def __bool__(self) -> bool:
        return bool(self.parts)

    def __str__(self) -> str:
        return "  ".join(self.parts)


class Lines:
    """Accumulates rendered lines; every line ends in a newline."""

    def __init__(self) -> None:
        self._out: list[str] = []

    def line(self, text: str = "") -> None:
        self._out.append(text + "\n")

    def block(self, indent: str, text: str) -> None:
        """Indented text; blank lines stay blank so nothing grows trailing whitespace."""
        for part in text.rstrip("\n").split("\n"):
            self._out.append(f"{indent}{part}\n" if part.strip() else "\n")

    def __str__(self) -> str:
        return "".join(self._out)
