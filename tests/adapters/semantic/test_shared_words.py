"""Whether a chunk's note holds a word of the question, stemmed as the notes index stems."""

from __future__ import annotations

import hashlib
from pathlib import Path

from adapters.semantic.indexed_chunk import IndexedChunk
from adapters.semantic.note_bytes import NoteReader
from adapters.semantic.shared_words import NoteWords, question_terms


def _chunk(root: Path, path: str, text: str) -> IndexedChunk:
    (root / path).write_text(text)
    digest = hashlib.sha256(text.encode()).hexdigest()
    return IndexedChunk(path, 1, 3, "Restore drills", "We rehearse recovery monthly.", digest)


def test_a_word_counts_in_any_of_its_spellings_anywhere_in_the_note(tmp_path: Path) -> None:
    # the chunk itself holds no word of the question; another section of its note does
    chunk = _chunk(tmp_path, "drills.md", "# Restore drills\n\nWe rehearse recovery monthly.\n\n## Log\n\nBackups run nightly.\n")
    notes = NoteWords(NoteReader(str(tmp_path)))
    assert notes.shares_a_word(chunk, question_terms("how is a backup checked"))
    assert not notes.shares_a_word(chunk, question_terms("which bird sings at dawn"))


def test_function_words_of_the_question_do_not_count() -> None:
    assert question_terms("what is the answer to it") == frozenset({"answer"})


def test_a_note_changed_since_it_was_embedded_is_judged_by_its_title_and_preview(tmp_path: Path) -> None:
    chunk = _chunk(tmp_path, "drills.md", "# Restore drills\n\nWe rehearse recovery monthly.\n\nBackups run nightly.\n")
    (tmp_path / "drills.md").write_text("# Something else\n\nBackups run nightly.\n")
    notes = NoteWords(NoteReader(str(tmp_path)))
    assert not notes.shares_a_word(chunk, question_terms("backups"))
    assert notes.shares_a_word(chunk, question_terms("monthly recovery"))


def test_a_word_only_in_a_link_target_or_url_is_not_shared(tmp_path: Path) -> None:
    # a page about a routing daemon named after a bird: its documentation URL carries "v=30"
    text = "# bird\n\n> Routing daemon.\n> More information: <https://bird.example.net/?get_doc&v=30&f=geese.html>.\n"
    chunk = _chunk(tmp_path, "bird.md", text)
    notes = NoteWords(NoteReader(str(tmp_path)))
    assert not notes.shares_a_word(chunk, question_terms("why do geese fly in formation"))
    assert notes.shares_a_word(chunk, question_terms("which routing daemon"))


def test_a_single_letter_or_digit_of_the_question_vouches_for_nothing(tmp_path: Path) -> None:
    chunk = _chunk(tmp_path, "v.md", "# v\n\nCompile a file: `v run -v file.v`, version 2.\n")
    notes = NoteWords(NoteReader(str(tmp_path)))
    assert question_terms("why do geese fly in a v formation 2") == frozenset({"gees", "fly", "format"})
    assert not notes.shares_a_word(chunk, question_terms("why do geese fly in a v formation 2"))


def test_a_clitic_of_the_question_is_no_word_of_it(tmp_path: Path) -> None:
    # "flamingo's" would otherwise leave an "s", which "it's" in any note holds
    chunk = _chunk(tmp_path, "blahaj.md", "# blahaj\n\nIt's a shark: print one in your terminal's colours.\n")
    notes = NoteWords(NoteReader(str(tmp_path)))
    assert question_terms("the flamingo's feathers") == frozenset({"flamingo", "feather"})
    assert not notes.shares_a_word(chunk, question_terms("the flamingo's feathers"))


def test_a_neighbourhood_shares_a_word_when_any_of_its_notes_does(tmp_path: Path) -> None:
    bird = _chunk(tmp_path, "bird.md", "# bird\n\nBIRD Internet Routing Daemon.\n")
    garden = _chunk(tmp_path, "garden.md", "# Garden\n\nSongbirds nest in the hedge by the shed.\n")
    notes = NoteWords(NoteReader(str(tmp_path)))
    assert not notes.any_shares([bird], question_terms("moulting of songbirds"))
    assert notes.any_shares([bird, garden], question_terms("moulting of songbirds"))
