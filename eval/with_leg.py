"""Run a judged pack as the default install would search it: the notes source plus its meaning leg.

The committed packs configure the notes source alone. ``recall init --notes DIR``
also writes a ``notes-meaning`` source (adapter ``semantic``, ``lexical_source``
naming the notes source) over the same folder, in the same profile. This script
copies a pack to a temporary folder, adds that source to the copy's
``sources/config.toml`` beside each notes source of the pack's profile, builds
the embeddings the way ``recall refresh`` does, and then runs ``recall eval run``
on the copy. The committed pack is never changed.

An evaluation runs against a fresh state directory, and the leg never waits for
its first build inside a search (it answers ``partial`` while it embeds), so the
copy's leg keeps its embeddings in ``--store`` (default: a temporary folder kept
for the run); the refresh before the run fills it and the run's adapter finds
every chunk embedded. The script fails if any case still saw the leg partial.

    python eval/with_leg.py eval/packs/man-pages --out /tmp/man-pages-leg [--split held-out]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import tomlkit

LEG_ADAPTER = "semantic"
LEG_SUFFIX = "-meaning"


def add_leg(config_file: Path, profile_name: str) -> list[str]:
    """Add a meaning leg beside every notes source of ``profile_name``; return the legs' source ids."""
    document = tomlkit.parse(config_file.read_text(encoding="utf-8"))
    profile = document["profiles"][profile_name]
    added = []
    for source in list(document["sources"]):
        if source["adapter"] != "notes" or source["source_id"] not in profile["sources"]:
            continue
        leg_id = "notes-meaning" if source["source_id"] == "notes" else f"{source['source_id']}{LEG_SUFFIX}"
        leg = tomlkit.table()
        leg.add("source_uid", f"{source['source_uid']}-MEANING")
        leg.add("source_id", leg_id)
        leg.add("adapter", LEG_ADAPTER)
        leg.add("location", source["location"])
        leg.add("location_kind", "path")
        leg.add("freshness_mode", "indexed")
        leg.add("sensitivity", "internal")
        leg.add("base_prior", 1.0)
        settings = tomlkit.table()
        settings.add("lexical_source", source["source_id"])
        settings.add("store_dir", "${PACK}/../embeddings")
        leg.add("settings", settings)
        document["sources"].append(leg)
        profile["sources"].append(leg_id)
        added.append(leg_id)
    if not added:
        raise SystemExit(f"{config_file}: profile {profile_name!r} has no notes source to add a leg to")
    config_file.write_text(tomlkit.dumps(document), encoding="utf-8")
    return added


def build_embeddings(pack_dir: Path, legs: list[str]) -> None:
    """Refresh every source of the pack's profile, as ``recall refresh`` does, until the legs are complete."""
    from broker.app import open_broker
    from broker.contracts import RefreshRequest
    from broker.evaluation.pack import load_pack

    pack = load_pack(pack_dir)

    async def refresh() -> list[tuple[str, str, object]]:
        with tempfile.TemporaryDirectory(prefix="recall-leg-build-") as scratch:
            config = pack.config(Path(scratch))
            async with open_broker(config) as broker:
                response = await broker.refresh(RefreshRequest(profile=pack.manifest.profile or ""))
        return [(row.source_id, str(row.status), row.health.coverage if row.health else None)
                for row in response.sources]

    for attempt in range(1, 7):  # a refresh embeds for up to ten minutes, then the rest goes on
        rows = anyio.run(refresh)
        print(f"refresh {attempt}: " + ", ".join(f"{sid} {status} coverage={cov}" for sid, status, cov in rows),
              file=sys.stderr)
        if all(str(cov).endswith("complete") for sid, _, cov in rows if sid in legs):
            return
    raise SystemExit(f"{pack_dir}: the leg's embeddings were not complete after six refreshes")


def partial_leg_cases(out: Path, legs: list[str]) -> list[str]:
    """The cases in which a leg answered anything but success (a partial index, a failure)."""
    seen = []
    for line in (out / "cases.jsonl").read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        for outcome in case.get("source_outcomes") or []:
            if outcome["source_id"] in legs and outcome["outcome"] not in ("success",):
                seen.append(f"{case['case_id']}: {outcome['source_id']} {outcome['outcome']} ({outcome['reason']})")
    return seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack", type=Path, help="the committed pack's directory")
    parser.add_argument("--out", type=Path, required=True, help="where recall eval run writes the run")
    parser.add_argument("--split", choices=["tuning", "held-out"], help="run one half only")
    parser.add_argument("--keep", type=Path, help="copy the pack here (and keep it) instead of a temporary folder")
    args = parser.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix=f"recall-leg-{args.pack.name}-"))
    copy = work / args.pack.name
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(args.pack, copy)
    manifest = json.loads((copy / "pack.json").read_text(encoding="utf-8"))
    legs = add_leg(copy / manifest.get("sources", "sources") / "config.toml", manifest["profile"])
    try:
        build_embeddings(copy, legs)
        command = [str(Path(sys.executable).with_name("recall")), "eval", "run", "--pack", str(copy), "--out", str(args.out)]
        if args.split:
            command += ["--split", args.split]
        status = subprocess.run(command, check=False).returncode
        partial = partial_leg_cases(args.out, legs)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    if partial:
        print(f"{len(partial)} cases saw the leg incomplete; the run does not measure the default install:",
              *partial[:10], sep="\n  ", file=sys.stderr)
        return 3
    return status


if __name__ == "__main__":
    sys.exit(main())
