"""Turn one note's bytes into the rows the index stores, touching no database.

This is the per-file work of an index build (read, hash, decode, chunk, clean
the text for FTS5, derive identifiers), kept apart from the writes so it can
run in a worker process while the writer inserts (``parse_worker.py``). Every
outcome is a small picklable value; the writer (``index_writer.IndexWriter``) decides
what it means for the index.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from adapter_sdk.lexical import tokenize, unmark_words
from adapter_sdk.markdown.chunking import indexable, parse_note
from adapters.notes.reading import OutsideRoot, read_inside
from adapters.notes.settings import NotesSettings


@dataclass(frozen=True)
class Unreadable:
    """The file should have been read and could not be (permissions, I/O)."""

    reason: str


@dataclass(frozen=True)
class Outside:
    """What opened is not a regular file inside the folder (a link swapped in)."""


@dataclass(frozen=True)
class Oversize:
    """More bytes than ``max_file_bytes`` (the file grew after it was listed)."""

    size: int


@dataclass(frozen=True)
class Unchanged:
    """The bytes hash to what the index already holds for the path."""

    digest: str


@dataclass(frozen=True)
class Binary:
    """The bytes hold NUL: not a text note."""


@dataclass(frozen=True)
class PreparedNote:
    digest: str
    decode_problem: str
    title: str
    front: str  # the front matter as JSON
    has_supersedes: bool
    has_problems: bool
    # per chunk: ordinal, start line, end line, heading, heading path (JSON), preview
    chunks: list[tuple[int, int, int, str, str, str]]
    # per chunk, as FTS5 indexes it: title, body
    texts: list[tuple[str, str]]
    identifiers: list[tuple[str, str]]  # key, kind


Prepared = Unreadable | Outside | Oversize | Unchanged | Binary | PreparedNote


def prepare_file(
    root: str, real_root: str, rel: str, settings: NotesSettings, known_digest: str | None
) -> Prepared:
    """Read ``root/rel`` (checked as :func:`read_inside` checks it) and prepare it."""
    try:
        data = read_inside(root, rel, settings.max_file_bytes + 1, real_root)
    except OutsideRoot:
        return Outside()
    except OSError as exc:
        return Unreadable(f"unreadable: {exc.strerror or exc}")
    return prepare_bytes(rel, data, settings, known_digest)


def prepare_bytes(rel: str, data: bytes, settings: NotesSettings, known_digest: str | None) -> Prepared:
    """The rows for a note's bytes; :class:`Unchanged` when they hash to ``known_digest``."""
    if len(data) > settings.max_file_bytes:
        return Oversize(len(data))
    digest = hashlib.sha256(data).hexdigest()
    if digest == known_digest:
        return Unchanged(digest)
    if b"\x00" in data:
        return Binary()
    problem = ""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        problem = f"not valid UTF-8 (byte {exc.start}); indexed with replacement characters"
    parsed = parse_note(rel, text)
    front = parsed.front
    chunks: list[tuple[int, int, int, str, str, str]] = []
    texts: list[tuple[str, str]] = []
    for chunk in parsed.chunks:
        chunks.append((
            chunk.ordinal, chunk.start_line, chunk.end_line, chunk.heading,
            json.dumps(chunk.heading_path), chunk.preview,
        ))
        texts.append((unmark_words(chunk.title), indexable(chunk.indexed_body)))
    stem = rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    aliases = [*front.aliases, *settings.aliases_of(rel)]
    return PreparedNote(
        digest=digest,
        decode_problem=problem,
        title=parsed.title,
        front=json.dumps(front.to_json()),
        has_supersedes=bool(front.supersedes),
        has_problems=bool(front.problems),
        chunks=chunks,
        texts=texts,
        identifiers=identifiers(rel, stem, aliases, front.note_id),
    )


def identifiers(rel: str, stem: str, aliases: list[str], note_id: str | None) -> list[tuple[str, str]]:
    """Keys a query may name this note by. Names match whole query words; aliases and ids
    match as contiguous token runs. A one-word file stem is prose, not an identifier."""
    keys = [(rel.lower(), "path"), (rel.rsplit(".", 1)[0].lower(), "path"), (rel.rsplit("/", 1)[-1].lower(), "name")]
    if len(tokenize(stem)) >= 2:
        keys.append((stem.lower(), "name"))
    keys += [(" ".join(tokenize(a)), "alias") for a in aliases if tokenize(a)]
    if note_id and tokenize(note_id):
        keys.append((" ".join(tokenize(note_id)), "id"))
    return list(dict.fromkeys(keys))
