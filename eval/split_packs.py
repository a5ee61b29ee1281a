"""Give every case of a judged pack its half: ``"split": "tuning"`` or ``"held-out"``.

    python eval/split_packs.py eval/packs/NAME...

Deterministic and independent of file order: within each expected behaviour
(answer, abstain), cases are ordered by the SHA-256 of their case id and take
the halves in turn, so each half gets as many must-abstain cases as the other
(to one). A case that already has a split keeps it, so adding cases later
never moves an old one between halves. Files are rewritten in place, one JSON
object a line, fields in their order with ``split`` last.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HALVES = ("tuning", "held-out")


def _key(case_id: str) -> str:
    return hashlib.sha256(case_id.encode()).hexdigest()


def assign(cases: list[dict]) -> None:
    for behavior in sorted({c["expected_behavior"] for c in cases}):
        group = [c for c in cases if c["expected_behavior"] == behavior]
        counts = {half: sum(c.get("split") == half for c in group) for half in HALVES}
        for case in sorted((c for c in group if "split" not in c), key=lambda c: _key(c["case_id"])):
            half = min(HALVES, key=lambda h: (counts[h], HALVES.index(h)))
            case["split"] = half
            counts[half] += 1


def split_pack(pack_dir: Path) -> None:
    manifest = json.loads((pack_dir / "pack.json").read_text(encoding="utf-8"))
    files = [pack_dir / manifest["cases"]]
    if manifest.get("abstain_pool"):
        files.append(pack_dir / manifest["abstain_pool"])
    rows = {path: [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            for path in files}
    assign([case for group in rows.values() for case in group])
    for path, group in rows.items():
        path.write_text("".join(json.dumps(case, ensure_ascii=False) + "\n" for case in group), encoding="utf-8")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        split_pack(Path(arg))
