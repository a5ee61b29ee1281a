"""Check that a pack's must-abstain questions share no content word with its corpus.

A must-abstain question is only fair when nothing in the corpus answers it, and
the mechanical half of that is: none of its content words (as the query
analyser keeps them) occurs, stemmed as the indexes stem, in any corpus file.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from broker.evaluation.pack import Case, Pack


def corpus_stems(root: Path) -> set[str]:
    """The stem of every word of every file under ``root``: the indexes match by stem."""
    from adapter_sdk.lexical import stemmed, tokenize

    words: set[str] = set()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            words |= {stemmed(t) for t in tokenize(path.read_text(encoding="utf-8", errors="replace"))}
    return words


def pool_cases(pack: Pack) -> list[Case]:
    """The cases of the pack's ``abstain_pool`` file (none when it has no pool)."""
    if not pack.manifest.abstain_pool:
        return []
    pool = pack.directory / pack.manifest.abstain_pool
    ids = {orjson.loads(line)["case_id"] for line in pool.read_bytes().splitlines() if line.strip()}
    return [case for case in pack.cases if case.case_id in ids]


def leaked_words(pack: Pack) -> dict[str, list[str]]:
    """Each abstain-pool case whose content words occur in the corpus, with those words' stems."""
    from adapter_sdk.lexical import analyze_query, stemmed

    corpus = corpus_stems(pack.directory / pack.manifest.sources_dir)
    leaked: dict[str, list[str]] = {}
    for case in pool_cases(pack):
        shared = sorted({stemmed(t) for t in analyze_query(case.query).content_terms} & corpus)
        if shared:
            leaked[case.case_id] = shared
    return leaked
