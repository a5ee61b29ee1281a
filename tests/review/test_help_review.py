"""Each command's help lists the exit codes that command can actually return."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RECALL = str(Path(sys.executable).parent / "recall")


def help_text(command: str) -> str:
    run = subprocess.run([RECALL, command, "--help"], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_expand_help_lists_expansion_failure_and_no_abstention():
    text = help_text("expand")
    assert "4  the locator could not be expanded" in text
    assert "abstained" not in text


def test_refresh_help_says_what_degraded_and_failed_mean_for_a_refresh():
    text = help_text("refresh")
    assert "3  degraded: some source failed to refresh" in text
    assert "4  failed: no source was refreshed" in text
    assert "abstained" not in text


def test_sidecar_plugin_help_does_not_promise_exit_codes_it_never_returns():
    text = help_text("sidecar-plugin")
    assert "0  a response was written (typed failures included)" in text
    assert "degraded" not in text


def test_query_help_keeps_the_full_exit_code_ladder():
    text = help_text("query")
    for line in ("0  answered", "2  abstained", "3  degraded", "4  failed: every source asked failed"):
        assert line in text
