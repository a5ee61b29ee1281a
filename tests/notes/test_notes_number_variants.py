"""A query word the notes never spell as written reaches its regular plural or singular."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adapter_sdk.lexical import number_variants

from .adapter_process import NotesProcess
from .conftest import write_note

NOTES = {
    "offsite/nightly.md": "# Offsite\n\nThe nightly backup goes to the storage box.\n",
    "retention.md": "# Retention\n\nOur retention policies keep twelve monthly archives.\n",
    "oddities.md": "# Oddities\n\nclas basi statu\n",
    "both.md": "# Both\n\nOne widget here.\n\n## More\n\nMany widgets there.\n",
}


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NotesProcess]:
    base = tmp_path_factory.mktemp("variants")
    for rel, text in NOTES.items():
        write_note(base / "notes", rel, text)
    proc = NotesProcess()
    try:
        proc.initialize(str(base / "notes"), str(base / "work"))
        yield proc
    finally:
        proc.close()


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("backups", "backup"),
        ("backup", "backups"),
        ("policy", "policies"),
        ("policies", "policy"),
        ("boxes", "box"),
        ("movies", "movie"),
    ],
)
def test_regular_number_variants(term: str, expected: str) -> None:
    assert expected in number_variants(term)


@pytest.mark.parametrize(("term", "stripped"), [("class", "clas"), ("basis", "basi"), ("status", "statu"),
                                                ("lens", "len"), ("news", "new")])
def test_no_singular_is_stripped_from_ss_is_us_lens_news(term: str, stripped: str) -> None:
    assert stripped not in number_variants(term)


@pytest.mark.parametrize("term", ["the", "which", "is", "us"])
def test_function_words_and_short_words_have_no_variants(term: str) -> None:
    assert number_variants(term) == []


def test_plural_query_reaches_a_singular_note(variants: NotesProcess) -> None:
    result = variants.search("backups")
    top = result["candidates"][0]
    assert top["source_record_id"] == "offsite/nightly.md"
    assert top["excerpt_kind"] == "matched"
    assert result["diagnostics"]["query_terms_number_variant"] == 1
    assert result["diagnostics"]["number_variants"] == {"backups": ["backup"]}


def test_singular_query_reaches_an_ies_plural(variants: NotesProcess) -> None:
    result = variants.search("retention policy")
    assert [c["source_record_id"] for c in result["candidates"]] == ["retention.md"]
    assert result["diagnostics"]["number_variants"] == {"policy": ["policies"]}


def test_variant_scores_half_but_counts_fully_for_relevance(variants: NotesProcess) -> None:
    as_written = variants.search("backup")["candidates"][0]
    as_variant = variants.search("backups")["candidates"][0]
    assert as_variant["local_score"] == pytest.approx(as_written["local_score"] / 2, rel=1e-4)
    assert as_variant["relevance"] == as_written["relevance"]


def test_variant_counts_toward_the_two_term_admission(variants: NotesProcess) -> None:
    result = variants.search("what is the policy about retention?")
    assert result["diagnostics"]["query_terms_required"] == 2
    assert [c["source_record_id"] for c in result["candidates"]] == ["retention.md"]


def test_term_the_notes_hold_as_written_is_not_widened(variants: NotesProcess) -> None:
    result = variants.search("widget")
    assert [c["locator"] for c in result["candidates"]] == ["notes:both.md#L1-L3"]
    assert "query_terms_number_variant" not in result["diagnostics"]


@pytest.mark.parametrize("term", ["class", "basis", "status"])
def test_ss_is_us_words_are_never_stripped(variants: NotesProcess, term: str) -> None:
    result = variants.search(term)
    assert result["candidates"] == []
    assert "query_terms_number_variant" not in result["diagnostics"]
