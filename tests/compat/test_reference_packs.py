"""Packs in the reference's format run here unchanged, and their runs compare across implementations.

``eval/packs/compat`` uses the reference's schema features this broker once
refused or mishandled: two views of one folder, one source asked through three
profiles in alternation, ``suppress_lineages`` with an explicit mode, and a
source replayed from its transcript (``recall-eval-replay``).
"""

from __future__ import annotations

import io
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from broker.evaluation.execute import EvalRun, run_pack
from broker.evaluation.hashing import content_hash, go_json
from broker.evaluation.pack import Case, Judgment, Manifest, load_pack
from broker.evaluation.replayed_source import serve

PACK = Path(__file__).resolve().parents[2] / "eval" / "packs" / "compat"


@pytest.fixture(scope="module")
def compat_run() -> EvalRun:
    return run_pack(load_pack(PACK))


def _case(run: EvalRun, case_id: str) -> dict:
    return next(c for c in run.cases if c["case_id"] == case_id)


def test_the_compat_pack_passes_every_gate(compat_run: EvalRun) -> None:
    failed = [g for g in compat_run.run["gates"] if g["status"] == "fail"]
    assert not failed, failed


def test_two_views_of_one_folder_both_answer_and_the_copy_is_a_duplicate_view(compat_run: EvalRun) -> None:
    case = _case(compat_run, "views-kiln-001")
    assert {o["source_id"]: o["outcome"] for o in case["source_outcomes"]} == {
        "notes": "success", "notes-view": "success",
    }
    assert {s["lineage_root"]: s["reason"] for s in case["suppressed"]} == {
        "02COMPATVIEW:guides/kiln.md#L1-L4": "duplicate_view",
    }


def test_a_replayed_source_answers_from_its_transcript_not_a_spawned_command(compat_run: EvalRun) -> None:
    outcome = next(o for o in _case(compat_run, "refused-003")["source_outcomes"] if o["source_id"] == "refusing")
    # the recorded health said denied; a spawn of the missing command would be adapter_unavailable
    assert (outcome["outcome"], outcome["reason"]) == ("skipped", "denied")
    ids = {a["id"] for a in compat_run.run["environment"]["adapters"]}
    assert "recall-eval-replay" in ids


def test_an_explicit_ask_shows_what_suppress_lineages_names(compat_run: EvalRun) -> None:
    shown = [r["lineage_root"] for r in _case(compat_run, "suppress-explicit-004")["results"]]
    assert shown == ["01COMPATNOTES:guides/kiln.md#L1-L4"]
    assert _case(compat_run, "suppress-pre-reply-005")["behavior"] == "abstain"


def test_run_json_environment_has_the_reference_shape(compat_run: EvalRun) -> None:
    """The reference decodes ``adapters`` as objects and requires these keys (its run.schema.json)."""
    env = compat_run.run["environment"]
    assert {"recall_commit", "dirty", "profile_hash", "os", "arch"} <= set(env)
    assert isinstance(env["recall_commit"], str) and env["recall_commit"]
    assert isinstance(env["dirty"], bool)
    assert env["profile_hash"].startswith("sha256:")
    assert env["adapters"] and all(set(a) == {"id", "version"} for a in env["adapters"])
    assert set(env) <= {"recall_commit", "dirty", "profile_hash", "adapters", "indexes", "models", "os", "arch",
                        "memory_bytes", "cache_policy", "warm", "network_access", "seeds"}


# -- the content hash: Go's encoding of the reference's types ------------------------------------------


def test_a_case_encodes_with_go_field_order_and_omitted_empties() -> None:
    case = Case.model_validate({
        "schema_version": 1, "case_id": "c1", "query": "a <b> & c", "expected_behavior": "answer",
        "tags": [], "as_of": "2026-03-01T00:00:00+00:00",
        "assertions": {"min_results": 0, "required_sources": []},
    })
    assert go_json(case) == (
        b'{"schema_version":1,"case_id":"c1","query":"a \\u003cb\\u003e \\u0026 c","profile":"",'
        b'"as_of":"2026-03-01T00:00:00Z","expected_behavior":"answer","assertions":{"min_results":0}}'
    )


