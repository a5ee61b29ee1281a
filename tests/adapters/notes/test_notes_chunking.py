"""Chunking, front matter and excerpt windows, tested directly."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import example, given, settings
from hypothesis import strategies as st

from adapter_sdk.lexical import tokenize
from adapter_sdk.markdown.chunking import PREVIEW_CHARS, parse_note, split_lines
from adapter_sdk.markdown.front_matter import front_matter_span, parse_front_matter
from adapters.notes.excerpts import matched_window, terms_in

NOTE = """\
Preamble line.

# Title

Intro.

## Install

```sh
# not a heading
```

### Verify ###

Check it.


"""


def test_chunks_split_at_headings_with_line_ranges() -> None:
    note = parse_note("guide.md", NOTE)
    assert [(c.start_line, c.end_line, c.heading) for c in note.chunks] == [
        (1, 1, ""),
        (3, 5, "Title"),
        (7, 11, "Install"),
        (13, 15, "Verify"),
    ]


def test_chunk_title_is_the_heading_path_under_the_document_title() -> None:
    note = parse_note("guide.md", NOTE)
    assert note.title == "Title"
    assert [c.title for c in note.chunks] == ["Title", "Title", "Title > Install", "Title > Install > Verify"]
    assert note.chunks[3].heading_path == ("Title", "Install", "Verify")


def test_front_matter_title_replaces_the_first_heading_in_titles() -> None:
    note = parse_note("guide.md", "---\ntitle: Guide\n---\n# Title\n\n## Step\n\nx\n")
    assert [c.title for c in note.chunks] == ["Guide", "Guide > Step"]
    assert note.chunks[0].start_line == 4


def test_first_heading_the_title_hides_is_indexed_with_its_body() -> None:
    note = parse_note("role.md", "---\ntitle: SRE role\n---\n# Site reliability engineer\n\nPay band.\n")
    assert note.chunks[0].title == "SRE role"
    assert note.chunks[0].indexed_body == "Site reliability engineer\n\nPay band."
    assert note.chunks[0].preview == "Pay band."


def test_first_heading_restating_the_title_is_not_indexed_twice() -> None:
    note = parse_note("run.md", "---\ntitle: Runbook - disk full\n---\n# Runbook: disk full\n\nx\n")
    assert note.chunks[0].indexed_body == note.chunks[0].body


def test_note_without_heading_is_titled_by_its_file_stem() -> None:
    assert parse_note("a/plain-note.md", "just text\n").title == "plain-note"


def test_text_notes_split_into_blocks_at_blank_lines() -> None:
    text = "".join(f"line {i}\n" + ("\n" if i % 10 == 9 else "") for i in range(60))
    chunks = parse_note("log.txt", text).chunks
    assert len(chunks) == 2
    assert chunks[0].start_line == 1
    assert chunks[0].end_line == 43  # first blank line after 40 lines of text
    assert chunks[1].end_line == len(split_lines(text.rstrip("\n")))


def test_seven_hashes_and_hashtags_are_not_headings() -> None:
    note = parse_note("n.md", "####### deep\n#tag\ntext\n")
    assert len(note.chunks) == 1


def test_preview_is_the_first_paragraph() -> None:
    chunk = parse_note("n.md", "# T\n\nfirst para\ncontinues\n\nsecond\n").chunks[0]
    assert chunk.preview == "first para continues"


def test_thematic_breaks_are_not_front_matter() -> None:
    assert front_matter_span(["---", "just a rule", "---", "text"]) == 0
    assert front_matter_span(["---", "title: x", "---", "text"]) == 3


def test_front_matter_dates_are_utc_days() -> None:
    front = parse_front_matter("valid_from: 2024-02-01\nvalid_until: '2024-03-31'")
    assert front.valid_from == datetime(2024, 2, 1, tzinfo=UTC)
    assert front.valid_to == datetime(2024, 3, 31, 23, 59, 59, 999999, tzinfo=UTC)


def test_front_matter_single_values_become_lists() -> None:
    front = parse_front_matter("aliases: Restore runbook\ntags: '#backup'\nsupersedes: '[[old-note]]'")
    assert front.aliases == ["Restore runbook"]
    assert front.tags == ["backup"]
    assert front.supersedes == ["old-note"]


def test_front_matter_of_the_wrong_shape_is_a_problem_not_a_crash() -> None:
    front = parse_front_matter("title: [a, b]\nvalid_until: soon\n")
    assert front.title is None
    assert len(front.problems) == 2


def test_unparseable_front_matter_names_the_line() -> None:
    front = parse_front_matter("title: ok\naliases: [unclosed\n")
    assert front.problems and "not valid YAML" in front.problems[0]


def test_excerpt_window_covers_the_most_query_terms() -> None:
    lines = ["alpha " * 70, "", "beta and gamma together", "delta"]
    assert matched_window(lines, {"alpha", "beta", "gamma", "delta"}) == "beta and gamma together delta"


def test_excerpt_window_is_none_without_a_match() -> None:
    assert matched_window(["nothing here"], {"absent"}) is None


def test_long_line_is_cut_around_its_first_match() -> None:
    line = "filler " * 100 + "needle " + "filler " * 100
    window = matched_window([line], {"needle"})
    assert window.startswith("…") and window.endswith("…")
    assert "needle" in window
    assert len(window) <= 400


def test_preview_of_a_long_first_paragraph_is_clipped_where_its_joined_lines_pass_the_limit() -> None:
    """A first line of exactly PREVIEW_CHARS followed by more of the paragraph is clipped:
    the paragraph, not its first line, is what must fit."""
    first = "a" * (PREVIEW_CHARS - 1) + "b"
    chunk = parse_note("n.md", f"# H\n\n{first}\n  more words\n\nlater paragraph\n").chunks[0]
    assert chunk.preview == first[: PREVIEW_CHARS - 1] + "…"
    exact = parse_note("n.md", f"# H\n\n{first}\n\nlater paragraph\n").chunks[0]
    assert exact.preview == first
    lines = "\n".join(f"line{n} " + "w" * 50 for n in range(40))
    many = parse_note("n.md", f"# H\n\n{lines}\n").chunks[0]
    joined = " ".join(f"line{n} " + "w" * 50 for n in range(40))
    assert many.preview == joined[: PREVIEW_CHARS - 1].rstrip() + "…"


@settings(max_examples=300, deadline=None)
@example(row="re**start** the job", terms={"restart"})
@example(row="[s]ave it", terms={"save"})
@example(row="Sa<u>v</u>e it", terms={"save"})
@example(row="the \ufb01le", terms={"file"})  # the ligature, as NFKC folds it
@given(
    row=st.text(alphabet=st.sampled_from("abcDEF xyz*[]<>/_-é1 "), max_size=40),
    terms=st.sets(st.text(alphabet="abcdefxyz1é", min_size=1, max_size=4), max_size=3),
)
def test_a_row_skipped_untokenized_holds_none_of_the_terms(row: str, terms: set[str]) -> None:
    """The excerpt's shortcut (a plain row holding no term as a substring is not tokenized)
    finds exactly the terms tokenizing the row would: markup inside words and non-ASCII
    text are tokenized as before."""
    assert terms_in(row, terms) == set(tokenize(row)) & terms


def test_an_escaped_lone_surrogate_in_front_matter_is_replaced_and_reported() -> None:
    """YAML's "\\udce9" escape makes a string no UTF-8 text can hold; a note holding one
    stopped every later note of its folder being indexed."""
    front = parse_front_matter('title: "caf\\udce9 menu"\ntags: [espresso, "\\ud800"]\n')
    assert (front.title, front.tags) == ("caf\ufffd menu", ["espresso", "\ufffd"])
    assert front.problems == [
        "'title' holds an escaped lone surrogate, which is not text; shown as U+FFFD",
        "'tags' holds an escaped lone surrogate, which is not text; shown as U+FFFD",
    ]
    "".join([front.title, *front.tags]).encode("utf-8")  # what the index writes
