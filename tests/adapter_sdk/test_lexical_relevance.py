"""The shared tokenizer's markup rule and the shared relevance definition's term weights."""

from __future__ import annotations

import math

import pytest

from adapter_sdk.lexical import analyze_query, stemmed, tokenize, unmark_words
from adapter_sdk.relevance import (
    decisive_terms,
    lexical_relevance,
    relevance,
    term_weight,
    weighted_coverage,
)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("[s]ave the file", ["save", "the", "file"]),
        ("Sa[v]e", ["save"]),
        ("E[x]it and [Q]uit", ["exit", "and", "quit"]),
        ("re**start**ing", ["restarting"]),
        ("**re**start", ["restart"]),
        ("Sa*v*e", ["save"]),
        ("Sa<u>v</u>e as", ["save", "as"]),
    ],
)
def test_markup_marking_letters_inside_a_word_leaves_the_word_whole(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("- [x] done", ["x", "done"]),
        ("items[i] = 0", ["items", "i", "0"]),
        ("x*y", ["x", "y"]),
        ("**Bold** word", ["bold", "word"]),
        ("[link](target)", ["link", "target"]),
        ("max_line_length", ["max", "line", "length"]),
    ],
)
def test_markup_between_words_still_separates_them(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_text_without_markup_characters_is_returned_as_is() -> None:
    text = "plain words only"
    assert unmark_words(text) is text


def test_term_weight_is_bm25_idf_and_largest_for_an_absent_term() -> None:
    assert term_weight(10, 100) == pytest.approx(math.log(1 + 90.5 / 10.5))
    assert term_weight(0, 100) > term_weight(1, 100) > term_weight(50, 100) > term_weight(100, 100) > 0


def test_coverage_counts_each_term_by_its_weight() -> None:
    weights = {"gitignor": 3.0, "format": 0.5, "handl": 0.5}
    assert weighted_coverage({"gitignor"}, weights) == pytest.approx(0.75)
    assert weighted_coverage({"format", "handl"}, weights) == pytest.approx(0.25)
    assert weighted_coverage(set(), weights) == 0.0


def test_a_term_is_decisive_when_it_carries_half_the_weight() -> None:
    assert decisive_terms({"gitignor": 3.0, "format": 0.5, "handl": 0.5}) == {"gitignor"}
    assert decisive_terms({"a": 1.0, "b": 1.0, "c": 1.0}) == set()
    assert decisive_terms({}) == set()


def test_weighted_relevance_prefers_the_record_holding_the_informative_term() -> None:
    weights = {"gitignor": 3.0, "format": 0.5, "handl": 0.5}
    rare = tokenize("paths in gitignore are skipped")
    common = tokenize("the formatter handles paths")
    query = ["gitignore", "formatter", "handle"]
    assert lexical_relevance(query, rare, stemmed, weights) > lexical_relevance(query, common, stemmed, weights)
    # unweighted, the record with two of three terms would win
    assert lexical_relevance(query, common, stemmed) > lexical_relevance(query, rare, stemmed)


def test_unit_weights_are_the_plain_share_of_terms() -> None:
    record = tokenize("nightly backups go offsite")
    terms = ["backup", "restore"]
    assert lexical_relevance(terms, record, stemmed, {"backup": 1.0, "restor": 1.0}) == (
        lexical_relevance(terms, record, stemmed)
    ) == relevance(1, 2, 1, 4)


def test_full_width_and_compatibility_letters_tokenize_as_plain_ones() -> None:
    from adapter_sdk.lexical import tokenize

    assert tokenize("ＰｏｓｔｇｒｅＳＱＬ １６ ﬁle") == tokenize("PostgreSQL 16 file")


def test_each_cjk_character_is_a_token_so_part_of_a_run_matches() -> None:
    from adapter_sdk.lexical import tokenize

    assert tokenize("数据库备份恢复") == ["数", "据", "库", "备", "份", "恢", "复"]
    assert set(tokenize("备份")) <= set(tokenize("数据库备份恢复"))
    assert tokenize("Postgres 備份 plan") == ["postgres", "備", "份", "plan"]


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("short " + "x" * 64 + " words", ["short", "x" * 64, "words"]),
        ("short " + "x" * 65 + " words", ["short", "words"]),
        ("y" * 200, []),
        ("", []),
    ],
)
def test_tokens_longer_than_64_characters_are_dropped_and_the_rest_kept(
    text: str, tokens: list[str]
) -> None:
    assert tokenize(text) == tokens


@pytest.mark.parametrize(
    ("question", "content"),
    [
        ("what colour are a flamingo\u2019s feathers", ("colour", "flamingo", "feathers")),
        ("why doesn't the backup run", ("doesn", "backup", "run")),
        ("can't restart nginx", ("restart", "nginx")),
        ("I'm stuck; we've tried what they're saying, you'll see, I'd guess", ("stuck", "tried", "saying", "see", "guess")),
        ("rock'n'roll o'clock", ("rock", "n", "roll", "o", "clock")),
    ],
)
def test_a_clitic_is_no_word_of_the_question(question: str, content: tuple[str, ...]) -> None:
    assert analyze_query(question).content_terms == content
