"""A command answered by the resident broker prints what it prints in process, byte for byte."""

from __future__ import annotations

import difflib
import json
import re

import pytest

RENDERINGS = [(), ("--json",), ("--explain",), ("--json", "--explain")]
CASES = {
    "answered": (0, ("query", "restore", "drill")),
    "abstained": (2, ("query", "submarine", "ballast")),
    "degraded": (3, ("query", "--profile", "degraded", "restore", "drill")),
    "failed": (4, ("query", "--profile", "failed", "restore", "drill")),
}
# What differs between any two runs of one query: the clock and measured durations.
VOLATILE = re.compile(
    r'("(?:\w+_ns|\w+_ms|\w+Ms|deadline|evaluated_at|\w*checked_at|\w*check_at|confirmed_at|observed_at'
    r'|\w*[cC]heckedAt|observedAt|confirmedAt|fresh)": )'
    r'("[^"]*"|\d+(?:\.\d+)?)'
    r"|((?:elapsed|cold start|timeout|\w+_ms)[ =])\d+(?:\.\d+)?(?:ns|µs|ms|s)?"
    r"|((?:observed|confirmed|checked|deadline|evaluated) |\w*check(?:ed)?_at[: ])\d{4}-\d\d-\d\dT[^\s,\]]+"
)


# What an adapter process did to answer (files it read, caches it warmed, how it
# checked its folder: a resident one watches it) differs between a fresh and a warm
# adapter; the answer does not.
WORK_DIAGNOSTICS = re.compile(r"(diagnostics |^ +freshness: )[^\n]*", re.MULTILINE)


def without_diagnostics(value: object) -> object:
    if isinstance(value, dict):
        return {k: "<volatile>" if k == "diagnostics" else without_diagnostics(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_diagnostics(v) for v in value]
    return value


def masked(text: str) -> str:
    if text.startswith("{"):
        text = json.dumps(without_diagnostics(json.loads(text)), indent=2)
    else:
        text = WORK_DIAGNOSTICS.sub(r"\1<volatile>", text)
    return VOLATILE.sub(lambda m: (m.group(1) or m.group(3) or m.group(4)) + "<volatile>", text)


def differences(warm: str, cold: str) -> str:
    lines = difflib.unified_diff(masked(cold).splitlines(), masked(warm).splitlines(), "in process", "resident", lineterm="")
    return "\n".join(lines)


@pytest.mark.parametrize("case", list(CASES))
def test_query_output_and_exit_code_match_the_in_process_path(resident, case):
    resident.start()
    code, command = CASES[case]
    for flags in RENDERINGS:
        cold = resident.cold(*command, *flags)
        warm = resident.recall(*command, *flags)
        assert (warm.returncode, cold.returncode) == (code, code), (flags, cold.stderr, warm.stderr)
        assert masked(warm.stdout) == masked(cold.stdout), (flags, differences(warm.stdout, cold.stdout))
        assert warm.stderr == cold.stderr, flags
    assert resident.status()["commands_served"] == len(RENDERINGS)


def test_usage_and_request_errors_match_the_in_process_path(resident):
    resident.start()
    for command in (
        ("query",),
        ("query", "restore", "--scope", "colour=red"),
        ("query", "restore", "--profile", "nope"),
        ("query", "restore", "--limit", "-1"),
        ("expand", "nowhere:x"),
    ):
        cold, warm = resident.cold(*command), resident.recall(*command)
        assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)
        assert warm.returncode in (1, 4)
    assert resident.status()["commands_served"] == 5


def test_expand_and_sources_match_the_in_process_path(resident):
    resident.start()
    for command in (("expand", "kb:restore.md#L1-L3"), ("expand", "--json", "tasks:t1"), ("sources",)):
        cold, warm = resident.cold(*command), resident.recall(*command)
        assert warm.returncode == cold.returncode == 0, (cold.stderr, warm.stderr)
        assert masked(warm.stdout) == masked(cold.stdout), differences(warm.stdout, cold.stdout)


def test_arguments_reach_the_resident_broker_exactly(resident):
    """The command line crosses the socket as given: non-ASCII text, an empty argument,
    and a byte that is not UTF-8 (as the interpreter decodes it, surrogateescape)."""
    resident.start()
    for command in (
        ("query", "--json", "restöre", "drill"),
        ("query", "--json", "", "restore"),
        ("query", "--json", "restore", "caf\udce9"),
        ("query", "--scope", "colour=r\u00e9d", "restore"),
    ):
        cold, warm = resident.cold(*command), resident.recall(*command)
        assert warm.returncode == cold.returncode, (command, cold.stderr, warm.stderr)
        assert masked(warm.stdout) == masked(cold.stdout), differences(warm.stdout, cold.stdout)
        assert warm.stderr == cold.stderr, command
    assert resident.status()["commands_served"] == 4
