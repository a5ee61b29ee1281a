"""Run artifacts on disk: ``run.json``, ``cases.jsonl`` and ``summary.md``.

A run directory is also what a baseline is (``eval/baselines/<pack>/``): the
comparison reads ``run.json`` and, when present, ``cases.jsonl`` for per-case
changes. A bare ``run.json`` path works too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from broker.errors import RecallError
from broker.evaluation.execute import EvalRun
from broker.evaluation.human_text import summary_markdown

RUN_FILE = "run.json"
CASES_FILE = "cases.jsonl"
SUMMARY_FILE = "summary.md"


def write_run(result: EvalRun, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / RUN_FILE).write_bytes(
        orjson.dumps(result.run, option=orjson.OPT_INDENT_2) + b"\n"
    )
    (directory / CASES_FILE).write_bytes(
        b"".join(orjson.dumps(case, option=orjson.OPT_SORT_KEYS) + b"\n" for case in result.cases)
    )
    (directory / SUMMARY_FILE).write_text(summary_markdown(result.run), encoding="utf-8")
    return directory


def read_run(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]] | None]:
    """A run from its directory or its ``run.json``; cases when the directory has them."""
    run_file = path / RUN_FILE if path.is_dir() else path
    try:
        run = orjson.loads(run_file.read_bytes())
    except OSError as err:
        raise RecallError(f"cannot read run {run_file}: {err.strerror or err}") from None
    except orjson.JSONDecodeError as err:
        raise RecallError(f"{run_file} is not JSON: {err}") from None
    if not isinstance(run, dict) or "metrics" not in run or "pack" not in run:
        raise RecallError(f"{run_file} is not a run.json (no pack or metrics)")
    cases_file = run_file.parent / CASES_FILE
    cases = None
    if cases_file.is_file():
        cases = [orjson.loads(line) for line in cases_file.read_bytes().splitlines() if line.strip()]
    return run, cases
