from __future__ import annotations

from broker.render.tokens import estimate_tokens


def test_empty_text_costs_nothing() -> None:
    assert estimate_tokens("") == 0


def test_any_nonempty_text_costs_at_least_one_token() -> None:
    assert estimate_tokens("a") == 1


def test_four_characters_are_one_token_and_the_fifth_starts_another() -> None:
    assert (estimate_tokens("abcd"), estimate_tokens("abcde")) == (1, 2)


def test_characters_are_counted_not_bytes() -> None:
    assert estimate_tokens("ééééé") == 2
