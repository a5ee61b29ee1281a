"""Retrieved text cannot act on a terminal or a reader: escapes, controls and schemes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from broker.sanitize import (
    _ALLOWED_SCHEMES,
    _ANSI,
    _BLOCKED_SCHEME,
    _CONTROLS,
    _OTHER_SCHEME,
    clean_line,
    clean_text,
)


def every_pattern_everywhere(text: str) -> str:
    """Each pattern applied to the whole text, in order: what clean_text must equal."""
    text = _ANSI.sub("", text)
    text = _CONTROLS.sub("", text)
    text = _BLOCKED_SCHEME.sub(lambda m: f"[blocked:{m.group(1).lower()}]", text)
    return _OTHER_SCHEME.sub(
        lambda m: m.group(0) if m.group(1).lower() in _ALLOWED_SCHEMES else f"[blocked:{m.group(1).lower()}]",
        text,
    )


def test_terminal_escapes_and_controls_are_removed() -> None:
    assert clean_text("red \x1b[31mALERT\x1b[0m bell\x07 \u202eevil") == "red ALERT bell evil"
    assert clean_text("title \x1b]0;owned\x07 here") == "title  here"
    assert clean_text("tab\tand\nnewline stay") == "tab\tand\nnewline stay"


def test_executing_and_local_schemes_are_blocked_wherever_they_appear() -> None:
    assert clean_text("click javascript:alert(1)") == "click [blocked:javascript]alert(1)"
    assert clean_text("see (JavaScript:void) or data:text/html") == (
        "see ([blocked:javascript]void) or [blocked:data]text/html"
    )
    assert clean_text("open file:///etc/passwd") == "open [blocked:file]///etc/passwd"
    assert clean_text("get ftp://host/x and ssh://h") == "get [blocked:ftp]host/x and [blocked:ssh]h"
    # the long s folds to s and the Kelvin sign to k, as the patterns' case folding has it
    assert clean_text("javaſcript:x") == every_pattern_everywhere("javaſcript:x")


def test_ordinary_text_links_and_times_are_kept() -> None:
    text = "Backups run at 02:00; the runbook: https://wiki.example/restore or mailto:ops@example.org"
    assert clean_text(text) == text
    assert clean_text("metadata: kept, because metadata is not the data: scheme") == (
        "metadata: kept, because metadata is not the [blocked:data] scheme"
    )


def test_a_line_field_is_folded_and_bounded() -> None:
    assert clean_line("two\nlines  and\x1b[1m bold", 200) == "two lines and bold"
    assert clean_line("x" * 300, 10) == "x" * 9 + "…"


_TRICKY = st.sampled_from(
    ["javascript", "JAVASCRIPT", "data", "file", "about", "jar", "ftp", "https", "mailto", "ſ", "K",
     ":", "://", "//", "\x1b[", "\x1b]", "\x07", "\x1b\\", "\u202e", "\t", "\n", " ", "-", "é", "02:00", "x"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_TRICKY, st.text(max_size=6)), max_size=24).map("".join))
def test_clean_text_is_every_pattern_applied_to_the_whole_text(text: str) -> None:
    assert clean_text(text) == every_pattern_everywhere(text)
