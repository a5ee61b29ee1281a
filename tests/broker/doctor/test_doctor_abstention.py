"""Configured must-abstain queries are asked for real."""

from __future__ import annotations

from pathlib import Path

from broker.doctor import CheckName, CheckStatus

from .conftest import Home, profile, records, source


def must_abstain(query: str, reason: str = "nothing in the corpus covers it") -> str:
    return f'[[evaluation.must_abstain]]\nquery = "{query}"\nreason = "{reason}"\n'


def test_no_must_abstain_queries_skips_abstention(home: Home, tmp_path: Path) -> None:
    home.write_user(source("notes", "UIDNOTES0001", records(tmp_path / "n.json", "alpha")), profile("notes"))
    check = home.diagnose().check(CheckName.abstention)
    assert check.status is CheckStatus.skipped


def test_a_must_abstain_query_that_answers_fails_abstention(home: Home, tmp_path: Path) -> None:
    file = home.write_user(
        source("notes", "UIDNOTES0001", records(tmp_path / "n.json", "quarterly budget review")),
        profile("notes"),
        must_abstain("what is the quarterly budget", "budgets live elsewhere"),
    )
    check = home.diagnose().check(CheckName.abstention)
    assert check.status is CheckStatus.failed
    problem = check.problems[0]
    assert (problem.key, problem.file) == ("evaluation.must_abstain[0]", str(file))
    assert "notes:r0" in problem.message and "budgets live elsewhere" in problem.message


def test_a_must_abstain_query_that_finds_nothing_passes(home: Home, tmp_path: Path) -> None:
    home.write_user(
        source("notes", "UIDNOTES0001", records(tmp_path / "n.json", "quarterly budget review")),
        profile("notes"),
        must_abstain("zeppelin maintenance schedule"),
    )
    check = home.diagnose().check(CheckName.abstention)
    assert check.status is CheckStatus.passed
    assert check.detail == "1 of 1 must-abstain queries abstained"


def test_an_abstention_no_source_could_search_for_is_degraded(home: Home, tmp_path: Path) -> None:
    home.write_user(
        source("notes", "UIDNOTES0001", records(tmp_path / "n.json", "zeppelin"), health="unavailable"),
        profile("notes"),
        must_abstain("zeppelin"),
    )
    check = home.diagnose().check(CheckName.abstention)
    assert check.status is CheckStatus.degraded
    assert "notes could not search" in check.problems[0].message
