"""Matched excerpts: the window of a chunk's text that best explains the query.

Pure functions over the chunk's lines as indexed; the caller is responsible
for proving those lines are the file's current bytes.
"""

from __future__ import annotations

from adapter_sdk.lexical import tokenize

EXCERPT_CHARS = 400
LEAD_IN_CHARS = EXCERPT_CHARS // 4


def matched_window(lines: list[str], terms: set[str]) -> str | None:
    """The run of non-blank lines covering the most distinct query terms, ≤ 400 characters.

    None when no line holds a query term. A single line longer than the limit
    is cut around its first match, with ``…`` marking each cut end.
    """
    rows = [line.strip() for line in lines if line.strip()]
    found = [terms_in(row, terms) for row in rows]
    if not any(found):
        return None
    best: tuple[int, int, int] = (-1, 0, 0)  # (distinct terms, -start, end)
    for start in range(len(rows)):
        if not found[start]:
            continue
        covered: set[str] = set()
        length = -1
        end = start
        while end < len(rows) and length + 1 + len(rows[end]) <= EXCERPT_CHARS:
            length += 1 + len(rows[end])
            covered |= found[end]
            end += 1
        end = max(end, start + 1)
        covered |= found[start]
        if len(covered) > best[0]:
            best = (len(covered), -start, end)
    start, end = -best[1], best[2]
    while start > 0 and len(rows[start - 1]) + 1 <= LEAD_IN_CHARS and _fits(rows, start - 1, end):
        start -= 1
    window = " ".join(rows[start:end])
    if len(window) <= EXCERPT_CHARS:
        return window
    return _cut_around(window, terms)


def terms_in(row: str, terms: set[str]) -> set[str]:
    """The ``terms`` among the row's tokens. A plain ASCII row holding none of them as a
    substring of its lowercased text holds none as a token, so it is not tokenized (most
    rows of a chunk do not hold a query term)."""
    if row.isascii() and "[" not in row and "*" not in row and "<" not in row:
        lowered = row.lower()
        if not any(term in lowered for term in terms):
            return set()
    return set(tokenize(row)) & terms


def _fits(rows: list[str], start: int, end: int) -> bool:
    return len(" ".join(rows[start:end])) <= EXCERPT_CHARS


def _cut_around(text: str, terms: set[str]) -> str:
    lowered = text.lower()
    hits = [lowered.find(term) for term in terms if lowered.find(term) >= 0]
    first = min(hits) if hits else 0
    begin = max(0, first - LEAD_IN_CHARS)
    piece = text[begin : begin + EXCERPT_CHARS - 2].strip()
    prefix = "…" if begin > 0 else ""
    suffix = "…" if begin + EXCERPT_CHARS - 2 < len(text) else ""
    return prefix + piece + suffix
