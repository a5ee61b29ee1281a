"""Every committed conformance suite replays, case by case, against our real adapters."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from adapter_sdk.conformance import case_dirs, replay_case
from adapter_sdk.conformance.fixture import FixtureState
from broker.config.init import semantic_extra_missing

from .database_suites import suite_environment

REPO = Path(__file__).resolve().parents[2]
TRANSCRIPTS = REPO / "conformance_transcripts"
ADAPTERS = REPO / "adapters"

# The cases every suite must hold (issue F10; protocol reference §2.6).
REQUIRED_CASES = {
    "handshake",
    "version-rejection",
    "bad-settings",
    "search-ranked",
    "search-empty",
    "search-skipped",
    "expand-details",
    "health",
    "cancel-inflight",
}


def committed_suites() -> list[str]:
    return sorted(
        path.name for path in TRANSCRIPTS.iterdir() if path.is_dir() and not path.name.startswith(("_", "."))
    )


def runnable_adapters() -> list[str]:
    """Adapters that run as ``python -m adapters.<name>``."""
    return sorted(path.parent.name for path in ADAPTERS.glob("*/__main__.py"))


# suites whose adapter runs only with an optional extra installed
NEEDS_EXTRA = {"semantic": semantic_extra_missing}


@pytest.mark.parametrize("adapter", committed_suites())
def test_committed_suite_replays_as_recorded(adapter: str, request: pytest.FixtureRequest) -> None:
    missing = NEEDS_EXTRA.get(adapter, list)()
    if missing and os.environ.get("RECALL_TEST_SEMANTIC") != "1":
        pytest.skip(f"{adapter} needs {', '.join(missing)} (an optional extra)")
    argv = [sys.executable, "-m", f"adapters.{adapter}"]
    env = suite_environment(TRANSCRIPTS / adapter, request)
    committed = FixtureState.read(TRANSCRIPTS / adapter)
    failures = []
    for case in case_dirs(TRANSCRIPTS / adapter):
        result = replay_case(case, argv, env=env)  # stops any server the case's store started
        if not result.passed:
            failures.append(result.detail)
    assert failures == []
    assert committed.changes() == []  # fixtures are read in place: the replay left every byte as it was


@pytest.mark.parametrize("adapter", committed_suites())
def test_committed_suite_holds_the_required_cases(adapter: str) -> None:
    cases = {case.name for case in case_dirs(TRANSCRIPTS / adapter)}

    assert sorted(REQUIRED_CASES - cases) == []


def test_every_runnable_adapter_has_a_committed_suite() -> None:
    assert sorted(set(runnable_adapters()) - set(committed_suites())) == []
