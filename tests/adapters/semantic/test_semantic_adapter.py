"""The semantic adapter process with the real all-MiniLM-L6-v2 weights from its package.

The model comes with the default install; where it is missing (a broken install) these
are skipped, or fail under RECALL_TEST_SEMANTIC=1 (``scripts/test.sh``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from broker.config.init import semantic_extra_missing
from tests.support.adapter_process import AdapterError, AdapterProcess

if semantic_extra_missing() and os.environ.get("RECALL_TEST_SEMANTIC") == "1":
    raise RuntimeError(f"RECALL_TEST_SEMANTIC=1 but the semantic extra is missing: {semantic_extra_missing()}")
pytestmark = pytest.mark.skipif(
    bool(semantic_extra_missing()), reason=f"semantic extra not installed: {semantic_extra_missing()}"
)

NOTES = {
    "formatting/skip.md": "# Leaving code alone\n\nLines ending in `# fmt: skip` and blocks between"
    " `# fmt: off` and `# fmt: on` are never reformatted.\n",
    "ops/docker.md": "# Container images\n\nOfficial images are published on Docker Hub, tagged"
    " with each release number.\n",
    "style/quotes.md": "# Strings\n\nDouble quotes are preferred over single quotes.\n",
}

UNRELATED = {
    "garden.md": "# Garden\n\nTomatoes want full sun and deep watering twice a week.\n",
    "travel.md": "# Travel\n\nThe night train to Vienna leaves at ten; book a couchette early.\n",
    # uses a word of the paraphrase below ("file"), as a real folder would
    "budget.md": "# Budget\n\nThe hosting bill rose by a fifth after the storage upgrade; the invoice"
    " is a file in the shared drive.\n",
    "oncall.md": "# On call\n\nThe pager rotates every Monday at nine.\n",
    "hiring.md": "# Hiring\n\nTwo interviews, then a paid trial day with the team.\n",
    "backups.md": "# Backups\n\nNightly copies go to the offsite bucket.\n",
    "coffee.md": "# Coffee\n\nThe grinder on the third floor needs new burrs.\n",
    "bikes.md": "# Bikes\n\nThe shed by the gate is locked after eight in the evening.\n",
    # a program named after a bird: the model's nearest note for a question about birds
    "bird.md": "# bird\n\nBIRD Internet Routing Daemon.\nA routing daemon that speaks BGP, OSPF, Babel and"
    " more.\n\n- Start bird with a given configuration file:\n\n`bird -c path/to/bird.conf`\n",
}


def _wait_until_built(proc: AdapterProcess, seconds: float = 240.0) -> dict:
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        health = proc.health()
        if health["coverage"] == "complete":
            return health
        time.sleep(0.5)
    raise AssertionError("semantic index did not finish building")


@pytest.fixture(scope="module")
def semantic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AdapterProcess, dict]]:
    base = tmp_path_factory.mktemp("semantic")
    # the unrelated notes give a question a background to stand out from: in a folder of
    # three notes a chunk sharing no word with the question must reach the higher
    # meaning-only margin over a median of three similarities
    for rel, text in {**NOTES, **UNRELATED}.items():
        (base / "notes" / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / "notes" / rel).write_text(text)
    proc = AdapterProcess("semantic", "meaning", expand_detail="excerpt")
    try:
        manifest = proc.initialize(str(base / "notes"), str(base / "work"), {"lexical_source": "notes"})
        yield proc, manifest
    finally:
        proc.close()


def test_manifest_declares_vector_similarity(semantic: tuple[AdapterProcess, dict]) -> None:
    _, manifest = semantic
    assert manifest["relevance_basis"] == "vector_similarity"
    assert manifest["query_modes"] == ["semantic"]


def test_a_paraphrase_sharing_no_word_finds_the_chunk_by_meaning(semantic: tuple[AdapterProcess, dict]) -> None:
    proc, _ = semantic
    _wait_until_built(proc)
    result = proc.search("how do I stop the formatter from touching part of my file")
    top = result["candidates"][0]
    assert top["locator"] == "meaning:formatting/skip.md#L1-L3"
    assert top["derived_from"] == ["notes:formatting/skip.md#L1-L3"]
    assert top["match_signals"] == ["semantic"]
    bar = result["diagnostics"]["admission"]
    assert bar["least_similarity"] == round(bar["background"] + bar["margin"], 4)
    assert bar["least_similarity"] <= top["relevance"] == top["local_score"]
    assert top["metadata"]["margin"] >= bar["margin"]
    assert result["outcome"] == "success"


def test_a_question_whose_words_no_nearby_note_holds_admits_nothing_by_meaning_alone(
    semantic: tuple[AdapterProcess, dict],
) -> None:
    proc, _ = semantic
    _wait_until_built(proc)
    result = proc.search("moulting of songbirds")
    diagnostics = result["diagnostics"]
    # the model puts the routing daemon above even the meaning-only bar ...
    assert diagnostics["best_similarity"] >= diagnostics["admission"]["least_similarity_meaning_only"]
    # ... but no note near the question holds a word of it: nothing vouches for the match
    assert diagnostics["question_words_nearby"] is False
    assert diagnostics["withheld_meaning_only"] >= 1
    assert result["candidates"] == []


def test_a_question_about_nothing_here_admits_no_chunk(semantic: tuple[AdapterProcess, dict]) -> None:
    proc, _ = semantic
    _wait_until_built(proc)
    result = proc.search("sourdough starter hydration ratio")
    assert result["candidates"] == []
    assert result["diagnostics"]["best_similarity"] < result["diagnostics"]["admission"]["least_similarity"]


def test_a_search_during_the_first_build_is_partial_not_an_empty_success(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    for n in range(200):  # more than a search waits for
        (notes / f"n{n}.md").write_text(f"# Note {n}\n\n" + "words about container images " * 40)
    proc = AdapterProcess("semantic", "meaning", expand_detail="excerpt")
    try:
        proc.initialize(str(notes), str(tmp_path / "work"))
        result = proc.search("container images")
        assert result["outcome"] == "partial"
        assert result["reason"] == "index_building"
    finally:
        proc.close()


def test_a_missing_folder_is_refused_with_what_to_do(tmp_path: Path) -> None:
    proc = AdapterProcess("semantic", "meaning", expand_detail="excerpt")
    try:
        with pytest.raises(AdapterError, match="not a folder"):
            proc.initialize(str(tmp_path / "absent"), str(tmp_path / "work"))
    finally:
        proc.close()


def test_a_candidate_locator_expands_to_the_chunk_it_names(semantic: tuple[AdapterProcess, dict]) -> None:
    proc, _ = semantic
    _wait_until_built(proc)
    top = proc.search("images on docker hub for every release")["candidates"][0]
    expanded = proc.expand(top["locator"], "full")
    assert "Official images are published on Docker Hub" in expanded["content"]
    assert expanded["provenance"] == "ops/docker.md:L1-L3"
    with pytest.raises(AdapterError, match="no longer has a section"):
        proc.expand("meaning:ops/docker.md#L2-L9", "full")


def test_chunks_rank_by_their_own_similarity_whichever_note_holds_them(tmp_path: Path) -> None:
    # fusion reads these ranks: a note's second-best chunk must not be demoted below
    # every other note's best (the broker shows one note once, listing its chunks itself)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "changes.md").write_text("# Change log\n\n" + "".join(
        f"## {release}\n\n- Fix the formatting of long string literals in release {release}.\n\n"
        for release in ("24.1", "24.2", "24.3")
    ))
    (notes / "style.md").write_text(
        "# Style\n\n## Strings\n\nLong strings are split over several lines when they do not fit.\n"
    )
    for name, text in UNRELATED.items():  # the background a question is measured against
        (notes / name).write_text(text)
    proc = AdapterProcess("semantic", "meaning", expand_detail="excerpt")
    try:
        proc.initialize(str(notes), str(tmp_path / "work"), {"lexical_source": "notes"})
        _wait_until_built(proc)
        query = "formatting of long string literals"
        candidates = proc.search(query, limit=20)["candidates"]
        similarities = [c["local_score"] for c in candidates]
        assert similarities == sorted(similarities, reverse=True)
        assert [c["local_rank"] for c in candidates] == list(range(1, len(candidates) + 1))
        assert [c["source_record_id"] for c in candidates][:2] == ["changes.md", "changes.md"]
        assert sorted(c["source_record_id"] for c in candidates) == ["changes.md"] * 3 + ["style.md"]
        limited = [c["source_record_id"] for c in proc.search(query, limit=2)["candidates"]]
        assert limited == ["changes.md", "changes.md"]
    finally:
        proc.close()


def test_a_hit_shows_the_sentences_most_like_the_question_not_its_first_line(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "adr.md").write_text(
        "# ADR 7: backups go offsite\n\nStatus: accepted.\n\nDecided in the March review. Nightly"
        " copies of the database are shipped to a bucket in another region, so a lost data centre"
        " costs at most one day of changes. Restores are rehearsed every quarter.\n"
    )
    for name, text in UNRELATED.items():
        (notes / name).write_text(text)
    proc = AdapterProcess("semantic", "meaning", expand_detail="excerpt")
    try:
        proc.initialize(str(notes), str(tmp_path / "work"), {"lexical_source": "notes"})
        _wait_until_built(proc)
        top = proc.search("what happens if we lose the whole data center")["candidates"][0]
        assert top["source_record_id"] == "adr.md"
        assert top["excerpt_kind"] == "matched"
        assert top["excerpt"].startswith("Nightly copies of the database are shipped")
        assert "Status: accepted." not in top["excerpt"]
    finally:
        proc.close()
