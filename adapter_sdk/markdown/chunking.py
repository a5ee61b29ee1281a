"""Split a note into chunks at its headings.

Markdown notes split on ATX headings (``#`` … ``######``, at most three
leading spaces, a space after the hashes, closing hashes trimmed); headings
inside fenced code blocks do not split. Each chunk is a heading line plus its
body up to the next heading of any level; text before the first heading is a
chunk of its own. Plain-text notes split at blank lines into blocks of at most
``TEXT_BLOCK_LINES`` lines. Lines are 1-based and inclusive, trailing blank
lines trimmed; front matter lines belong to no chunk.

A front-matter ``title`` stands in for the note's first level-1 heading in
chunk titles; when that heading says something else, its words are indexed
with its chunk's body (``Chunk.indexed_body``), so no line of the note is
beyond search.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from adapter_sdk.lexical import tokenize, unmark_words
from adapter_sdk.markdown.front_matter import FrontMatter, front_matter_span, parse_front_matter

PREVIEW_CHARS = 400
TEXT_BLOCK_LINES = 40
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BLOCK_MARKERS = "#`~"
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_URL = re.compile(r"<?\b(?:[a-z][a-z0-9+.-]*://|www\.)\S+", re.IGNORECASE)
# a web address written without its scheme: host.example.com/path
_BARE_URL = re.compile(r"\b(?:[a-z0-9-]+\.)+[a-z]{2,}/\S*", re.IGNORECASE)
# a quotation: a double-quoted, typographically quoted or backticked run closing within its paragraph
_QUOTATION = re.compile(r'"[^"]*"|\u201c[^\u201d]*\u201d|`[^`]*`')
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
MARKDOWN_EXTENSIONS = (".md", ".markdown")


@dataclass(frozen=True)
class Chunk:
    ordinal: int
    start_line: int
    end_line: int
    heading: str
    heading_path: tuple[str, ...]
    title: str
    body: str
    hidden_heading: str = ""  # a heading the title does not show (see the module docstring)

    @property
    def indexed_body(self) -> str:
        return f"{self.hidden_heading}\n{self.body}" if self.hidden_heading else self.body

    @property
    def preview(self) -> str:
        """The chunk's opening: its first paragraph, or its heading when it has no body."""
        paragraph: list[str] = []
        length, body, start = 0, self.body, 0
        # walk line by line only as far as the preview reaches: past PREVIEW_CHARS the
        # clipped text is settled, so a long body is never split whole
        while start <= len(body) and length <= PREVIEW_CHARS + 1:
            end = body.find("\n", start)
            if end < 0:
                end = len(body)
            stripped = body[start:end].strip()
            start = end + 1
            if not stripped:
                if paragraph:
                    break
                continue
            paragraph.append(stripped)
            length += len(stripped) + 1
        return clip(" ".join(paragraph) or self.heading or self.title, PREVIEW_CHARS)


@dataclass(frozen=True)
class ParsedNote:
    title: str
    chunks: list[Chunk]
    front: FrontMatter


