#!/usr/bin/env python3
"""Record (or re-record) one adapter's conformance suite, then replay it.

    python conformance_transcripts/record.py ADAPTER CASES [--only CASE ...] [--out DIR]

CASES is a dotted module name or a path to a ``.py`` file defining:

* ``ARGV`` — the command that starts the adapter (``list[str]``);
* ``CASES`` — a list of :class:`adapter_sdk.conformance.CaseSpec`;
* optionally ``ENV`` — extra environment for every case (``dict[str, str]``).

Cases are written to ``conformance_transcripts/ADAPTER/<case>/`` unless
``--out`` says otherwise. Example, for the SDK's own sample adapter:

    python conformance_transcripts/record.py sample tests/conformance/sample_cases.py --out /tmp/sample
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from adapter_sdk.conformance import ConformanceError, record_suite, replay_suite

HERE = Path(__file__).resolve().parent


def load_cases(reference: str) -> ModuleType:
    if reference.endswith(".py"):
        path = Path(reference).resolve()
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise SystemExit(f"cannot load case module {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    return importlib.import_module(reference)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Record one adapter's conformance suite.")
    parser.add_argument("adapter", help="adapter name: the suite directory under conformance_transcripts/")
    parser.add_argument("cases", help="module (dotted name or .py path) defining ARGV and CASES")
    parser.add_argument("--only", nargs="+", metavar="CASE", help="record only these cases")
    parser.add_argument("--out", type=Path, help="suite directory (default conformance_transcripts/ADAPTER)")
    args = parser.parse_args(argv)

    module = load_cases(args.cases)
    suite = args.out or HERE / args.adapter
    cases = [case for case in module.CASES if not args.only or case.name in args.only]
    unknown = set(args.only or ()) - {case.name for case in module.CASES}
    if unknown:
        print(f"no such case in {args.cases}: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    env = getattr(module, "ENV", None)
    try:
        for case_dir in record_suite(suite, module.ARGV, cases, env=env):
            print(f"recorded  {case_dir.name}")
        results = replay_suite(suite, module.ARGV, env=env)
    except ConformanceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    failed = [result for result in results if not result.passed]
    for result in failed:
        print(f"FAIL  {result.detail}")
    for case_dir in sorted(path for path in suite.iterdir() if path.is_dir()):
        responses = (case_dir / "response.jsonl").read_text(encoding="utf-8")
        if "${FIXTURE}" in responses or "${WORKDIR}" in responses:
            print(
                f"note  {case_dir.name}: responses carry a run path as a placeholder; engines "
                "that bind placeholders in requests only will not replay this case"
            )
    print(f"{len(results) - len(failed)} of {len(results)} cases in {suite} replay as recorded")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
