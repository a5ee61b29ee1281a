"""The snapshot cache keeps each task's stems, so a new process searches without
stemming every task again; stems another analyzer made are never used."""

from __future__ import annotations

import json
from pathlib import Path

from adapters.tasks.ranking import STEMS_ANALYZER, RecordIndex, record_stems, stems_fit
from adapters.tasks.snapshot import CACHE_FILE, SnapshotStore, Stemming
from adapters.tasks.task_record import TaskRecord
from adapters.tasks.todotxt import read_list

from .conftest import OpenAdapter
from .test_todotxt import DONE, TODO


class CountingStemmer:
    """``record_stems``, counting the records it was asked to stem."""

    def __init__(self) -> None:
        self.stemmed = 0

    def __call__(self, records: list[TaskRecord]) -> list[object]:
        self.stemmed += len(records)
        return list(record_stems(records))


def todo_store(folder: Path, workdir: Path, stemmer: CountingStemmer, analyzer: str = STEMS_ANALYZER) -> SnapshotStore:
    todo = folder / "todo.txt"

    def load(contents: dict[str, bytes], _timeout: float) -> tuple[list[TaskRecord], list[str]]:
        parsed = read_list(todo, contents)
        return parsed.records, parsed.unparsed_lines

    return SnapshotStore(
        [todo, folder / "done.txt"], workdir, f"todotxt:{todo}", load, Stemming(stemmer, analyzer, stems_fit)
    )


def write_list(tmp_path: Path) -> Path:
    folder = tmp_path / "list"
    folder.mkdir()
    (folder / "todo.txt").write_text(TODO)
    (folder / "done.txt").write_text(DONE)
    return folder


def test_a_new_process_takes_the_stems_from_the_cache(tmp_path: Path) -> None:
    folder, workdir = write_list(tmp_path), tmp_path / "w"
    first = CountingStemmer()
    loaded = todo_store(folder, workdir, first).current(5.0)
    assert (loaded.basis, first.stemmed) == ("loaded", len(loaded.records))

    later = CountingStemmer()
    cached = todo_store(folder, workdir, later).current(5.0)
    assert (cached.basis, later.stemmed) == ("cache", 0)
    assert cached.records == loaded.records
    assert cached.stems == loaded.stems
    assert RecordIndex(cached.records, cached.stems).postings == RecordIndex(loaded.records).postings


def test_stems_another_analyzer_made_are_made_again_and_cached_anew(tmp_path: Path) -> None:
    folder, workdir = write_list(tmp_path), tmp_path / "w"
    todo_store(folder, workdir, CountingStemmer(), analyzer="an older analyzer").current(5.0)

    stemmer = CountingStemmer()
    snapshot = todo_store(folder, workdir, stemmer).current(5.0)
    assert (snapshot.basis, stemmer.stemmed) == ("cache", len(snapshot.records))
    kept = json.loads((workdir / CACHE_FILE).read_text())
    assert kept["analyzer"] == STEMS_ANALYZER

    again = CountingStemmer()
    todo_store(folder, workdir, again).current(5.0)
    assert again.stemmed == 0


def test_stems_of_the_wrong_shape_are_made_again(tmp_path: Path) -> None:
    folder, workdir = write_list(tmp_path), tmp_path / "w"
    todo_store(folder, workdir, CountingStemmer()).current(5.0)
    cache = workdir / CACHE_FILE
    kept = json.loads(cache.read_text())
    kept["stems"] = [["not", "packed"], 7, "no parts", *kept["stems"][3:]]
    cache.write_text(json.dumps(kept))

    stemmer = CountingStemmer()
    snapshot = todo_store(folder, workdir, stemmer).current(5.0)
    assert stemmer.stemmed == len(snapshot.records)
    assert RecordIndex(snapshot.records, snapshot.stems).postings == RecordIndex(snapshot.records).postings


def test_a_search_from_cached_stems_answers_as_one_that_stemmed(
    open_adapter: OpenAdapter, tmp_path: Path
) -> None:
    folder, workdir = write_list(tmp_path), tmp_path / "w"
    fresh = open_adapter(folder / "todo.txt", workdir=workdir).search("restoring drills")
    cached = open_adapter(folder / "todo.txt", workdir=workdir).search("restoring drills")
    assert (fresh["diagnostics"]["snapshot"], cached["diagnostics"]["snapshot"]) == ("loaded", "cache")
    assert [c["title"] for c in cached["candidates"]] == [c["title"] for c in fresh["candidates"]]
    assert [c["title"] for c in cached["candidates"]] == [
        "Run the quarterly restore drill for the wiki database +backup @infra due:2026-12-05"
    ]



def test_a_damaged_cache_is_rebuilt_from_the_store_whatever_it_holds(tmp_path: Path) -> None:
    folder, workdir = write_list(tmp_path), tmp_path / "w"
    todo_store(folder, workdir, CountingStemmer()).current(5.0)
    cache = workdir / CACHE_FILE
    kept = json.loads(cache.read_text())
    for damage in (["not a record"], [["a", "list"]], {"a": "table"}):
        cache.write_text(json.dumps({**kept, "records": damage}))
        assert todo_store(folder, workdir, CountingStemmer()).current(5.0).basis == "loaded"
    for text in ('{"format": 2, "records": [', "[]", "\u0000 not json"):
        cache.write_text(text)
        assert todo_store(folder, workdir, CountingStemmer()).current(5.0).basis == "loaded"
    cache.write_text(json.dumps({**kept, "stems": "\t" * len(kept["stems"])}))
    rebuilt = todo_store(folder, workdir, CountingStemmer()).current(5.0)
    assert RecordIndex(rebuilt.records, rebuilt.stems).postings == RecordIndex(rebuilt.records).postings


def test_the_stems_a_cache_keeps_are_the_ones_its_analyzer_name_stands_for() -> None:
    """Fails when tokenizing or stemming changes: then change STEMS_ANALYZER too, so that
    caches made before are stemmed again rather than searched with the old stems."""
    records = [
        TaskRecord(
            record_id="r1", description="Rotate the Café's **TLS** certificates, [s]ave logs",
            status="pending", projects=("infra.certs",), tags=("security",), contexts=("ops",),
        ),
        TaskRecord(record_id="r2", description="ｆｕｌｌ-width ＡＢＣ and 東京の会議", status="pending"),
    ]
    assert STEMS_ANALYZER == "unicode-words+unmark+porter/1"
    assert record_stems(records) == [
        "rotat the cafe s tl certif save log\tinfra cert secur op",
        "full width abc and 東 京 の 会 議\t",
    ]
