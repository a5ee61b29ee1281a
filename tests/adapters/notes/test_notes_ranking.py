"""What admits and orders a note chunk: decisive words, informative words, named pages,
and words written with markup inside them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .adapter_process import NotesProcess
from .conftest import write_note

# Every note talks about the formatter and how it handles things, so those words are
# common (low IDF); "gitignore" and "kakoune" are rare, decisive words.
FILLER = {
    f"guide/topic-{n}.md": f"# Topic {n}\n\nHow the formatter handles case {n}: the formatter"
    f" handles it in place and reports what it changed.\n"
    for n in range(12)
}
NOTES = {
    **FILLER,
    "discovery.md": "# Discovery\n\n## .gitignore\n\nPaths listed in .gitignore are skipped.\n",
    "editors/kakoune.md": "# Kakoune\n\nAdd a hook to your kakrc, then run :format.\n",
    "editors/overview.md": "# Editor overview\n\nVim, Emacs and Kakoune have plugins. Kakoune users"
    " add a hook; Kakoune hooks run on save. Emacs users install a package; Vim users a plugin.\n",
    "menus.md": "# Menus\n\nChoose [S]ave to keep the file, or Sa[v]e **A**s to copy it.\n",
    "themes.md": "# Themes\n\nIt's the formatter's colour scheme: set it in your terminal's settings.\n",
}


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NotesProcess]:
    base = tmp_path_factory.mktemp("ranking")
    for rel, text in NOTES.items():
        write_note(base / "notes", rel, text)
    proc = NotesProcess()
    try:
        proc.initialize(str(base / "notes"), str(base / "work"))
        yield proc
    finally:
        proc.close()


def _records(result: dict) -> list[str]:
    return [c["source_record_id"] for c in result["candidates"]]


def test_one_decisive_word_admits_a_chunk_a_prose_question_otherwise_needs_two_for(
    notes: NotesProcess,
) -> None:
    result = notes.search("how does the formatter handle gitignore")
    assert result["diagnostics"]["query_terms_required"] == 2
    assert result["diagnostics"]["query_terms_decisive"] == ["gitignore"]
    assert _records(result)[0] == "discovery.md"


def test_the_informative_word_outweighs_the_generic_ones_in_relevance(notes: NotesProcess) -> None:
    result = notes.search("how does the formatter handle gitignore")
    by_record = {c["source_record_id"]: c["relevance"] for c in result["candidates"]}
    assert by_record["discovery.md"] > max(v for k, v in by_record.items() if k.startswith("guide/"))
    weights = result["diagnostics"]["query_term_weights"]
    assert weights["gitignore"] > weights["formatter"]


def test_a_common_word_alone_admits_nothing_for_a_question_about_something_absent(
    notes: NotesProcess,
) -> None:
    result = notes.search("what is the sourdough hydration for the formatter?")
    assert "query_terms_decisive" not in result["diagnostics"]
    assert result["candidates"] == []


def test_a_clitic_of_the_question_is_no_second_word_to_admit_a_chunk_by(notes: NotesProcess) -> None:
    # "flamingo's" is "flamingo" and a clitic, not "flamingo" and "s": the theme note holds
    # "colour" and, through "it's", an "s", which would make two of the question's words
    result = notes.search("what colour are a flamingo's feathers")
    assert result["candidates"] == []
    assert "s" not in result["diagnostics"]["query_term_weights"]
    assert _records(notes.search("what colour is the formatter's scheme"))[0] == "themes.md"


def test_the_page_named_for_the_term_ranks_above_pages_that_mention_it_more(
    notes: NotesProcess,
) -> None:
    result = notes.search("kakoune")
    assert _records(result)[:2] == ["editors/kakoune.md", "editors/overview.md"]
    named, variant = result["candidates"][:2]
    assert named["relevance"] > variant["relevance"]


def test_markup_inside_a_word_does_not_split_it(notes: NotesProcess) -> None:
    result = notes.search("save as")
    assert _records(result)[0] == "menus.md"
    top = result["candidates"][0]
    assert top["excerpt_kind"] == "matched"
    assert "Sa[v]e **A**s" in top["excerpt"]


def test_chunks_holding_every_term_fill_the_pool_before_chunks_holding_some(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A corpus where every term is common: the pool is the chunks holding all of them,
    and a chunk dense in two of the three is not ranked; with few such chunks, the
    admission rule still brings in chunks holding some of the terms."""
    base = tmp_path_factory.mktemp("tiers")
    for n in range(70):
        write_note(base / "many", f"ops/run-{n}.md", f"# Run {n}\n\nThe relay drill checks the vault.\n")
    write_note(base / "many", "dense.md", "# Dense\n\nrelay relay relay drill drill drill relay.\n")
    for n in range(3):
        write_note(base / "few", f"ops/run-{n}.md", f"# Run {n}\n\nThe relay drill checks the vault.\n")
    write_note(base / "few", "dense.md", "# Dense\n\nrelay relay relay drill drill drill relay.\n")
    for folder, tier in (("many", "every_term"), ("few", "admission_rule")):
        proc = NotesProcess()
        try:
            proc.initialize(str(base / folder), str(base / f"work-{folder}"))
            result = proc.search("relay drill vault", limit=20)
        finally:
            proc.close()
        assert result["diagnostics"]["admitted_by"] == tier
        assert ("dense.md" in _records(result)) is (tier == "admission_rule")


def test_term_counts_are_kept_per_generation_for_the_next_process(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Counting the chunks of a common term walks its whole posting list; a search keeps
    the counts of its index generation, the next adapter process answers from them, and
    a changed folder (a new generation) counts afresh."""
    import sqlite3

    base = tmp_path_factory.mktemp("kept")
    for n in range(8):
        write_note(base / "notes", f"ops/run-{n}.md", f"# Run {n}\n\nThe relay drill checks the vault.\n")
    index = base / "work" / "notes-index.sqlite3"

    def weights() -> dict[str, float]:
        proc = NotesProcess()
        try:
            proc.initialize(str(base / "notes"), str(base / "work"))
            # the counts are a cache, not kept while the index is written: search it at rest
            proc.refresh()
            return proc.search("relay drill", limit=5)["diagnostics"]["query_term_weights"]
        finally:
            proc.close()

    counted = weights()
    with sqlite3.connect(index) as db:
        generation = db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0]
        kept = db.execute("SELECT generation, term, chunks FROM term_chunks ORDER BY term").fetchall()
        assert kept == [(generation, "drill", 8), (generation, "relai", 8)]
        db.execute("UPDATE term_chunks SET chunks = 1 WHERE term = 'relai'")  # as if counted so
    from_kept = weights()
    assert from_kept["relay"] > counted["relay"] and from_kept["drill"] == counted["drill"]

    write_note(base / "notes", "ops/run-9.md", "# Run 9\n\nA relay.\n")
    assert weights()["relay"] == pytest.approx(counted["relay"], abs=0.2)
    with sqlite3.connect(index) as db:
        now = db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0]
        assert now != generation
        assert {row[0] for row in db.execute("SELECT generation FROM term_chunks")} == {now}
