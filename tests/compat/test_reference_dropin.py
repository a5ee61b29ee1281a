"""The reference's own transcripts and packs, run here unchanged (issue: the drop-in promise).

Needs a reference checkout (``RECALL_REFERENCE_SRC``) and, for its adapters'
transcripts and the smoke pack, its adapter programs on ``PATH``; each test
skips, saying what is missing, without them. Transcripts replay in place: the
committed fixtures are what the adapters read, and the checkout is left byte
for byte as it was.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from adapter_sdk.conformance import replay_suite
from adapter_sdk.conformance.fixture import FixtureState

from .reference import reference_program, reference_tree

RECALL = Path(sys.executable).parent / "recall"
# The reference's Go adapters; a Python template it ships runs under this interpreter's python3.
ADAPTER_SUITES = ["recall-stream", "recall-gmail", "recall-qmd"]
SMOKE_BASELINE_NDCG_AT_10 = 0.693  # the reference's committed smoke baseline, pooled


@pytest.mark.parametrize("program", ADAPTER_SUITES)
def test_a_reference_adapter_replays_its_own_transcripts_in_place(program: str) -> None:
    suite = reference_tree() / "cmd" / program / "conformance"
    argv = [reference_program(program)]
    committed = FixtureState.read(suite)

    results = replay_suite(suite, argv)

    assert [r.detail for r in results if not r.passed] == []
    assert committed.changes() == []


def test_the_reference_python_template_replays_its_transcripts_in_place() -> None:
    template = reference_tree() / "templates" / "adapter-python"
    committed = FixtureState.read(template / "conformance")

    results = replay_suite(template / "conformance", ["python3", str(template / "recall_notes.py")])

    assert [r.detail for r in results if not r.passed] == []
    assert committed.changes() == []


def _run_pack(name: str, out: Path) -> tuple[int, dict]:
    done = subprocess.run(
        [str(RECALL), "eval", "run", "--pack", str(reference_tree() / "eval" / "packs" / name), "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    return done.returncode, json.loads((out / "run.json").read_text())


def _cases(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines() if line.strip()]


def test_the_reference_shapes_pack_passes_every_gate_with_every_rate_whole(tmp_path: Path) -> None:
    code, run = _run_pack("shapes", tmp_path)

    assert [g for g in run["gates"] if g["status"] == "fail"] == []
    assert code == 0
    rates = {name: rate["value"] for name, rate in run["metrics"]["overall"].items()
             if isinstance(rate, dict) and "value" in rate and rate.get("n") and name != "forbidden_at_5"}
    assert rates and all(value == 1.0 for value in rates.values()), rates
    assert run["metrics"]["overall"]["forbidden_at_5"]["value"] == 0


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, list[dict]]:
    for program in ("recall-stream", "recall-qmd"):
        reference_program(program)
    out = tmp_path_factory.mktemp("smoke")
    _, run = _run_pack("smoke", out)
    return run, _cases(out)


def test_the_reference_smoke_pack_run_whole_ranks_at_its_baseline(smoke_run: tuple[dict, list[dict]]) -> None:
    run, cases = smoke_run

    assert len(cases) == 50
    assert run["metrics"]["overall"]["ndcg_at_10"]["value"] >= SMOKE_BASELINE_NDCG_AT_10


def test_every_smoke_source_runs_and_the_run_abstains_exactly_where_expected(
    smoke_run: tuple[dict, list[dict]],
) -> None:
    run, cases = smoke_run
    unavailable = {o["source_id"] for c in cases for o in c["source_outcomes"] if o["reason"] == "adapter_unavailable"}

    assert unavailable == set()
    assert [c["case_id"] for c in cases if c["metrics"]["abstention_accuracy"] != 1.0] == []
    assert run["metrics"]["overall"]["abstention_accuracy"] == {"value": 1.0, "n": 50}


def test_the_only_failing_smoke_gate_is_the_deliberate_sensitivity_difference(
    smoke_run: tuple[dict, list[dict]],
) -> None:
    """The ledger source is skipped under a public ceiling instead of asked (docs/compatibility.md)."""
    run, cases = smoke_run

    assert [g["name"] for g in run["gates"] if g["status"] == "fail"] == ["source_outcomes_honest"]
    wrong = [c["case_id"] for c in cases if c["metrics"]["source_outcome_accuracy"] not in (None, 1.0)]
    assert wrong == ["sensitivity-candidate-ceiling-040"]
