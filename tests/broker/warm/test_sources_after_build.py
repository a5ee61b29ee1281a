"""``recall sources`` through the resident broker tells a finished build as finished.

A health probe taken while the notes index was building said so (coverage
partial, the source degraded); the broker reuses a probe for a while, but not
one that found its source short of healthy for longer than a second, so the
listing after the build has ended calls the source healthy.
"""

from __future__ import annotations

import json
import time

from broker.supervise.timings import UNSETTLED_HEALTH_TTL
from tests.broker.warm.conftest import Resident

NOTES = 6000
BUILT_WITHIN_S = 120.0


def _kb_row(resident: Resident) -> dict:
    done = resident.recall("sources", "--json")
    assert done.returncode in (0, 3), done.stdout + done.stderr
    return next(row for row in json.loads(done.stdout)["sources"] if row["source_id"] == "kb")


def test_sources_stops_saying_building_once_the_build_has_ended(resident: Resident) -> None:
    folder = resident.root / "kb"
    for index in range(NOTES):
        (folder / f"n{index:05d}.md").write_text(f"# Note {index}\n\nplain words about topic {index}\n")
    resident.start()

    building = _kb_row(resident)
    assert building["status"] == "degraded" and building["health"]["coverage"] != "complete", building

    deadline = time.monotonic() + BUILT_WITHIN_S
    while True:  # the search itself says when the build has ended
        done = resident.recall("query", "--json", "--explain", "--scope", "source=kb", "topic 17")
        report = next(r for r in json.loads(done.stdout)["source_outcomes"] if r["source_id"] == "kb")
        if report["outcome"] == "success":
            break
        assert time.monotonic() < deadline, "the notes index was never built"
        time.sleep(0.2)
    time.sleep(UNSETTLED_HEALTH_TTL)

    built = _kb_row(resident)
    assert built["status"] == "healthy", built
    assert built["health"]["coverage"] == "complete"
    assert built["health"]["indexed_count"] == NOTES + 1  # and the fixture's restore note
