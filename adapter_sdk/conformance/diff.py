"""Compare replayed frames with recorded ones, field by field.

Comparison is positional (response *i* against recorded line *i*) and by JSON
value: key order is irrelevant, numbers compare by value (``1`` equals
``1.0``), strings, booleans and null compare exactly, and arrays compare
element-wise with their length checked.

``volatile`` pointers (RFC 6901, plus a ``*`` segment matching every array
element or object member) name fields that cannot repeat, such as clock
readings. What they reach is replaced by ``"<volatile>"`` on both sides, so a
masked field that disappears still differs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

VOLATILE_MARK = "<volatile>"
PREVIEW_CHARS = 200


@dataclass(frozen=True)
class Difference:
    """One place a replay departed from its recording.

    ``response`` is the 1-based frame index (0 for the exchange as a whole);
    ``pointer`` names the value inside the frame.
    """

    response: int
    pointer: str
    detail: str = ""
    want: str | None = None
    got: str | None = None

    def __str__(self) -> str:
        parts = []
        if self.response:
            parts.append(f"response {self.response}")
        if self.pointer:
            parts.append(self.pointer)
        text = ": ".join(parts)
        body = self.detail
        if self.want is not None and self.got is not None:
            body = f"{body + ': ' if body else ''}want {self.want}, got {self.got}"
        elif self.want is not None:
            body = f"{body} (recorded {self.want})"
        elif self.got is not None:
            body = f"{body} (replayed {self.got})"
        return f"{text}: {body}" if text else body


def parse_pointer(pointer: str) -> tuple[str, ...]:
    """Split a JSON Pointer into unescaped tokens; ``*`` stays a wildcard."""
    if not pointer:
        raise ValueError("pointer is empty")
    if not pointer.startswith("/"):
        raise ValueError(f"pointer {pointer!r} must begin with '/'")
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/"))


def escape_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def mask(value: Any, tokens: Sequence[str]) -> int:
    """Replace what ``tokens`` reach inside ``value`` with the mark; return how many."""
    if not tokens:
        return 0
    head, rest = tokens[0], tokens[1:]
    if isinstance(value, dict):
        keys = list(value) if head == "*" else [head] if head in value else []
        return sum(_mask_slot(value, key, rest) for key in keys)
    if isinstance(value, list):
        if head == "*":
            indexes: Iterable[int] = range(len(value))
        elif head.isdigit() and int(head) < len(value):
            indexes = [int(head)]
        else:
            return 0
        return sum(_mask_slot(value, index, rest) for index in indexes)
    return 0


def _mask_slot(container: Any, slot: Any, rest: Sequence[str]) -> int:
    if not rest:
        container[slot] = VOLATILE_MARK
        return 1
    return mask(container[slot], rest)


def decode_frame(line: bytes, volatile: Sequence[tuple[str, ...]]) -> Any:
    """Parse one frame with exact numbers and mask its volatile fields."""
    value = json.loads(line, parse_float=Decimal)
    for tokens in volatile:
        mask(value, tokens)
    return value


def compare(
    recorded: Sequence[bytes],
    replayed: Sequence[bytes],
    volatile: Sequence[str],
    bind: Callable[[Any], Any] = lambda value: value,
) -> list[Difference]:
    """Every difference between the recorded and replayed frames.

    ``bind`` is applied to each decoded recorded frame before masking, so
    placeholders a recorder wrote into responses match this run's paths.
    """
    pointers = [parse_pointer(p) for p in volatile]
    differences: list[Difference] = []
    for index in range(max(len(recorded), len(replayed))):
        number = index + 1
        if index >= len(replayed):
            differences.append(
                Difference(number, "", "no frame: the replay stopped here", want=_preview_raw(recorded[index]))
            )
            continue
        if index >= len(recorded):
            differences.append(
                Difference(number, "", "unexpected frame: the recording ends here", got=_preview_raw(replayed[index]))
            )
            continue
        try:
            want = bind(json.loads(recorded[index], parse_float=Decimal))
            for tokens in pointers:
                mask(want, tokens)
        except ValueError as exc:
            differences.append(Difference(number, "", f"recorded frame is not JSON: {exc}"))
            continue
        try:
            got = decode_frame(replayed[index], pointers)
        except ValueError as exc:
            differences.append(
                Difference(number, "", f"replayed frame is not JSON: {exc}", got=_preview_raw(replayed[index]))
            )
            continue
        _diff_value(differences, number, "", want, got)
    return differences


def _diff_value(out: list[Difference], response: int, pointer: str, want: Any, got: Any) -> None:
    if isinstance(want, dict):
        if not isinstance(got, dict):
            out.append(_mismatch(response, pointer, want, got, "type differs"))
            return
        for key in sorted(want):
            child = f"{pointer}/{escape_token(key)}"
            if key not in got:
                out.append(Difference(response, child, "member missing from the replayed frame", want=_preview(want[key])))
            else:
                _diff_value(out, response, child, want[key], got[key])
        for key in sorted(set(got) - set(want)):
            out.append(
                Difference(response, f"{pointer}/{escape_token(key)}", "member is not in the recording", got=_preview(got[key]))
            )
        return
    if isinstance(want, list):
        if not isinstance(got, list):
            out.append(_mismatch(response, pointer, want, got, "type differs"))
            return
        if len(want) != len(got):
            out.append(
                Difference(response, pointer, f"length differs: recorded {len(want)}, replayed {len(got)}")
            )
        for index, (w, g) in enumerate(zip(want, got, strict=False)):
            _diff_value(out, response, f"{pointer}/{index}", w, g)
        return
    if _is_number(want):
        if not _is_number(got):
            out.append(_mismatch(response, pointer, want, got, "type differs"))
        elif want != got:
            out.append(_mismatch(response, pointer, want, got))
        return
    if type(want) is not type(got) or want != got:
        out.append(_mismatch(response, pointer, want, got))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | Decimal) and not isinstance(value, bool)


def _mismatch(response: int, pointer: str, want: Any, got: Any, detail: str = "") -> Difference:
    return Difference(response, pointer, detail, want=_preview(want), got=_preview(got))


def _preview(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=_number_text)
    return _truncate(text)


def _preview_raw(line: bytes) -> str:
    return _truncate(line.decode("utf-8", errors="replace"))


def _number_text(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _truncate(text: str) -> str:
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "…"
