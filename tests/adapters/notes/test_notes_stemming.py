"""Query words and note words meet at their Porter stem, as the FTS5 index stores them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter_sdk.lexical import (
    STEMMED_FTS5_TOKENIZER,
    fold_diacritics,
    matching_stem,
    stemmed,
    term_keys,
    tokenize,
)
from adapter_sdk.relevance import lexical_relevance

from .adapter_process import NotesProcess
from .conftest import write_note

NOTES = {
    "offsite/nightly.md": "# Offsite\n\nThe nightly backup goes to the storage box.\n",
    "retention.md": "# Retention\n\nOur retention policies keep twelve monthly archives.\n",
    "both.md": "# Both\n\nOne widget here.\n\n## More\n\nMany widgets there.\n",
    "cafe.md": "# Café\n\nThe café opens at eight.\n",
    "proxy.md": "# Proxy\n\nThe http proxy forwards plain requests on port 3128.\n",
    "tls.md": "# Certificates\n\nThe https endpoint renews its certificate monthly.\n",
    "tunnel.md": "# Tunnel\n\nThe ipv6 tunnel and the ipv4 address of the gateway.\n",
}

_WORDS = st.text(alphabet="abcdeilmnorstuvyzéøß", min_size=1, max_size=14)
_SUFFIXES = st.sampled_from(
    ["", "s", "es", "ies", "sses", "ed", "eed", "ing", "ly", "ational", "izer", "bli", "logi",
     "ousli", "iveness", "ical", "ness", "ful", "ement", "ion", "ate", "ize", "e", "ll"]
)


def _index_stems(words: list[str]) -> list[str]:
    """Each word's term as an FTS5 table declared with the stemmed tokenizer stores it."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '{STEMMED_FTS5_TOKENIZER}')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    conn.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", list(enumerate(words)))
    found = {doc: term for term, doc in conn.execute("SELECT term, doc FROM v")}
    return [found[i] for i in range(len(words))]


_ENDINGS = st.sampled_from(["", "1", "42", "v2", "x9"])  # a digit ending leaves the word as is


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_WORDS, _SUFFIXES, _ENDINGS).map("".join), min_size=1, max_size=200))
def test_stemmed_agrees_with_the_fts5_porter_index(words: list[str]) -> None:
    words = [t for w in words for t in tokenize(w)]
    if words:
        assert [stemmed(w) for w in words] == _index_stems(words)


@pytest.mark.parametrize(
    ("spellings", "stem"),
    [(("backup", "backups"), "backup"), (("policy", "policies"), "polici"),
     (("run", "runs", "running"), "run"), (("box", "boxes"), "box"), (("nightly",), "nightli")],
)
def test_inflections_share_one_stem(spellings: tuple[str, ...], stem: str) -> None:
    assert {stemmed(s) for s in spellings} == {stem}


def test_diacritics_fold_as_the_index_folds_them() -> None:
    assert [fold_diacritics(w) for w in ("café", "łódź", "ø", "straße")] == ["cafe", "łodz", "ø", "straße"]


def test_words_sharing_a_stem_are_one_query_term() -> None:
    assert list(term_keys(["backup", "backups", "restore"], stemmed).values()) == ["backup", "restore"]


def test_relevance_counts_a_term_matched_by_its_stem() -> None:
    record = tokenize("nightly backups go offsite")
    assert lexical_relevance(["backup"], record, key=stemmed) == lexical_relevance(["backups"], record, key=stemmed) > 0
    assert lexical_relevance(["backup"], record) == 0


@pytest.fixture(scope="module")
def stems(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NotesProcess]:
    base = tmp_path_factory.mktemp("stems")
    for rel, text in NOTES.items():
        write_note(base / "notes", rel, text)
    proc = NotesProcess()
    try:
        proc.initialize(str(base / "notes"), str(base / "work"))
        yield proc
    finally:
        proc.close()


def test_plural_query_reaches_a_singular_note(stems: NotesProcess) -> None:
    top = stems.search("backups")["candidates"][0]
    assert top["source_record_id"] == "offsite/nightly.md"
    assert top["excerpt_kind"] == "matched"


def test_singular_query_reaches_an_ies_plural(stems: NotesProcess) -> None:
    result = stems.search("retention policy")
    assert [c["source_record_id"] for c in result["candidates"]] == ["retention.md"]


def test_spellings_of_one_stem_score_and_relate_alike(stems: NotesProcess) -> None:
    singular = stems.search("backup")["candidates"][0]
    plural = stems.search("backups")["candidates"][0]
    assert (plural["local_score"], plural["relevance"]) == (singular["local_score"], singular["relevance"])


def test_inflection_counts_toward_the_two_term_admission(stems: NotesProcess) -> None:
    result = stems.search("what is the policy about retention?")
    assert result["diagnostics"]["query_terms_required"] == 2
    assert [c["source_record_id"] for c in result["candidates"]] == ["retention.md"]


def test_a_term_finds_every_spelling_of_its_stem(stems: NotesProcess) -> None:
    result = stems.search("widget")
    assert [c["locator"] for c in result["candidates"]] == ["notes:both.md#L1-L3", "notes:both.md#L5-L7"]


def test_unaccented_query_finds_accented_word(stems: NotesProcess) -> None:
    result = stems.search("cafe opens")
    assert [c["source_record_id"] for c in result["candidates"]] == ["cafe.md"]
    assert result["candidates"][0]["excerpt"] == "The café opens at eight."


def test_a_protocol_name_is_not_stemmed_into_another_one(stems: NotesProcess) -> None:
    assert stemmed("https") == "http"  # as the index stores it
    for query in ("https", "https endpoint"):
        result = stems.search(query)
        assert [c["source_record_id"] for c in result["candidates"]] == ["tls.md"], query
    assert [c["source_record_id"] for c in stems.search("http")["candidates"]] == ["proxy.md"]


def test_a_code_with_a_digit_is_matched_as_spelled(stems: NotesProcess) -> None:
    top = stems.search("ipv6 gateway")["candidates"][0]
    assert top["source_record_id"] == "tunnel.md"
    assert matching_stem("ipv6s") == "ipv6s" and matching_stem("backups") == "backup"
