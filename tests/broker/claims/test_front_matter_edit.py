"""The successor's front matter gains one reference and nothing else changes."""

from __future__ import annotations

import pytest

from broker.claims import ClaimRefused
from broker.claims.front_matter import add_supersedes


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("# Title\n\nBody.\n", "---\nsupersedes: old.md\n---\n# Title\n\nBody.\n"),
        ("---\ntitle: New\n---\n# New\n", "---\ntitle: New\nsupersedes: old.md\n---\n# New\n"),
        ("---\ntitle: New\nsupersedes: a.md  \n---\n", "---\ntitle: New\nsupersedes: [a.md, old.md]\n---\n"),
        ("---\nsupersedes: [a.md]\ntags: [x]\n---\n", "---\nsupersedes: [a.md, old.md]\ntags: [x]\n---\n"),
        ("---\nsupersedes:\n    - a.md\ntags: x\n---\n", "---\nsupersedes:\n    - a.md\n    - old.md\ntags: x\n---\n"),
        ("---\r\ntitle: New\r\n---\r\nBody\r\n", "---\r\ntitle: New\r\nsupersedes: old.md\r\n---\r\nBody\r\n"),
        # one pasted CRLF line in an LF note: the note is still LF, its front matter still found
        ("---\ntitle: New\nvalid_until: 2030-01-01\n---\nPasted\r\nBody\n",
         "---\ntitle: New\nvalid_until: 2030-01-01\nsupersedes: old.md\n---\nPasted\r\nBody\n"),
        ("---\ntitle: New\r\n---\nBody\n", "---\ntitle: New\r\nsupersedes: old.md\n---\nBody\n"),
        ("# Title\r\nBody\n", "---\r\nsupersedes: old.md\r\n---\r\n# Title\r\nBody\n"),
        ("\ufeff# Title\n", "\ufeff---\nsupersedes: old.md\n---\n# Title\n"),
    ],
)
def test_one_reference_is_added_in_the_layout_already_there(before, after):
    assert add_supersedes(before, "old.md", "notes:new.md") == after


def test_a_reference_already_named_needs_no_edit():
    assert add_supersedes("---\nsupersedes: [old]\n---\n", "old.md", "notes:new.md") is None


def test_a_reference_that_needs_quoting_is_quoted():
    edited = add_supersedes("---\ntitle: x\n---\n", "notes: #1.md", "notes:new.md")
    assert edited == '---\ntitle: x\nsupersedes: "notes: #1.md"\n---\n'


def test_a_layout_that_would_change_other_keys_is_refused():
    tricky = "---\nsupersedes: a.md # the old one\n---\n"
    with pytest.raises(ClaimRefused, match="by hand"):
        add_supersedes(tricky, "old.md", "notes:new.md")


def test_front_matter_that_is_not_yaml_is_refused():
    with pytest.raises(ClaimRefused, match="not valid YAML"):
        add_supersedes("---\ntitle: [unclosed\n---\n", "old.md", "notes:new.md")


def test_the_edited_note_keeps_its_own_front_matter_as_the_notes_adapter_reads_it():
    from adapter_sdk.markdown.chunking import parse_note

    note = "---\ntitle: Backups run with restic\nvalid_until: 2030-01-01\n---\n# Backups\r\nrestic.\n"
    before, after = parse_note("new.md", note), parse_note("new.md", add_supersedes(note, "old.md", "n"))
    assert (after.title, after.front.valid_to, after.front.supersedes) == (
        "Backups run with restic", before.front.valid_to, ["old.md"])
    assert [c.body for c in after.chunks] == [c.body for c in before.chunks]
