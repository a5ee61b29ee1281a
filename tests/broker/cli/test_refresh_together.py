"""Two ``recall refresh`` at once over one folder (two terminals, or a refresh beside a
resident broker's catch-up) share the work: each note is read once, both finish."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.support.recall_home import RECALL, RecallHome

NOTES = 2000
OLD_MTIME = 1_704_067_200


def test_two_refreshes_at_once_read_each_note_once(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "start.md").write_text("# Start\n\nThe folder's first note.\n")
    home = RecallHome.build(tmp_path, notes={"notes": folder})  # its first refresh reads that one
    for index in range(NOTES):
        path = folder / f"area{index % 8}" / f"note-{index:05d}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"# Note {index}\n\n## Sighting\n\nheron number{index} by the pond, with waders.\n")
        os.utime(path, (OLD_MTIME, OLD_MTIME))
    together = [
        subprocess.Popen([RECALL, "refresh", "--json"], env=home.env, cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    reports = []
    for command in together:
        stdout, stderr = command.communicate(timeout=120)
        assert command.returncode == 0, stderr
        reports.append(json.loads(stdout)["sources"][0]["health"])
    assert [r["coverage"] for r in reports] == ["complete", "complete"]
    assert [r["indexed_count"] for r in reports] == [NOTES + 1, NOTES + 1]
    assert sum(r["diagnostics"]["files_read"] for r in reports) == NOTES
    found = home.recall("query", "--json", "heron number1234")
    assert found.code == 0, found.stderr
    assert found.json["results"][0]["locator"].startswith("notes:area2/note-01234.md")
