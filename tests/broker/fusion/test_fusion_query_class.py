from __future__ import annotations

import pytest

from adapter_sdk.lexical import is_stable_identifier, stable_identifiers
from broker.contracts import QueryClass
from broker.fusion import classify_query


def test_empty_query_has_no_class() -> None:
    assert classify_query("  ?! ") is None


def test_single_term_is_an_identifier_query() -> None:
    assert classify_query("braid") is QueryClass.identifier_query


def test_multi_term_prose_is_natural_language() -> None:
    assert classify_query("how do we restore backups") is QueryClass.natural_language


def test_stable_identifier_inside_a_sentence_makes_an_identifier_query() -> None:
    assert classify_query("What is the state of aaaa0001?") is QueryClass.identifier_query


def test_weak_version_word_keeps_a_sentence_natural_language() -> None:
    assert classify_query("notes about v2 rollout") is QueryClass.natural_language


@pytest.mark.parametrize(
    "token",
    ["spec.md", "docs/spec", "a\\b", "mail:thread", "me@host", "#42", "snake_case_name",
     "td-6c98c1", "REC-201", "aaaa0001", "x-1"],
)
def test_identifier_shapes_are_stable_identifiers(token: str) -> None:
    assert is_stable_identifier(token)


@pytest.mark.parametrize("token", ["v2", "h1", "well-known", "abc123", "a__b", "_lead_x", "plain"])
def test_prose_shapes_are_not_stable_identifiers(token: str) -> None:
    assert not is_stable_identifier(token)


def test_sentence_punctuation_is_trimmed_from_identifier_tokens() -> None:
    assert stable_identifiers("see spec.md. then (td-6c98c1)!") == ["spec.md", "td-6c98c1"]
