"""A chunk that holds the question's words together outranks one that scatters them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter_sdk.lexical import matching_stem, tokenize
from adapters.notes.proximity import PASSAGE_TOKENS, passage_coverage, rescore_by_passages

from .adapter_process import NotesProcess
from .conftest import write_note

FILLER = " ".join(["alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron"] * 5)
WEIGHTS = {"sort": 1.0, "memori": 2.0, "process": 1.0}


def coverage(title: str, body: str) -> float:
    title_tokens, body_tokens = tokenize(title), tokenize(body)
    return passage_coverage(title_tokens, body_tokens, {*title_tokens, *body_tokens}, WEIGHTS, matching_stem)


def test_a_short_chunk_is_one_passage() -> None:
    assert coverage("", "sort processes by memory") == 1.0
    assert coverage("", "sort by memory") == 0.75


def test_a_long_chunk_counts_its_best_passage_and_its_heading_in_every_one() -> None:
    assert len(tokenize(FILLER)) > PASSAGE_TOKENS
    scattered = f"memory {FILLER} sort {FILLER} processes"
    assert coverage("", scattered) == 0.5  # memory, the heaviest, alone
    assert coverage("", f"{FILLER} sort processes memory {FILLER}") == 1.0
    assert coverage("Memory", scattered) == 0.75  # memory in the heading, plus sort or processes


@pytest.fixture(scope="module")
def fields_and_keys(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NotesProcess]:
    base: Path = tmp_path_factory.mktemp("proximity")
    scattered = " ".join(f"{word} {FILLER}" for word in ["memory", "sort", "processes"] * 2)
    write_note(base / "notes", "fields.md", f"# Fields\n\n{scattered}\n")
    write_note(base / "notes", "keys.md", f"# Keys\n\nPress M to sort the processes by memory. {FILLER * 3}\n")
    process = NotesProcess()
    try:
        process.initialize(str(base / "notes"), str(base / "work"))
        yield process
    finally:
        process.close()


def test_words_held_together_outrank_the_same_words_scattered_more_often(fields_and_keys: NotesProcess) -> None:
    found = fields_and_keys.search("sort processes by memory")["candidates"]
    assert [c["source_record_id"] for c in found] == ["keys.md", "fields.md"]


@dataclass
class _Hit:
    score: float
    share: float
    exact: bool = False


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0.01, 10), st.floats(0.05, 1), st.booleans()), max_size=40),
    st.integers(1, 25),
)
def test_rescoring_best_first_shows_what_rescoring_every_hit_would(rows, limit) -> None:
    def shown(hits: list[_Hit]) -> list[int]:
        order = sorted(range(len(hits)), key=lambda i: (not hits[i].exact, -hits[i].score, i))
        return order[:limit]

    every = [_Hit(score * share, share, exact) for score, share, exact in rows]
    lazy = [_Hit(score, share, exact) for score, share, exact in rows]
    rescore_by_passages(sorted(lazy, key=lambda h: (not h.exact, -h.score)), limit, lambda h: h.share)
    assert shown(lazy) == shown(every)
