"""The leg's admission rule on real corpora: every must-abstain question of the evaluation
packs admits no chunk, while a paraphrase in other words than its answer is admitted.

The bar is the question's background similarity to the corpus plus a margin
(``adapters/semantic/admission.py``), so it differs per corpus and per question; these
packs' folders are the ones it was tuned on (``eval/README.md``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from broker.config.init import semantic_extra_missing
from tests.support.adapter_process import AdapterProcess

pytestmark = pytest.mark.skipif(
    bool(semantic_extra_missing()) and os.environ.get("RECALL_TEST_SEMANTIC") != "1",
    reason=f"the semantic leg's model is missing: {semantic_extra_missing()}",
)

PACKS = Path(__file__).resolve().parents[3] / "eval" / "packs"
FOLDERS = {
    "retrieval": PACKS / "retrieval" / "sources" / "notes",
    "black-docs": PACKS / "black-docs" / "sources" / "black",
    # a command reference: one must-abstain question's second word splits into word
    # pieces the first of which names a page, whose chunk clears the plain margin and
    # is withheld because nothing in that page shares a word with the question
    "man-pages": PACKS / "man-pages" / "sources" / "man",
    # 6,642 short pages: questions about animals whose nearest pages are programs named
    # after them ("moulting of songbirds": a routing daemon called BIRD, margin 0.42, over
    # the meaning-only margin); none of their words occurs near them, so nothing is admitted
    "tldr-pages": PACKS / "tldr-pages" / "sources" / "pages",
}
# a question in other words than its answer, per pack, and the note that answers it
PARAPHRASES = {
    "retrieval": ("how do we practise recovering a service from backup", "backups/restore-drill-runbook.md"),
    "black-docs": ("how do I install black so it can format notebooks",
                   "docs/guides/using_black_with_jupyter_notebooks.md"),
    "man-pages": ("how big is this directory including everything in it", "du.md"),
    "tldr-pages": ("create a new ssh key pair", "common/ssh-keygen.md"),
}


def _abstain_questions(pack: str) -> list[str]:
    lines = (PACKS / pack / "abstain_pool.jsonl").read_text().splitlines()
    return [json.loads(line)["query"] for line in lines if line.strip()]


@pytest.fixture(scope="module", params=sorted(FOLDERS))
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, AdapterProcess]]:
    pack = request.param
    proc = AdapterProcess("semantic", "meaning", expand_detail="excerpt")
    try:
        proc.initialize(str(FOLDERS[pack]), str(tmp_path_factory.mktemp(pack)), {"lexical_source": "docs"})
        stop = time.monotonic() + 900  # the build runs in the background from initialize
        while proc.health()["coverage"] != "complete":
            assert time.monotonic() < stop, "the embeddings were not built in time"
            time.sleep(1.0)
        yield pack, proc
    finally:
        proc.close()


def test_every_must_abstain_question_admits_no_chunk(built: tuple[str, AdapterProcess]) -> None:
    pack, proc = built
    questions = _abstain_questions(pack)
    assert len(questions) >= 10
    admitted = {}
    for question in questions:
        result = proc.search(question)
        if result["candidates"]:
            admitted[question] = [c["locator"] for c in result["candidates"]]
    assert admitted == {}


def test_a_paraphrase_clears_the_same_bar(built: tuple[str, AdapterProcess]) -> None:
    pack, proc = built
    question, answer = PARAPHRASES[pack]
    candidates = proc.search(question)["candidates"]
    assert answer in [c["source_record_id"] for c in candidates[:5]]