def split_lines(text: str) -> list[str]:
    """Lines as an editor numbers them: only ``\\n`` ends a line, a trailing ``\\r`` is
    dropped, and the newline ending the last line does not start another."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    if "\r" not in text:
        return lines
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def parse_note(rel_path: str, text: str) -> ParsedNote:
    lines = split_lines(text)
    span = front_matter_span(lines)
    front = parse_front_matter("\n".join(lines[1 : span - 1])) if span else FrontMatter()
    stem = rel_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if rel_path.lower().endswith(MARKDOWN_EXTENSIONS):
        sections = _markdown_sections(lines, span)
        first_h1 = next((s[2] for s in sections if s[3] == 1), None)
        title = front.title or first_h1 or stem
    else:
        sections = _text_blocks(lines, span)
        title = front.title or stem
        first_h1 = None
    hidden_h1 = first_h1 if first_h1 and tokenize(first_h1) != tokenize(title) else None
    chunks: list[Chunk] = []
    for start, end, heading, level, path in sections:
        body_from = start + 1 if heading else start
        body = "\n".join(lines[body_from - 1 : end])
        display = chunk_title(title, path[1:] if path and path[0] == first_h1 else path)
        hidden = heading if level == 1 and heading == hidden_h1 and len(path) == 1 else ""
        chunks.append(Chunk(len(chunks), start, end, heading, path, display, body, hidden))
    return ParsedNote(title, chunks, front)


def chunk_title(doc_title: str, heading_path: tuple[str, ...]) -> str:
    """``Doc title > Section > Subsection``; a leading heading equal to the title is not repeated.

    The caller drops the note's first level-1 heading from ``heading_path``: the
    document title (front matter ``title``, else that heading) stands in for it.
    """
    path = list(heading_path)
    if path and path[0].casefold() == doc_title.casefold():
        path = path[1:]
    return " > ".join([doc_title, *path])


def indexable(text: str) -> str:
    """Text as indexed: link destinations and URLs removed (they are not prose), and
    markup inside words removed as ``tokenize`` removes it (``unmark_words``)."""
    text = unmark_words(text)
    if "](" in text:
        text = _LINK_TARGET.sub("]", text)
    if "://" in text or "www." in text.lower():
        text = _URL.sub(" ", text)
    if "/" in text:
        text = _BARE_URL.sub(" ", text)
    return text


def without_quotations(text: str) -> str:
    """``text`` with its quotations blanked: what it says in its own words.

    A quotation may wrap across lines but not reach the next paragraph; an
    opening mark that never closes there (an apostrophe-like stray, an inch
    mark) quotes nothing.
    """
    return "\n\n".join(_QUOTATION.sub(" ", paragraph) for paragraph in _PARAGRAPH_BREAK.split(text))


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_Section = tuple[int, int, str, int, tuple[str, ...]]


def _markdown_sections(lines: list[str], skip: int) -> list[_Section]:
    """(start, end, heading, level, heading path) per chunk; lines 1-based inclusive."""
    starts: list[tuple[int, str, int]] = []
    fence: str | None = None
    for index in range(skip, len(lines)):
        line = lines[index]
        # a heading or a fence opens with '#', '`' or '~' after at most three spaces
        opening = line[:4].lstrip(" ")[:1]
        if not opening or opening not in _BLOCK_MARKERS:
            continue
        fence_match = _FENCE.match(line)
        if fence_match:
            marker = fence_match.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
            continue
        if fence is not None:
            continue
        match = _HEADING.match(line)
        if match:
            text = _CLOSING_HASHES.sub("", match.group(2) or "").strip()
            starts.append((index + 1, text, len(match.group(1))))
    sections: list[_Section] = []
    first = starts[0][0] if starts else len(lines) + 1
    preamble_end = _trim_end(lines, skip + 1, first - 1)
    if preamble_end >= skip + 1:
        sections.append((_trim_start(lines, skip + 1, preamble_end), preamble_end, "", 0, ()))
    stack: list[tuple[int, str]] = []
    for position, (start, text, level) in enumerate(starts):
        following = starts[position + 1][0] if position + 1 < len(starts) else len(lines) + 1
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
        end = max(start, _trim_end(lines, start, following - 1))
        sections.append((start, end, text, level, tuple(t for _, t in stack if t)))
    return sections


def _text_blocks(lines: list[str], skip: int) -> list[_Section]:
    sections: list[_Section] = []
    start: int | None = None
    for number in range(skip + 1, len(lines) + 2):
        blank = number > len(lines) or not lines[number - 1].strip()
        if start is None:
            if not blank:
                start = number
            continue
        if blank and number - start >= TEXT_BLOCK_LINES or number > len(lines):
            end = _trim_end(lines, start, number - 1)
            sections.append((start, end, "", 0, ()))
            start = None
    return sections


def _trim_end(lines: list[str], start: int, end: int) -> int:
    while end >= start and not lines[end - 1].strip():
        end -= 1
    return end


def _trim_start(lines: list[str], start: int, end: int) -> int:
    while start < end and not lines[start - 1].strip():
        start += 1
    return start
