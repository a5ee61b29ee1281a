"""recall eval: validate and run judged query packs, and compare runs with baselines."""

from __future__ import annotations

import argparse
from pathlib import Path

from broker.surfaces.commands._common import add_json, print_json
from broker.surfaces.streams import Streams

HELP = "run and compare evaluation packs"
DESCRIPTION = """Validate and run judged query packs, and compare a run with a baseline.

  recall eval validate --pack DIR      (also: no must-abstain word in the corpus)
  recall eval run --pack DIR [--split tuning|held-out] [--out DIR] [--json]
  recall eval compare BASELINE RUN [--json]

A pack holds pack.json, cases.jsonl, judgments.jsonl and its own configuration
(sources/config.toml, where ${PACK} is the pack directory and ${PYTHON} this
interpreter). A judged pack's cases are split into a tuning half and a
held-out half (each case's "split"); a run reports both, --split runs one. A
run writes run.json, cases.jsonl and summary.md to --out
(default $XDG_STATE_HOME/recall/eval/<run_id>). BASELINE and RUN are run
directories or run.json files.

To re-record a baseline deliberately, in the same change as what moved it:
  recall eval run --pack eval/packs/NAME --out eval/baselines/NAME

Exit: 0 all gates passed / nothing regressed; 1 the command could not run
(bad pack, unreadable run); 3 a gate failed, the runs are not comparable, or a
rate dropped. Latency is recorded but never gates."""

ACTIONS = ("validate", "run", "compare")
GATE_FAILED = 3


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=ACTIONS, help="validate | run | compare")
    parser.add_argument("runs", nargs="*", metavar="RUN", help="compare: BASELINE RUN")
    parser.add_argument("--pack", metavar="DIR", help="the pack directory (validate, run)")
    parser.add_argument("--split", choices=("tuning", "held-out"), help="run: only the cases of this half")
    parser.add_argument("--out", "--output", dest="out", metavar="DIR", help="where a run writes its artifacts")
    add_json(parser)


def run(args: argparse.Namespace, io: Streams) -> int:
    from broker.errors import UsageError

    if args.split and args.action != "run":
        raise UsageError("--split applies to eval run only")
    if args.action != "compare" and args.runs:
        raise UsageError(f"eval {args.action} takes no positional arguments; use --pack DIR")
    if args.action == "compare":
        return _compare(args, io)
    if not args.pack:
        raise UsageError(f"eval {args.action} needs --pack DIR")
    if args.action == "validate":
        return _validate(args, io)
    return _run(args, io)


def _validate(args: argparse.Namespace, io: Streams) -> int:
    import tempfile

    from broker.evaluation.abstain_pool import leaked_words
    from broker.evaluation.hashing import content_hash
    from broker.evaluation.pack import PackError, check_against_config, load_pack

    pack = load_pack(Path(args.pack))
    with tempfile.TemporaryDirectory(prefix="recall-eval-") as scratch:
        check_against_config(pack, pack.config(Path(scratch)))
    leaked = leaked_words(pack)
    if leaked:
        raise PackError(pack.directory, [
            f"{pack.manifest.abstain_pool}: must-abstain case {case_id} shares words with the corpus: "
            + ", ".join(stems) for case_id, stems in leaked.items()
        ])
    judged = sum(len(j) for j in pack.judgments.values())
    digest = content_hash(pack)
    if args.json:
        print_json(io, {"pack_id": pack.pack_id, "valid": True, "cases": len(pack.cases),
                    "judgments": judged, "content_hash": digest})
    else:
        io.stdout.write(f"pack {pack.pack_id} {pack.manifest.version}: valid, {len(pack.cases)} cases, "
                        f"{judged} judgments, {digest[:19]}\n")
    return 0


def _run(args: argparse.Namespace, io: Streams) -> int:
    from broker.evaluation.artifacts import write_run
    from broker.evaluation.execute import run_pack
    from broker.evaluation.human_text import summary_markdown
    from broker.evaluation.pack import load_pack

    pack = load_pack(Path(args.pack))
    result = run_pack(pack, args.split)
    out = Path(args.out) if args.out else _default_out(result.run["run_id"])
    write_run(result, out)
    if args.json:
        print_json(io, result.run)
    else:
        io.stdout.write(summary_markdown(result.run) + f"\nartifacts: {out}\n")
    return 0 if result.passed else GATE_FAILED


def _default_out(run_id: str) -> Path:
    import os

    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "recall" / "eval" / run_id


def _compare(args: argparse.Namespace, io: Streams) -> int:
    from broker.errors import UsageError
    from broker.evaluation.artifacts import read_run
    from broker.evaluation.compare import compare_runs
    from broker.evaluation.human_text import comparison_text

    if len(args.runs) != 2:
        raise UsageError("eval compare takes two runs: BASELINE RUN (directories or run.json files)")
    baseline, baseline_cases = read_run(Path(args.runs[0]))
    candidate, candidate_cases = read_run(Path(args.runs[1]))
    comparison = compare_runs(baseline, candidate, baseline_cases, candidate_cases)
    if args.json:
        print_json(io, comparison.to_json())
    else:
        io.stdout.write(comparison_text(comparison))
    return 0 if comparison.status == "pass" else GATE_FAILED
