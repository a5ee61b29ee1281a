"""Read the evidence a locator names, at one of four detail levels.

A locator's local part is ``<relative path>#L<a>-L<b>``, or
``<relative path>#L<a>-L<b>@<commit>`` (12 hex) for a section of the notes as
committed, which a search with ``as_of`` answers from in a git work tree
(the ``@`` sits after the ``#``, so everything before it still names the note,
and the whole locator still matches protocol v1's ``^[^:]+:.+$``). A section is
honoured only while the note still has a chunk spanning exactly those lines: a
note that vanished, or whose sections moved, fails with locator_expired rather
than serving neighbouring text. The bare ``<relative path>`` (no ``#``: a note's
path never holds one) names the whole note as the folder holds it. Levels widen:
``summary`` (title and first line of text), ``excerpt`` (the range, at most 12
lines), ``full`` (the range) and ``context`` (the range and 20 lines either side).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from adapter_sdk import DetailLevel, ErrorCode, ExpandResult, RpcError
from adapter_sdk.folder.revision import note_revision
from adapter_sdk.markdown.chunking import PREVIEW_CHARS, clip, split_lines
from adapter_sdk.truncation import cut_to_budget

EXCERPT_LINES = 12
CONTEXT_LINES = 20
MIN_BUDGET_BYTES = 64
MAX_LINE = 2**31 - 1  # no note has more lines; larger numbers cannot name one
_LOCAL = re.compile(r"^(?P<path>[^#]+)#L(?P<start>\d+)-L(?P<end>\d+)(?:@(?P<commit>[0-9a-f]{12}))?$")


@dataclass(frozen=True)
class LineRange:
    path: str
    start: int
    end: int
    commit: str | None = None  # 12 hex: the section as committed, not as the folder holds it
    whole: bool = False  # the whole note (lines 1 to its last), not one section of it


@dataclass(frozen=True)
class Section:
    """The indexed chunk a locator names and the bytes of its note (live, or as committed)."""

    title: str
    heading: str
    data: bytes
    revision: str | None = None  # default: the digest of ``data``


def parse_local(local: str) -> LineRange:
    if "#" not in local:
        _check_relative(local, local)
        return LineRange(local, 1, MAX_LINE, whole=True)
    match = _LOCAL.match(local)
    if not match:
        raise RpcError(
            ErrorCode.locator_unknown,
            "notes locators look like <source>:<relative path>, or "
            "<source>:<relative path>#L<start>-L<end> optionally followed by @<12-hex commit>; "
            f"got {local!r}",
        )
    path, start, end = match["path"], int(match["start"]), int(match["end"])
    _check_relative(path, local)
    if not 1 <= start <= end <= MAX_LINE:
        raise RpcError(
            ErrorCode.locator_unknown,
            f"{local!r} is not a note path with a line range 1 <= start <= end <= {MAX_LINE}",
        )
    return LineRange(path, start, end, match["commit"])


def _check_relative(path: str, local: str) -> None:
    normal = posixpath.normpath(path)
    if path.startswith("/") or "\\" in path or normal != path or normal.split("/", 1)[0] == "..":
        raise RpcError(ErrorCode.locator_unknown, f"{local!r} is not a relative note path")


def render(section: Section, where: LineRange, detail: DetailLevel, budget_bytes: int) -> ExpandResult:
    if 0 < budget_bytes < MIN_BUDGET_BYTES:
        raise RpcError(
            ErrorCode.budget_exceeded,
            f"budget_bytes {budget_bytes} is below the {MIN_BUDGET_BYTES}-byte minimum",
        )
    lines = split_lines(section.data.decode("utf-8", errors="replace"))
    first, last = where.start, min(where.end, len(lines))
    boundary: str | None = None
    if detail is DetailLevel.summary:
        body = lines[first:last] if section.heading else lines[first - 1 : last]
        opening = next((line.strip() for line in body if line.strip()), "")
        text = clip(f"{section.title}\n{opening}".strip(), PREVIEW_CHARS)
        if len(text) < len(section.title) + 1 + len(opening):
            boundary = "summary_runes"
    else:
        if detail is DetailLevel.context:
            first, last = max(1, first - CONTEXT_LINES), min(len(lines), last + CONTEXT_LINES)
        elif detail is DetailLevel.excerpt and last - first + 1 > EXCERPT_LINES:
            last, boundary = first + EXCERPT_LINES - 1, "excerpt_lines"
        text = "\n".join(lines[first - 1 : last])
    text, boundary = cut_to_budget(text, boundary, budget_bytes)
    return ExpandResult(
        content=text,
        truncated=boundary is not None,
        truncation_boundary=boundary,
        source_revision=section.revision or note_revision(section.data),
        provenance=f"{where.path}:L{first}-L{last}",
    )
