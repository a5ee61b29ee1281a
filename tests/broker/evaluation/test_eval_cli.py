"""recall eval validate / run / compare: exit codes and artifacts, through the dispatcher."""

from __future__ import annotations

import json

from broker.surfaces.cli import dispatch as dispatch_with
from broker.surfaces.streams import Streams
from tests.broker.evaluation.conftest import JUDGMENTS


def dispatch(argv: list[str]) -> int:
    """A command line run in this process, with its streams (captured by ``capsys``)."""
    return dispatch_with(argv, Streams.of_process())


def test_validate_accepts_a_good_pack(write_pack, capsys):
    assert dispatch(["eval", "validate", "--pack", str(write_pack())]) == 0
    assert "valid, 2 cases, 2 judgments" in capsys.readouterr().out


def test_validate_exits_one_on_a_broken_pack(write_pack, capsys):
    pack = write_pack()
    (pack / "cases.jsonl").write_text("{not json\n")
    assert dispatch(["eval", "validate", "--pack", str(pack)]) == 1
    assert "cases.jsonl:1: not JSON" in capsys.readouterr().err


def test_run_writes_its_artifacts_and_passes(write_pack, tmp_path, capsys):
    out = tmp_path / "out"
    assert dispatch(["eval", "run", "--pack", str(write_pack()), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["cases.jsonl", "run.json", "summary.md"]
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "pass"
    assert run["metrics"]["overall"]["mrr_at_10"] == {"value": 1.0, "n": 1}
    cases = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    assert [c["behavior"] for c in cases] == ["answer", "abstain"]
    assert f"artifacts: {out}" in capsys.readouterr().out


def test_undefined_rates_are_null_in_json_and_na_in_text(write_pack, tmp_path, capsys):
    out = tmp_path / "out"
    dispatch(["eval", "run", "--pack", str(write_pack()), "--out", str(out), "--json"])
    printed = json.loads(capsys.readouterr().out)
    assert printed["metrics"]["overall"]["source_outcome_accuracy"] == {"value": None, "n": 0}
    assert "outcomes n/a (n=0)" in (out / "summary.md").read_text()


def test_run_exits_three_when_forbidden_evidence_is_shown(write_pack, tmp_path):
    forbidding = [dict(JUDGMENTS[0], relevance=0, required=False, forbidden=True)]
    pack = write_pack(judgments=forbidding)
    assert dispatch(["eval", "run", "--pack", str(pack), "--out", str(tmp_path / "out")]) == 3
    gates = json.loads((tmp_path / "out" / "run.json").read_text())["gates"]
    assert {g["name"]: g["status"] for g in gates}["no_forbidden_evidence"] == "fail"


def test_compare_exits_three_when_a_rate_drops(write_pack, tmp_path, capsys):
    pack = str(write_pack())
    dispatch(["eval", "run", "--pack", pack, "--out", str(tmp_path / "base")])
    dispatch(["eval", "run", "--pack", pack, "--out", str(tmp_path / "now")])
    assert dispatch(["eval", "compare", str(tmp_path / "base"), str(tmp_path / "now")]) == 0
    run_file = tmp_path / "base" / "run.json"
    run = json.loads(run_file.read_text())
    run["metrics"]["by_tag"]["groups"]["keyword"]["ndcg_at_10"]["value"] = 1.5  # a better past
    run_file.write_text(json.dumps(run))
    capsys.readouterr()
    assert dispatch(["eval", "compare", str(run_file), str(tmp_path / "now" / "run.json")]) == 3
    assert "regressed: tag:group:keyword ndcg_at_10" in capsys.readouterr().out


def test_compare_needs_two_runs(capsys):
    assert dispatch(["eval", "compare", "only-one"]) == 1
    assert "BASELINE RUN" in capsys.readouterr().err


def test_a_run_reports_each_half_and_split_runs_only_that_half(write_pack, tmp_path):
    from tests.broker.evaluation.conftest import CASES

    halves = [dict(CASES[0], split="tuning"), dict(CASES[1], split="held-out")]
    pack = str(write_pack(cases=halves))
    assert dispatch(["eval", "run", "--pack", pack, "--out", str(tmp_path / "all")]) == 0
    groups = json.loads((tmp_path / "all" / "run.json").read_text())["metrics"]["by_split"]["groups"]
    assert groups["tuning"]["success_at_1"] == {"value": 1.0, "n": 1}
    assert groups["held-out"]["abstention_recall"] == {"value": 1.0, "n": 1}
    assert "split held-out" in (tmp_path / "all" / "summary.md").read_text()

    assert dispatch(["eval", "run", "--pack", pack, "--split", "held-out", "--out", str(tmp_path / "half")]) == 0
    half = json.loads((tmp_path / "half" / "run.json").read_text())
    assert half["split"] == "held-out"
    assert [json.loads(line)["case_id"] for line in (tmp_path / "half" / "cases.jsonl").read_text().splitlines()] \
        == ["off-topic"]
    # a half is not the pack: it never compares with a run of the whole
    assert dispatch(["eval", "compare", str(tmp_path / "all"), str(tmp_path / "half")]) == 3


def test_validate_refuses_a_must_abstain_question_whose_words_are_in_the_corpus(write_pack, capsys):
    pool = [{"schema_version": 1, "case_id": "pool-1", "query": "zeppelin checksums", "expected_behavior": "abstain",
             "tags": ["abstain"]}]
    pack = write_pack(abstain_pool="pool.jsonl")
    (pack / "pool.jsonl").write_text(json.dumps(pool[0]) + "\n")
    assert dispatch(["eval", "validate", "--pack", str(pack)]) == 1
    assert "must-abstain case pool-1 shares words with the corpus: checksum" in capsys.readouterr().err
    (pack / "pool.jsonl").write_text(json.dumps(dict(pool[0], query="zeppelin mooring")) + "\n")
    assert dispatch(["eval", "validate", "--pack", str(pack)]) == 0
