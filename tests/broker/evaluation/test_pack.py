"""Loading and validating a pack: every problem reported, with its file and line."""

from __future__ import annotations

import json
import sys

import pytest

from broker.evaluation.hashing import content_hash
from broker.evaluation.pack import PackError, check_against_config, load_pack
from tests.broker.evaluation.conftest import CASES, CONFIG, JUDGMENTS


def test_a_valid_pack_loads_cases_and_judgments(write_pack):
    pack = load_pack(write_pack())
    assert [c.case_id for c in pack.cases] == ["drill", "off-topic"]
    assert [j.lineage_root for j in pack.judgments["drill"]] == ["TINYNOTES1:restore", "TINYNOTES1:retention"]


def test_placeholders_become_the_pack_directory_and_the_interpreter(write_pack):
    pack = load_pack(write_pack())
    text = pack.config_text()
    assert f'location = "{pack.directory}/sources/records.json"' in text
    assert json.dumps(sys.executable) in text


def test_the_run_configuration_keeps_adapter_state_in_the_given_directory(write_pack, tmp_path):
    config = load_pack(write_pack()).config(tmp_path / "run")
    assert config.paths.state_root == tmp_path / "run" / "state" / "recall"


def test_duplicate_case_ids_are_refused(write_pack):
    with pytest.raises(PackError, match="appears more than once"):
        load_pack(write_pack(cases=CASES + [CASES[0]]))


def test_a_judgment_both_required_and_forbidden_is_refused_with_its_line(write_pack):
    bad = dict(JUDGMENTS[0], forbidden=True)
    with pytest.raises(PackError, match=r"judgments.jsonl:1: .*both required and forbidden"):
        load_pack(write_pack(judgments=[bad]))


def test_a_judgment_for_an_unknown_case_is_refused(write_pack):
    stray = dict(JUDGMENTS[0], case_id="nope")
    with pytest.raises(PackError, match="'nope' is not a case"):
        load_pack(write_pack(judgments=JUDGMENTS + [stray]))


def test_the_same_root_judged_twice_for_one_case_is_refused(write_pack):
    with pytest.raises(PackError, match="judged twice"):
        load_pack(write_pack(judgments=JUDGMENTS + [JUDGMENTS[0]]))


def test_unknown_case_fields_are_refused(write_pack):
    with pytest.raises(PackError, match="cases.jsonl:1: colour: unknown field"):
        load_pack(write_pack(cases=[dict(CASES[0], colour="red")]))


def test_every_problem_is_reported_at_once(write_pack):
    cases = [dict(CASES[0], expected_behavior="maybe"), dict(CASES[1], query=" ")]
    with pytest.raises(PackError) as caught:
        load_pack(write_pack(cases=cases, judgments=[]))
    assert len(caught.value.problems) == 2


def test_an_expected_failure_may_only_excuse_an_assertion_the_case_declares(write_pack):
    case = dict(CASES[0], expected_fail={"reason": "x" * 40, "assertions": ["expected_top_lineage"]})
    with pytest.raises(PackError, match="does not assert"):
        load_pack(write_pack(cases=[case], judgments=[]))


def test_suppress_lineages_in_explicit_mode_loads_and_hides_nothing(write_pack):
    """The reference's schema allows the pair; an explicit ask still shows what it names."""
    from broker.evaluation.execute import run_pack

    case = dict(CASES[0], mode="explicit", suppress_lineages=["TINYNOTES1:restore"],
                assertions={"visible_lineages": ["TINYNOTES1:restore"]})
    pack = load_pack(write_pack(cases=[case], judgments=[]))
    assert pack.cases[0].suppress_lineages == ["TINYNOTES1:restore"]
    gates = {g["name"]: g for g in run_pack(pack).run["gates"]}
    assert gates["declared_assertions"]["status"] == "pass", gates["declared_assertions"]


def test_abstain_pool_cases_join_the_pack_and_must_expect_abstain(write_pack):
    pack_dir = write_pack(abstain_pool="pool.jsonl")
    pool = dict(CASES[1], case_id="pool-1")
    (pack_dir / "pool.jsonl").write_text(json.dumps(pool) + "\n")
    assert [c.case_id for c in load_pack(pack_dir).cases][-1] == "pool-1"
    (pack_dir / "pool.jsonl").write_text(json.dumps(dict(pool, expected_behavior="answer")) + "\n")
    with pytest.raises(PackError, match="pool cases must expect abstain"):
        load_pack(pack_dir)


def test_paths_in_the_manifest_must_be_relative(write_pack):
    with pytest.raises(PackError, match="relative path"):
        load_pack(write_pack(abstain_pool="/etc/pool.jsonl"))


def test_judgments_must_name_configured_source_uids(write_pack, tmp_path):
    stray = dict(JUDGMENTS[0], lineage_root="OTHERSRC:restore")
    pack = load_pack(write_pack(judgments=[stray]))
    with pytest.raises(PackError, match="names no configured source_uid"):
        check_against_config(pack, pack.config(tmp_path / "run"))


def test_a_networked_source_needs_network_access_declared(write_pack, tmp_path):
    networked = CONFIG.replace('location = "${PACK}/sources/records.json"\nlocation_kind = "path"',
                               'location = "https://mail.example.com/api"\nlocation_kind = "uri"')
    assert networked != CONFIG
    pack = load_pack(write_pack(config=networked))
    with pytest.raises(PackError, match="network_access"):
        check_against_config(pack, pack.config(tmp_path / "run"))


def test_the_content_hash_changes_when_a_corpus_file_changes(write_pack):
    pack_dir = write_pack()
    before = content_hash(load_pack(pack_dir))
    assert content_hash(load_pack(pack_dir)) == before
    (pack_dir / "sources" / "records.json").write_text('{"records": []}')
    assert content_hash(load_pack(pack_dir)) != before


def test_the_content_hash_changes_when_a_judgment_changes(write_pack):
    before = content_hash(load_pack(write_pack()))
    regraded = [dict(JUDGMENTS[0], relevance=2), JUDGMENTS[1]]
    assert content_hash(load_pack(write_pack(judgments=regraded))) != before


def test_a_case_may_ask_at_a_valid_time_instant(write_pack):
    from datetime import UTC, datetime

    from broker.evaluation.runner import request_for

    cases = [dict(CASES[0], valid_at="2024-06-01T00:00:00Z"), *CASES[1:]]
    case = load_pack(write_pack(cases=cases)).cases[0]
    assert request_for(case, "default").valid_at == datetime(2024, 6, 1, tzinfo=UTC)


def test_a_valid_at_without_a_time_zone_is_refused(write_pack):
    with pytest.raises(PackError, match="needs a time zone"):
        load_pack(write_pack(cases=[dict(CASES[0], valid_at="2024-06-01T00:00:00"), *CASES[1:]]))
