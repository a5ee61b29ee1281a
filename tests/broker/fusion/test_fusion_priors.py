from __future__ import annotations

import pytest
from fusion_builders import NOW, UIDS, cand, facts, run

from broker.errors import FusionError
from broker.fusion import FusionParams, fuse


def test_intent_prior_replaces_the_base_prior_for_its_class() -> None:
    out = run([cand("notes:a.md", 1)], query="braid",
              sources=[facts("notes", 1.0, intent={"identifier_query": 1.5})])
    prior = out.results[0].explanation.prior
    assert (prior.base, prior.effective, prior.rule) == (1.0, 1.5, "identifier_query")
    assert prior.intent == pytest.approx(0.5)
    assert out.results[0].score == pytest.approx(1.5 / 61)


def test_intent_prior_of_another_class_does_not_fire() -> None:
    out = run([cand("notes:a.md", 1)], query="restore drill checksum",
              sources=[facts("notes", 1.2, intent={"identifier_query": 1.5})])
    prior = out.results[0].explanation.prior
    assert (prior.effective, prior.intent, prior.rule) == (1.2, 0.0, None)


def test_prior_outside_its_range_is_an_error_not_clamped() -> None:
    with pytest.raises(FusionError, match="base_prior = 2.5"):
        run([cand("notes:a.md")], sources=[facts("notes", 2.5)])


def test_candidate_from_a_source_without_facts_is_an_error() -> None:
    with pytest.raises(FusionError, match="no source facts"):
        fuse([cand("notes:a.md")], {}, UIDS, FusionParams(query="x", evaluated_at=NOW))


def test_candidate_with_rank_below_one_is_an_error() -> None:
    unranked = cand("notes:a.md").model_copy(update={"local_rank": 0})  # admission refuses it
    with pytest.raises(FusionError, match="local_rank 0"):
        run([unranked])
