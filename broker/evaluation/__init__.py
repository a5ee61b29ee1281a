"""Evaluation: judged query packs run through the application layer, scored and compared.

    pack.py       load and validate a pack (manifest, cases, judgments, configuration)
    hashing.py    the pack's content hash (the reference's definition)
    replayed_source.py  a source answered from the pack's recorded transcript
    runner.py     one QueryRequest per case through Broker.query, then expand each result
    scoring.py    a case's ranked list, metrics and assertion violations
    metrics.py    metric definitions and aggregation (undefined is None, never 0)
    gates.py      absolute checks a run must pass
    execute.py    a whole run
    compare.py    a run against a baseline: any rate that drops is a regression
    report.py     summary.md and comparison text
    artifacts.py  run.json, cases.jsonl, summary.md on disk
"""
