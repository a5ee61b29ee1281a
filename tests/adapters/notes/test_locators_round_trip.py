"""A printed locator is exact: ``recall expand`` takes back what ``recall query`` printed,
whatever the note's name, and a note's bare path names the whole note (real CLI)."""

from __future__ import annotations

import pytest

from tests.support.recall_home import RecallHome, write_note

# nested folders whose path is longer than any limit a locator's local part had before
LONG_DIRS = "/".join(f"{'deep-folder-' * 18}{level}" for level in range(3))
ODD_NAMES = [
    "colon/meeting about: budget.md",
    "spaced out/the budget  plan.md",
    "javascript:alert budget.md",
    f"{LONG_DIRS}/budget {'long-name-' * 20}.md",
]
WORDS = ["alpha", "bravo", "charlie", "delta"]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> RecallHome:
    assert len(ODD_NAMES[-1]) > 512  # longer than the cut locators used to suffer
    root = tmp_path_factory.mktemp("odd-names")
    notes = root / "notes"
    for word, name in zip(WORDS, ODD_NAMES, strict=True):
        write_note(notes, name, f"# Quarterly {word}\n\nThe {word} figures.\n")
    return RecallHome.build(root, notes={"notes": notes})


@pytest.mark.parametrize(("word", "name"), list(zip(WORDS, ODD_NAMES, strict=True)))
def test_a_printed_locator_is_the_notes_path_and_expands_back(home: RecallHome, word: str, name: str) -> None:
    run = home.recall("query", f"{word} figures", "--json")
    locator = run.json["results"][0]["locator"]
    assert locator == f"notes:{name}#L1-L3"

    printed = home.recall("query", f"{word} figures").stdout.splitlines()
    assert f"1. {locator}" in printed
    expanded = home.recall("expand", locator, "--json")
    assert expanded.code == 0, expanded.stderr
    assert expanded.json["content"] == f"# Quarterly {word}\n\nThe {word} figures."


def test_a_notes_bare_path_expands_to_the_whole_note(home: RecallHome) -> None:
    expanded = home.recall("expand", "notes:colon/meeting about: budget.md", "--detail", "full", "--json")

    assert expanded.code == 0, expanded.stderr
    assert expanded.json["content"] == "# Quarterly alpha\n\nThe alpha figures."
    assert expanded.json["provenance"] == "colon/meeting about: budget.md:L1-L3"


def test_a_bare_path_the_index_does_not_hold_is_expired_not_unknown(home: RecallHome) -> None:
    expanded = home.recall("expand", "notes:no/such note.md")

    assert expanded.code == 4 and "locator_expired" in expanded.stderr
