"""The notes adapter as the broker sees it: a real process spoken to over stdio."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .adapter_process import NotesProcess, RpcFailure
from .conftest import OLD_MTIME, write_note


def test_handshake_builds_the_index(adapter: NotesProcess, workdir: Path) -> None:
    health = adapter.health()
    assert health["status"] == "healthy"
    assert health["coverage"] == "complete"
    assert health["indexed_count"] == 5
    assert health["index_generation"].startswith("gen-")
    assert health["source_watermark"].startswith("fs:")
    assert health["diagnostics"]["folder"].startswith("dir:")
    assert "store_identity" not in health["diagnostics"]  # views of one folder are allowed
    assert (workdir / "notes-index.sqlite3").is_file()


def test_manifest_declares_the_notes_contract(shared: NotesProcess) -> None:
    manifest = shared.manifest
    assert manifest["adapter_id"] == "recall-notes/1"
    assert manifest["record_types"] == ["document"]
    assert manifest["as_of_support"] == "filter"
    assert manifest["capabilities"] == ["search", "expand", "checkpoint"]
    assert manifest["settings_schema"]["additionalProperties"] is False


def test_search_hit_carries_locator_title_and_matched_excerpt(shared: NotesProcess) -> None:
    result = shared.search("pgbackrest standby")
    assert result["outcome"] == "success"
    top = result["candidates"][0]
    assert top["locator"] == "notes:runbooks/restore.md#L12-L15"
    assert top["title"] == "Restore runbook > Point in time"
    assert top["excerpt_kind"] == "matched"
    assert "pgbackrest restore" in top["excerpt"]
    assert top["source_record_id"] == "runbooks/restore.md"
    assert 0 < top["relevance"] <= 1
    assert result["source_watermark"] == shared.health()["source_watermark"]


def test_natural_language_question_drops_function_words(shared: NotesProcess) -> None:
    result = shared.search("how do we restore the Gitea repositories?")
    assert "how" in result["diagnostics"]["query_terms_removed"]
    assert result["diagnostics"]["query_terms_required"] == 2
    assert result["candidates"][0]["locator"] == "notes:runbooks/restore.md#L17-L19"


def test_question_of_only_scaffolding_and_one_stray_term_finds_nothing(shared: NotesProcess) -> None:
    # "what did we do about the wiki and the cluster" needs two content terms in one chunk
    result = shared.search("what did the standby say about lunch")
    assert result["candidates"] == []
    assert result["outcome"] == "success"


def test_file_name_is_an_exact_identifier(shared: NotesProcess) -> None:
    result = shared.search("adr-004-pgbackrest.md")
    top = result["candidates"][0]
    assert top["source_record_id"] == "decisions/adr-004-pgbackrest.md"
    assert "exact_identifier" in top["match_signals"]


def test_exact_name_without_text_match_gets_a_preview(shared: NotesProcess) -> None:
    top = shared.search("2024-05-06")["candidates"][0]
    assert top["source_record_id"] == "meetings/2024-05-06.md"
    assert top["match_signals"] == ["exact_identifier"]
    assert top["excerpt_kind"] == "preview"


def test_one_word_file_stem_is_prose_not_an_identifier(shared: NotesProcess) -> None:
    top = shared.search("restore")["candidates"][0]
    assert "exact_identifier" not in top["match_signals"]


def test_alias_is_an_exact_identifier_with_alias_signal(shared: NotesProcess) -> None:
    top = shared.search("notes on the quarterly restore")["candidates"][0]
    assert top["source_record_id"] == "runbooks/restore.md"
    assert {"exact_identifier", "alias"} <= set(top["match_signals"])


def test_front_matter_id_is_an_exact_identifier(shared: NotesProcess) -> None:
    top = shared.search("RB-7")["candidates"][0]
    assert top["source_record_id"] == "runbooks/restore.md"
    assert "exact_identifier" in top["match_signals"]


def test_front_matter_fields_on_candidates(shared: NotesProcess) -> None:
    top = shared.search("pgbackrest standby")["candidates"][0]
    metadata = top["metadata"]
    assert metadata["tags"] == ["backup", "postgres"]
    assert metadata["aliases"] == ["Quarterly restore"]
    assert metadata["note_id"] == "RB-7"
    assert metadata["heading_path"] == ["Restore", "Point in time"]
    assert metadata["path"] == "runbooks/restore.md"
    assert metadata["project"] == "runbooks"
    assert top["valid_from"] == "2024-02-01T00:00:00Z"


def test_valid_until_becomes_valid_to_at_end_of_day(shared: NotesProcess) -> None:
    top = shared.search("Borg nightly dumps")["candidates"][0]
    assert top["source_record_id"] == "decisions/adr-001-borg.md"
    assert top["valid_to"] == "2024-03-31T23:59:59.999999Z"


def test_supersedes_resolves_to_a_display_locator(shared: NotesProcess) -> None:
    top = shared.search("continuous archiving")["candidates"][0]
    assert top["metadata"]["supersedes"] == ["notes:decisions/adr-001-borg.md"]


def test_ambiguous_supersedes_stem_is_reported_not_guessed(
    process: NotesProcess, notes_dir: Path, workdir: Path
) -> None:
    write_note(notes_dir, "archive/adr-001-borg.md", "# Old copy\n\nBorg notes.\n")
    process.initialize(str(notes_dir), str(workdir))
    result = process.search("continuous archiving")
    top = result["candidates"][0]
    assert "supersedes" not in top["metadata"]
    issue = result["diagnostics"]["supersedes_unresolved"][0]
    assert issue["ambiguous"] == ["archive/adr-001-borg.md", "decisions/adr-001-borg.md"]
    assert process.health()["diagnostics"]["supersedes_unresolved"] == [issue]


def test_edited_note_is_reindexed_alone(process: NotesProcess, notes_dir: Path, workdir: Path) -> None:
    adapter = process
    adapter.initialize(str(notes_dir), str(workdir), {"watch": False})
    assert adapter.health()["indexed_count"] == 5  # the first build is done
    write_note(notes_dir, "meetings/2024-05-06.md", "# Infra sync\n\nWe chose zookeeper.\n", None)
    result = adapter.search("zookeeper")
    assert result["candidates"][0]["source_record_id"] == "meetings/2024-05-06.md"
    assert result["diagnostics"]["files_read"] == 1
    assert result["diagnostics"]["files_reindexed"] == 1
    assert adapter.search("rehearsal")["candidates"] == []


def test_added_note_is_found_without_rebuild(adapter: NotesProcess, notes_dir: Path) -> None:
    before = adapter.health()["index_generation"]
    write_note(notes_dir, "homelab/ups.md", "# UPS\n\nThe battery test passed.\n", None)
    result = adapter.search("battery test")
    assert result["candidates"][0]["locator"] == "notes:homelab/ups.md#L1-L3"
    assert result["diagnostics"]["files_reindexed"] == 1
    assert result["diagnostics"]["generation"] != before


def test_deleted_note_disappears(adapter: NotesProcess, notes_dir: Path) -> None:
    (notes_dir / "ideas.txt").unlink()
    result = adapter.search("Alertmanager status page")
    assert result["candidates"] == []
    assert result["diagnostics"]["files_removed"] == 1
    assert result["diagnostics"]["files_read"] == 0


def test_unchanged_folder_reads_nothing(process: NotesProcess, notes_dir: Path, workdir: Path) -> None:
    process.initialize(str(notes_dir), str(workdir), {"watch": False})
    process.health()  # the first build is done
    result = process.search("restic")
    assert result["diagnostics"]["freshness"]["mode"] == "swept"
    assert result["diagnostics"]["files_read"] == 0
    assert result["diagnostics"]["files_scanned"] == 5


def test_watermark_is_stable_across_a_full_rebuild(adapter: NotesProcess) -> None:
    before = adapter.health()
    after = adapter.refresh(full=True)
    assert after["source_watermark"] == before["source_watermark"]
    assert after["index_generation"] != before["index_generation"]
    assert after["checkpoint_progress"] == "advanced"
    assert after["diagnostics"]["files_reindexed"] == 5


def test_refresh_without_changes_is_unchanged(shared: NotesProcess) -> None:
    assert shared.refresh()["checkpoint_progress"] == "unchanged"


def test_as_of_excludes_notes_modified_later(adapter: NotesProcess, notes_dir: Path) -> None:
    write_note(notes_dir, "late.md", "# Late\n\nrestic retention changed\n", None)
    found = adapter.search("restic", as_of="2024-06-01T00:00:00Z")
    assert {c["source_record_id"] for c in found["candidates"]} == {"runbooks/restore.md"}
    assert found["diagnostics"]["as_of"] == "filter_on_mtime"
    assert len(adapter.search("restic")["candidates"]) == 2


def test_since_and_until_filter_on_mtime(adapter: NotesProcess, notes_dir: Path) -> None:
    write_note(notes_dir, "late.md", "# Late\n\nrestic retention changed\n", None)
    since = adapter.search("restic", filters={"since": "2025-01-01T00:00:00Z"})
    assert [c["source_record_id"] for c in since["candidates"]] == ["late.md"]
    until = adapter.search("restic", filters={"until": "2024-06-01T00:00:00Z"})
    assert [c["source_record_id"] for c in until["candidates"]] == ["runbooks/restore.md"]


def test_project_filter_is_the_first_path_segment(shared: NotesProcess) -> None:
    result = shared.search("backup", filters={"project": "Decisions"})
    assert {c["metadata"]["project"] for c in result["candidates"]} == {"decisions"}


def test_entities_filter_needs_every_token(shared: NotesProcess) -> None:
    both = shared.search("restore", filters={"entities": ["Gitea repositories"]})
    assert [c["locator"] for c in both["candidates"]] == ["notes:runbooks/restore.md#L17-L19"]
    assert shared.search("restore", filters={"entities": ["Gitea kubernetes"]})["candidates"] == []


def test_record_type_mismatch_is_skipped(shared: NotesProcess) -> None:
    result = shared.search("restore", filters={"record_types": ["task"]})
    assert result["outcome"] == "skipped"
    assert result["reason"] == "record_type_mismatch"
    assert result["candidates"] == []


def test_expand_levels_widen(shared: NotesProcess) -> None:
    locator = "notes:runbooks/restore.md#L12-L15"
    summary = shared.expand(locator, "summary")["content"]
    excerpt = shared.expand(locator, "excerpt")
    context = shared.expand(locator, "context")
    assert summary == "Restore runbook > Point in time\nRun pgbackrest restore with a target time on the standby host."
    assert excerpt["content"].startswith("## Point in time\n\nRun pgbackrest")
    assert excerpt["provenance"] == "runbooks/restore.md:L12-L15"
    assert excerpt["source_revision"].startswith("sha256:")
    assert excerpt["content"] in context["content"]
    assert context["provenance"] == "runbooks/restore.md:L1-L19"


def test_expand_excerpt_is_capped_at_twelve_lines(process: NotesProcess, notes_dir: Path, workdir: Path) -> None:
    write_note(notes_dir, "long.md", "# Long\n" + "".join(f"line {i}\n" for i in range(30)))
    process.initialize(str(notes_dir), str(workdir))
    excerpt = process.expand("notes:long.md#L1-L31", "excerpt")
    assert excerpt["truncated"] is True
    assert excerpt["truncation_boundary"] == "excerpt_lines"
    assert excerpt["content"].count("\n") == 12
    assert process.expand("notes:long.md#L1-L31", "full")["content"].count("\n") == 30


def test_expand_budget_cuts_the_content(shared: NotesProcess) -> None:
    result = shared.expand("notes:runbooks/restore.md#L12-L15", "full", budget_bytes=80)
    assert result["truncated"] is True
    assert result["truncation_boundary"] == "budget_bytes"
    assert len(result["content"].encode()) <= 80


def test_expand_budget_below_minimum_is_refused(shared: NotesProcess) -> None:
    with pytest.raises(RpcFailure) as failure:
        shared.expand("notes:runbooks/restore.md#L12-L15", "full", budget_bytes=10)
    assert failure.value.code == -32006


def test_expand_of_moved_lines_is_expired(adapter: NotesProcess, notes_dir: Path) -> None:
    path = notes_dir / "runbooks/restore.md"
    path.write_text("# Added first\n\n" + path.read_text())
    with pytest.raises(RpcFailure) as failure:
        adapter.expand("notes:runbooks/restore.md#L12-L15", "excerpt")
    assert failure.value.code == -32003


def test_expand_of_deleted_note_is_expired(adapter: NotesProcess, notes_dir: Path) -> None:
    (notes_dir / "ideas.txt").unlink()
    with pytest.raises(RpcFailure) as failure:
        adapter.expand("notes:ideas.txt#L1-L3", "full")
    assert failure.value.code == -32003


@pytest.mark.parametrize(
    "local", ["ideas.txt#L3", "ideas.txt#L3-L1", "../etc/passwd#L1-L2", "/etc/passwd#L1-L2", "a/./b.md#L1-L1",
              "../etc/passwd", "a/./b.md"]
)
def test_unparseable_locator_is_unknown(shared: NotesProcess, local: str) -> None:
    with pytest.raises(RpcFailure) as failure:
        shared.expand(f"notes:{local}", "full")
    assert failure.value.code == -32002


def test_oversized_note_is_declined_with_its_fix_and_coverage_stays_complete(
    process: NotesProcess, notes_dir: Path, workdir: Path
) -> None:
    write_note(notes_dir, "big.md", "# Big\n\n" + "restic " * 400)
    process.initialize(str(notes_dir), str(workdir), {"max_file_bytes": 1024})
    result = process.search("restic")
    assert result["outcome"] == "success"
    assert result["diagnostics"]["declined_count"] == 1
    health = process.health()
    assert (health["status"], health["coverage"], health["failed_count"]) == ("healthy", "complete", 0)
    declined = health["diagnostics"]["declined"]
    assert declined == [{
        "path": "big.md",
        "reason": "larger than max_file_bytes (2807 > 1024 bytes)",
        "fix": "raise max_file_bytes to at least 2807, or add the path to the 'exclude' setting",
    }]


def test_a_note_named_in_bytes_that_are_not_utf8_is_declined_and_the_rest_answer(
    process: NotesProcess, notes_dir: Path, workdir: Path
) -> None:
    """One such name (a file from an old archive) stopped the whole index being built."""
    write_note(notes_dir, "menu.md", "# Menu\n\nespresso tonic\n")
    (notes_dir / os.fsdecode(b"caf\xe9.md")).write_bytes(b"# Cafe\n\nespresso doppio\n")
    write_note(notes_dir / os.fsdecode(b"r\xe9sum\xe9"), "cv.md", "# CV\n\nespresso machine repair\n")
    process.initialize(str(notes_dir), str(workdir))
    result = process.search("espresso")
    assert result["outcome"] == "success"
    assert [c["source_record_id"] for c in result["candidates"]] == ["menu.md"]
    health = process.health()
    assert (health["status"], health["coverage"]) == ("healthy", "complete")
    assert health["diagnostics"]["declined"] == [{
        "path": "caf\\xe9.md",
        "reason": "path is not UTF-8, which a locator cannot name",
        "fix": "rename the file (or its folder) with a UTF-8 name",
    }]
    assert health["diagnostics"]["skipped_dirs_sample"] == ["r\\xe9sum\\xe9"]


def test_invalid_utf8_is_indexed_with_replacement_and_reported(
    process: NotesProcess, notes_dir: Path, workdir: Path
) -> None:
    (notes_dir / "latin1.md").write_bytes("# Caf\xe9 menu\n\nespresso tonic\n".encode("latin-1"))
    process.initialize(str(notes_dir), str(workdir))
    result = process.search("espresso")
    assert result["outcome"] == "success"
    top = result["candidates"][0]
    assert top["source_record_id"] == "latin1.md"
    assert top["title"] == "Caf\ufffd menu"
    health = process.health()
    assert health["coverage"] == "complete"
    problem = health["diagnostics"]["encoding_problems"][0]
    assert problem["path"] == "latin1.md"
    assert problem["reason"].startswith("not valid UTF-8 (byte 5)")
    assert "UTF-8" in problem["fix"]
    expanded = process.expand(top["locator"], "full")
    assert "Caf\ufffd menu" in expanded["content"]


def test_binary_file_with_note_extension_is_declined(
    process: NotesProcess, notes_dir: Path, workdir: Path
) -> None:
    (notes_dir / "blob.md").write_bytes(b"# x\x00\x01")
    process.initialize(str(notes_dir), str(workdir))
    health = process.health()
    assert (health["failed_count"], health["coverage"]) == (0, "complete")
    assert health["diagnostics"]["declined"][0]["path"] == "blob.md"
    assert "exclude" in health["diagnostics"]["declined"][0]["fix"]
    assert process.search("restic")["outcome"] == "success"


@pytest.mark.skipif(hasattr(__import__("os"), "geteuid") and __import__("os").geteuid() == 0,
                    reason="root reads files whatever their mode")
def test_unreadable_note_is_a_reported_failure(process: NotesProcess, notes_dir: Path, workdir: Path) -> None:
    path = write_note(notes_dir, "secret.md", "# Secret\n")
    path.chmod(0)
    process.initialize(str(notes_dir), str(workdir))
    health = process.health()
    assert health["coverage"] == "partial"
    failure = health["diagnostics"]["failures"][0]
    assert failure["path"] == "secret.md"
    assert failure["reason"].startswith("unreadable")
    assert failure["fix"]
    assert process.search("restic")["outcome"] == "partial"


def test_fixed_note_leaves_the_problem_list(process: NotesProcess, notes_dir: Path, workdir: Path) -> None:
    (notes_dir / "latin1.md").write_bytes(b"# Caf\xe9\n")
    process.initialize(str(notes_dir), str(workdir))
    assert process.health()["diagnostics"]["encoding_problems"][0]["path"] == "latin1.md"
    (notes_dir / "latin1.md").write_text("# Café crème\n")
    assert process.search("crème")["outcome"] == "success"
    assert "encoding_problems" not in process.health()["diagnostics"]


def test_broken_front_matter_is_reported_and_the_note_indexed(
    process: NotesProcess, notes_dir: Path, workdir: Path
) -> None:
    write_note(notes_dir, "broken.md", "---\ntitle: [unclosed\n---\n# Broken\n\nzeppelin hangar\n")
    process.initialize(str(notes_dir), str(workdir))
    top = process.search("zeppelin")["candidates"][0]
    assert top["title"] == "Broken"
    assert "not valid YAML" in top["metadata"]["front_matter_problems"][0]
    problems = process.health()["diagnostics"]["front_matter_problems"]
    assert problems[0]["path"] == "broken.md"


def test_missing_location_is_unavailable(process: NotesProcess, tmp_path: Path, workdir: Path) -> None:
    missing = tmp_path / "nowhere"
    process.initialize(str(missing), str(workdir))
    health = process.health()
    assert health["status"] == "unavailable"
    assert "does not exist" in health["diagnostics"]["reason"]
    with pytest.raises(RpcFailure) as failure:
        process.search("restore")
    assert failure.value.code == -32000
    assert str(missing) in failure.value.message


def test_location_appearing_later_is_indexed(process: NotesProcess, tmp_path: Path, workdir: Path) -> None:
    root = tmp_path / "later"
    process.initialize(str(root), str(workdir))
    write_note(root, "a.md", "# A\n\nkestrel\n")
    assert process.search("kestrel")["candidates"][0]["source_record_id"] == "a.md"


def test_handshake_without_location_is_refused(process: NotesProcess, workdir: Path) -> None:
    with pytest.raises(RpcFailure) as failure:
        process.initialize(None, str(workdir))
    assert failure.value.code == -32602
    assert "location" in failure.value.message


def test_unknown_setting_is_refused(process: NotesProcess, notes_dir: Path, workdir: Path) -> None:
    with pytest.raises(RpcFailure) as failure:
        process.initialize(str(notes_dir), str(workdir), {"extentions": [".md"]})
    assert failure.value.code == -32602
    assert "'extentions'" in failure.value.message


def test_mistyped_setting_is_refused(process: NotesProcess, notes_dir: Path, workdir: Path) -> None:
    with pytest.raises(RpcFailure) as failure:
        process.initialize(str(notes_dir), str(workdir), {"max_file_bytes": "1MB"})
    assert failure.value.code == -32602


def test_corrupted_index_file_is_rebuilt(notes_dir: Path, workdir: Path) -> None:
    first = NotesProcess()
    try:
        first.initialize(str(notes_dir), str(workdir))
        first.refresh()  # built and at rest: closing folds the WAL into the file
    finally:
        first.close()
    (workdir / "notes-index.sqlite3").write_bytes(b"this is not a database" * 100)
    second = NotesProcess()
    try:
        second.initialize(str(notes_dir), str(workdir))
        assert second.search("pgbackrest standby")["candidates"]
        assert "rebuilt" in second.health()["diagnostics"]["index_rebuilt"]
    finally:
        second.close()


def test_index_survives_a_restart_without_rereading(notes_dir: Path, workdir: Path) -> None:
    for _ in range(2):
        proc = NotesProcess()
        try:
            proc.initialize(str(notes_dir), str(workdir))
            result = proc.search("restic")
        finally:
            proc.close()
    assert result["diagnostics"]["files_read"] == 0
    assert result["candidates"]


def test_hidden_folders_and_node_modules_are_skipped(process: NotesProcess, notes_dir: Path, workdir: Path) -> None:
    write_note(notes_dir, ".git/notes.md", "# quokka\n")
    write_note(notes_dir, "node_modules/pkg/readme.md", "# quokka\n")
    write_note(notes_dir, ".obsidian/x.md", "# quokka\n")
    process.initialize(str(notes_dir), str(workdir))
    assert process.search("quokka")["candidates"] == []
    assert process.health()["diagnostics"]["skipped_dirs"] == 3


def test_symlink_out_of_the_root_is_not_followed(
    process: NotesProcess, notes_dir: Path, tmp_path: Path, workdir: Path
) -> None:
    outside = write_note(tmp_path / "outside", "secret.md", "# quokka\n")
    (notes_dir / "link.md").symlink_to(outside)
    (notes_dir / "linkdir").symlink_to(outside.parent, target_is_directory=True)
    process.initialize(str(notes_dir), str(workdir))
    assert process.search("quokka")["candidates"] == []
    assert sorted(process.health()["diagnostics"]["skipped_links_sample"]) == ["link.md", "linkdir"]


def test_include_and_exclude_globs(process: NotesProcess, notes_dir: Path, workdir: Path) -> None:
    process.initialize(
        str(notes_dir), str(workdir), {"include": ["decisions/*", "runbooks/*"], "exclude": ["*borg*"]}
    )
    assert process.health()["indexed_count"] == 2


def test_changed_settings_rebuild_the_index(notes_dir: Path, workdir: Path) -> None:
    for extensions, expected in (([".md"], 4), ([".md", ".txt"], 5)):
        proc = NotesProcess()
        try:
            proc.initialize(str(notes_dir), str(workdir), {"extensions": extensions})
            assert proc.health()["indexed_count"] == expected
        finally:
            proc.close()


def test_note_mtime_is_the_event_time(shared: NotesProcess) -> None:
    top = shared.search("Alertmanager")["candidates"][0]
    assert top["event_time"] == "2024-01-01T00:00:00Z"
    assert OLD_MTIME == 1_704_067_200


def test_expand_never_reads_a_path_the_scan_skips(process: NotesProcess, notes_dir: Path, workdir: Path) -> None:
    write_note(notes_dir, ".git/secret.md", "# token\n\nhunter2\n")
    process.initialize(str(notes_dir), str(workdir))
    with pytest.raises(RpcFailure) as failure:
        process.expand("notes:.git/secret.md#L1-L3", "full")
    assert failure.value.code == -32003


def test_aliases_setting_names_a_note_exactly(process: NotesProcess, notes_dir: Path, workdir: Path) -> None:
    process.initialize(str(notes_dir), str(workdir), {"aliases": {"ideas.txt": ["Wiki Exodus Plan"]}})
    top = process.search("wiki exodus plan")["candidates"][0]
    assert top["source_record_id"] == "ideas.txt"
    assert "alias" in top["match_signals"] and "exact_identifier" in top["match_signals"]


def test_aliases_setting_refuses_paths_outside_the_folder(
    process: NotesProcess, notes_dir: Path, workdir: Path
) -> None:
    with pytest.raises(RpcFailure) as refused:
        process.initialize(str(notes_dir), str(workdir), {"aliases": {"../x.md": ["X"]}})
    assert refused.value.code == -32602


def test_examples_quote_queries_finds_a_quoted_example_but_measures_it_irrelevant(
    process: NotesProcess, notes_dir: Path, workdir: Path
) -> None:
    """A page quoting an example question is indexed and found, at relevance 0, so the broker
    withholds it below the relevance floor, named, instead of ranking it beside the answer."""
    write_note(notes_dir, "howto/search.md", '# Searching\n\nTry a query such as "what is the\n'
               'flamingo budget", or `flamingo budget` alone.\n')
    write_note(notes_dir, "finance/birds.md", "# Birds\n\nThe flamingo budget was approved.\n")
    process.initialize(str(notes_dir), str(workdir))
    plain = {c["source_record_id"]: c["relevance"] for c in process.search("flamingo budget")["candidates"]}
    assert set(plain) == {"howto/search.md", "finance/birds.md"} and plain["howto/search.md"] > 0

    process.initialize(str(notes_dir), str(workdir), {"examples_quote_queries": True})
    found = {c["source_record_id"]: c for c in process.search("flamingo budget")["candidates"]}
    assert set(found) == {"howto/search.md", "finance/birds.md"}
    assert found["howto/search.md"]["relevance"] == 0
    assert "flamingo budget" in found["howto/search.md"]["excerpt"]
    assert found["finance/birds.md"]["relevance"] == plain["finance/birds.md"] > 0


def test_a_word_only_inside_web_addresses_does_not_find_the_note(
    process: NotesProcess, notes_dir: Path, workdir: Path
) -> None:
    """An address is where a link goes, not what the note says, with or without its scheme."""
    write_note(notes_dir, "links.md", "# Links\n\n- [Manual](https://docs.example.com/pergola/a)\n"
               "- docs.example.com/pergola/troubleshooting\n- <https://mirror.example.com/pergola>\n")
    write_note(notes_dir, "garden.md", "# Garden\n\nOil the pergola joints each spring.\n")
    process.initialize(str(notes_dir), str(workdir))
    assert [c["locator"].split(":", 1)[1].split("#")[0] for c in process.search("pergola")["candidates"]] == [
        "garden.md"
    ]


def test_many_searches_keep_a_bounded_number_of_index_connections(adapter: NotesProcess, workdir: Path) -> None:
    """Searches run on reused threads, so the index is not opened again for each one (a
    connection per thread is closed only once the garbage collector finds it)."""
    index = str(workdir / "notes-index.sqlite3")
    pid = adapter.process.pid

    def open_index_files() -> int:
        fds = Path(f"/proc/{pid}/fd")
        found = 0
        for fd in fds.iterdir():
            try:
                found += str(fd.readlink()).startswith(index)
            except OSError:
                continue
        return found

    adapter.search("pgbackrest standby")
    before = open_index_files()
    for _ in range(60):
        assert adapter.search("pgbackrest standby")["outcome"] == "success"
    assert open_index_files() <= before + 4