def test_a_mode_is_encoded_only_when_the_case_states_it() -> None:
    base = {"schema_version": 1, "case_id": "c", "query": "q", "expected_behavior": "abstain"}
    assert b'"mode"' not in go_json(Case.model_validate(base))
    stated = go_json(Case.model_validate({**base, "mode": "explicit", "suppress_lineages": ["U:x"]}))
    assert stated.endswith(b'"mode":"explicit","suppress_lineages":["U:x"]}')


def test_times_keep_their_offset_and_whole_floats_print_as_integers() -> None:
    zoned = datetime(2026, 3, 1, 9, 30, 0, 250000, tzinfo=timezone(timedelta(hours=2)))
    case = Case(schema_version=1, case_id="c", query="q", expected_behavior="answer", as_of=zoned)
    assert b'"as_of":"2026-03-01T09:30:00.25+02:00"' in go_json(case)
    manifest = Manifest.model_validate({
        "schema_version": 1, "pack_id": "p", "version": "1", "cases": "c", "judgments": "j",
        "thresholds": {"exact_identifier_success_at_1": 0.4, "abstention_accuracy": 1.0},
    })
    assert go_json(manifest) == (
        b'{"schema_version":1,"pack_id":"p","version":"1","cases":"c","judgments":"j",'
        b'"thresholds":{"abstention_accuracy":1,"exact_identifier_success_at_1":0.4}}'
    )
    judgment = Judgment(schema_version=1, case_id="c", lineage_root="U:x", relevance=0)
    assert go_json(judgment) == b'{"schema_version":1,"case_id":"c","lineage_root":"U:x","relevance":0}'


def test_the_hash_ignores_record_order_but_not_content(tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "compat"
    shutil.copytree(PACK, copy)
    before = content_hash(load_pack(copy))
    lines = (copy / "cases.jsonl").read_text().splitlines()
    (copy / "cases.jsonl").write_text("\n".join(reversed(lines)) + "\n")
    assert content_hash(load_pack(copy)) == before
    (copy / "transcripts" / "refusing-source" / "manifest.json").write_text("{}")
    assert content_hash(load_pack(copy)) != before


# -- the replayed source on its own ---------------------------------------------------------------------


def _replay(lines: list[str]) -> list[dict]:
    out = io.StringIO()
    serve(PACK / "transcripts", io.StringIO("".join(line + "\n" for line in lines)), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_the_replayed_source_answers_by_method_and_names_what_it_never_recorded() -> None:
    init = {"jsonrpc": "2.0", "id": 7, "method": "recall/initialize",
            "params": {"workdir": "/w", "location": str(PACK / "transcripts" / "refusing-source"),
                       "settings": {"transcript": "refusing-source"}}}
    health = {"jsonrpc": "2.0", "id": 8, "method": "recall/health", "params": {}}
    expand = {"jsonrpc": "2.0", "id": 9, "method": "recall/expand", "params": {}}
    replies = _replay([json.dumps(init), json.dumps(health), json.dumps(health), "{oops", json.dumps(expand)])
    assert replies[0]["id"] == 7 and replies[0]["result"]["adapter_id"] == "recall-eval-replay/1"
    assert replies[1]["result"]["status"] == replies[2]["result"]["status"] == "denied"
    assert replies[3]["error"]["code"] == -32700
    assert (replies[4]["id"], replies[4]["error"]["code"]) == (9, -32601)


def test_a_reference_baseline_compares_with_a_run_here(compat_run: EvalRun) -> None:
    """The reference writes no abstention precision or recall, 0 for an undefined rate, latency cold/warm."""
    import copy

    from broker.evaluation.compare import compare_runs

    reference = copy.deepcopy(compat_run.run)
    blocks = [reference["metrics"]["overall"], *reference["metrics"]["by_tag"]["groups"].values(),
              *reference["metrics"]["by_source_family"]["groups"].values(),
              reference["metrics"]["by_source_family"]["macro"]]
    for block in blocks:
        for rate in ("abstention_precision", "abstention_recall", "degraded_handling"):
            block.pop(rate, None)
        for value in block.values():
            if isinstance(value, dict) and value.get("n") == 0:
                value["value"] = 0
        if "latency" in block:
            block["latency"] = {"cold": {"n": 0, "p50_ns": 0, "p95_ns": 0}, "warm": block["latency"]}
    comparison = compare_runs(reference, compat_run.run)
    assert comparison.status == "pass", comparison
    assert not any(d["metric"] == "abstention_precision" for d in comparison.deltas)
