"""The committed packs: each run passes its gates and regresses nothing against its baseline.

This is the CI regression gate. When a change moves a metric on purpose,
re-record the baseline in the same change (see eval/README.md):

    recall eval run --pack eval/packs/<pack> --out eval/baselines/<pack>
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapter_sdk.lexical import analyze_query, stemmed, tokenize
from broker.evaluation.artifacts import read_run
from broker.evaluation.compare import compare_runs
from broker.evaluation.execute import EvalRun, run_pack
from broker.evaluation.pack import load_pack
from broker.evaluation.report import comparison_text

EVAL = Path(__file__).resolve().parents[2] / "eval"
PACKS = ("smoke", "retrieval", "black-docs")
# packs of judged questions over a corpus, each with a must-abstain pool kept outside it
JUDGED_PACKS = ("retrieval", "black-docs")

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
    assert len(judged) >= 60
    assert sum("paraphrase" in c.tags for c in judged) >= 15


def _corpus_words(root: Path) -> set[str]:
    """Stems of every word of the corpus: the indexes match by stem."""
    words: set[str] = set()
    for path in root.rglob("*"):
        if path.is_file():
            words |= {stemmed(t) for t in tokenize(path.read_text(encoding="utf-8", errors="replace"))}
    return words


@pytest.mark.parametrize("name", JUDGED_PACKS)
def test_abstain_pool_words_appear_nowhere_in_the_corpus(name):
    pack_dir = EVAL / "packs" / name
    corpus = _corpus_words(pack_dir / "sources")
    pool = [json.loads(line) for line in (pack_dir / "abstain_pool.jsonl").read_text().splitlines()]
    assert len(pool) >= 10
    leaked = {
        entry["case_id"]: sorted({stemmed(t) for t in analyze_query(entry["query"]).content_terms} & corpus)
        for entry in pool
    }
    assert not any(leaked.values()), {k: v for k, v in leaked.items() if v}


@pytest.mark.parametrize("name", JUDGED_PACKS)
def test_abstain_pool_lies_outside_every_source_location(name):
    pack = load_pack(EVAL / "packs" / name)
    pool = (pack.directory / pack.manifest.abstain_pool).resolve()
    sources = (pack.directory / pack.manifest.sources_dir).resolve()
    assert not pool.is_relative_to(sources)
