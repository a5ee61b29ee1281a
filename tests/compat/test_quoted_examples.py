"""A notes source declaring ``examples_quote_queries`` finds a page that quotes the question,
and the broker withholds it below the relevance floor, named, instead of showing it beside
the answer (the reference's shapes case ``question-width-006``, here without the reference)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.broker.cli.conftest import RECALL

CONFIG = """\
[[sources]]
source_uid = "01QUOTEDDOCS"
source_id = "docs"
adapter = "notes"
location = "{folder}"
sensitivity = "internal"
timeout_ms = 20000

[sources.settings]
examples_quote_queries = {quotes}

[profiles.default]
sources = ["docs"]
max_sensitivity = "internal"
"""


def _query(tmp_path: Path, *, quotes: bool) -> dict:
    folder = tmp_path / "docs"
    (folder / "projects").mkdir(parents=True, exist_ok=True)
    (folder / "projects" / "orbit.md").write_text(
        "# Orbit\n\nOrbit is a project for coordinating observations from a small fleet of weather\n"
        "instruments, scheduling collection windows for each station.\n"
    )
    (folder / "projects" / "example-queries.md").write_text(
        '# Query examples\n\nDocumentation can quote realistic input. One example asks "what is the\n'
        'orbit project for" while explaining why scaffolding must not widen retrieval.\n'
    )
    home = tmp_path / ("quoting" if quotes else "plain")
    config = home / "config" / "recall"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(CONFIG.format(folder=folder, quotes=str(quotes).lower()))
    env = {**os.environ, "XDG_CONFIG_HOME": str(home / "config"), "XDG_STATE_HOME": str(home / "state"),
           "XDG_CACHE_HOME": str(home / "cache"), "RECALL_DAEMON": "0"}
    done = subprocess.run([str(RECALL), "query", "--json", "what is the orbit project for"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _shown(answer: dict) -> list[str]:
    return [result["locator"] for result in answer["results"]]


def test_a_page_quoting_the_question_is_withheld_below_the_floor_and_named(tmp_path: Path) -> None:
    answer = _query(tmp_path, quotes=True)

    assert _shown(answer) == ["docs:projects/orbit.md#L1-L4"]
    withheld = {s["lineage_root"]: s["reason"] for s in answer["suppressed"] if s.get("lineage_root")}
    assert withheld.get("01QUOTEDDOCS:projects/example-queries.md#L1-L4") == "below_relevance_floor"


def test_without_the_setting_the_quoting_page_competes(tmp_path: Path) -> None:
    answer = _query(tmp_path, quotes=False)

    assert "docs:projects/example-queries.md#L1-L4" in _shown(answer)
