"""Every module of the broker stays short enough to hold one job: at most 600 lines."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MOST_LINES = 600


def test_no_broker_module_is_longer_than_600_lines() -> None:
    longer = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "broker").rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MOST_LINES
    }
    assert longer == {}
