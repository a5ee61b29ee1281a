"""The committed packs: each run passes its gates and regresses nothing against its baseline.

This is the CI regression gate. When a change moves a metric on purpose,
re-record the baseline in the same change (see eval/README.md):

    recall eval run --pack eval/packs/<pack> --out eval/baselines/<pack>
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from broker.evaluation.abstain_pool import leaked_words, pool_cases
from broker.evaluation.artifacts import read_run
from broker.evaluation.compare import compare_runs
from broker.evaluation.execute import EvalRun, run_pack
from broker.evaluation.human_text import comparison_text
from broker.evaluation.pack import load_pack

EVAL = Path(__file__).resolve().parents[3] / "eval"
# packs of judged questions over a corpus, each with a must-abstain pool kept outside it
# and split into a tuning half and a held-out half
JUDGED_PACKS = ("retrieval", "black-docs", "man-pages", "debian-policy", "python-docs", "tldr-pages")
PACKS = ("smoke", *JUDGED_PACKS)

# Shapes the smoke pack exists to cover; each must stay tagged on some case.
SMOKE_SHAPES = {
    "answered", "abstained", "degraded", "failed", "exact-promotion", "duplicate-view", "lineage",
    "suppression", "truncation", "superseded", "expired", "completed", "not-yet-valid", "as-of",
}


@pytest.fixture(scope="module", params=PACKS)
def pack_run(request: pytest.FixtureRequest) -> tuple[str, EvalRun]:
    return request.param, run_pack(load_pack(EVAL / "packs" / request.param))


def test_pack_passes_its_gates(pack_run):
    name, result = pack_run
    failed = [g for g in result.run["gates"] if g["status"] == "fail"]
    assert not failed, f"{name}: {failed}"


def test_pack_regresses_nothing_against_its_baseline(pack_run):
    name, result = pack_run
    baseline, baseline_cases = read_run(EVAL / "baselines" / name)
    comparison = compare_runs(baseline, result.run, baseline_cases, result.cases)
    assert comparison.status == "pass", comparison_text(comparison)


def test_smoke_pack_covers_every_outcome_and_failure_shape():
    tags = {tag for case in load_pack(EVAL / "packs" / "smoke").cases for tag in case.tags}
    assert SMOKE_SHAPES <= tags, SMOKE_SHAPES - tags


@pytest.mark.parametrize("name", JUDGED_PACKS)
def test_judged_pack_has_enough_judged_and_paraphrased_questions(name):
    pack = load_pack(EVAL / "packs" / name)
    judged = [c for c in pack.cases if c.expected_behavior == "answer" and pack.judgments.get(c.case_id)]
    assert len(judged) >= 50
    assert sum("paraphrase" in c.tags for c in judged) >= 15


@pytest.mark.parametrize("name", JUDGED_PACKS)
def test_abstain_pool_words_appear_nowhere_in_the_corpus(name):
    pack = load_pack(EVAL / "packs" / name)
    assert len(pool_cases(pack)) >= 10
    assert leaked_words(pack) == {}


@pytest.mark.parametrize("name", JUDGED_PACKS)
def test_every_case_of_a_judged_pack_is_in_one_half_and_the_halves_are_even(name):
    cases = load_pack(EVAL / "packs" / name).cases
    assert all(c.split is not None for c in cases)
    for behavior in ("answer", "abstain"):
        halves = Counter(c.split for c in cases if c.expected_behavior == behavior)
        assert abs(halves["tuning"] - halves["held-out"]) <= 1, (behavior, halves)


@pytest.mark.parametrize("name", JUDGED_PACKS)
def test_abstain_pool_lies_outside_every_source_location(name):
    pack = load_pack(EVAL / "packs" / name)
    pool = (pack.directory / pack.manifest.abstain_pool).resolve()
    sources = (pack.directory / pack.manifest.sources_dir).resolve()
    assert not pool.is_relative_to(sources)
