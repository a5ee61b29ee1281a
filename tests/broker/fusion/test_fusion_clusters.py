from __future__ import annotations

import pytest
from fusion_builders import EXACT, SEMANTIC, cand, facts, run

from broker.contracts import Mode

TWO = [facts("notes"), facts("mail")]


def test_chunks_of_one_document_are_one_result_scored_once() -> None:
    pool = [cand("notes:a.md#L1-L4", 1), cand("notes:a.md#L9-L12", 2)]
    out = run(pool)
    assert len(out.results) == 1
    result = out.results[0]
    assert [m.lineage_root for m in result.members] == ["01NOTES:a.md#L1-L4", "01NOTES:a.md#L9-L12"]
    assert result.explanation.corroboration.independent_units == 1
    assert result.score == pytest.approx(1 / 61)


def test_a_documents_chunks_are_listed_best_first_not_by_line_number() -> None:
    # "L9" sorts after "L10" as text: the member order must come from the ranking
    pool = [cand("notes:a.md#L9-L12", 3), cand("notes:a.md#L10-L14", 1), cand("notes:a.md#L1-L4", 2)]
    members = [m.lineage_root for m in run(pool).results[0].members]
    assert members == ["01NOTES:a.md#L10-L14", "01NOTES:a.md#L1-L4", "01NOTES:a.md#L9-L12"]


def test_shared_entity_clusters_and_corroborates_across_sources() -> None:
    pool = [cand("notes:a.md", 1, metadata={"entity_id": "E1"}),
            cand("mail:m1", 1, record_type="document", metadata={"entity_id": "E1"})]
    out = run(pool, sources=TWO)
    assert len(out.results) == 1
    corroboration = out.results[0].explanation.corroboration
    assert (corroboration.independent_units, corroboration.sources) == (2, ["mail", "notes"])
    assert out.results[0].score == pytest.approx(2 / 61)


def test_entity_type_scopes_the_entity_id() -> None:
    pool = [cand("notes:a.md", 1, metadata={"entity_id": "42", "entity_type": "person"}),
            cand("mail:m1", 1, metadata={"entity_id": "42"})]
    assert len(run(pool, sources=TWO).results) == 2


def test_shared_fingerprint_collapses_corroboration_but_not_display() -> None:
    pool = [cand("notes:a.md", 1, content_fingerprint="fp1"),
            cand("mail:m1", 1, content_fingerprint="fp1")]
    assert len(run(pool, sources=TWO).results) == 2
    linked = [c.model_copy(update={"metadata": {"entity_id": "E1"}}) for c in pool]
    out = run(linked, sources=TWO)
    assert out.results[0].explanation.corroboration.independent_units == 1
    assert out.results[0].score == pytest.approx(1 / 61)


def test_same_record_at_one_location_does_not_corroborate_itself() -> None:
    pool = [cand("notes:a.md", 1, metadata={"entity_id": "E1"}),
            cand("mirror:a.md", 1, metadata={"entity_id": "E1"})]
    shared = run(pool, sources=[facts("notes", location="/home/u/notes"),
                                facts("mirror", location="/home/u/notes")])
    apart = run(pool, sources=[facts("notes", location="/home/u/notes"),
                               facts("mirror", location="/srv/other")])
    assert shared.results[0].explanation.corroboration.independent_units == 1
    assert apart.results[0].explanation.corroboration.independent_units == 2


def test_two_views_of_one_record_fold_into_one_slot_with_a_duplicate_view() -> None:
    same = {"content_fingerprint": "fp1", "source_revision": "rev7", "source_record_id": "r1"}
    pool = [cand("notes:r1", 1, **same), cand("mirror:r1", 2, **same)]
    out = run(pool, sources=[facts("notes"), facts("mirror")])
    assert len(out.results) == 1
    assert [(s.reason.value, s.count, s.lineage_root, s.fused_into) for s in out.suppressed] == [
        ("duplicate_view", 1, "01MIRROR:r1", "01NOTES:r1")]


def test_identical_multi_word_titles_of_one_record_type_cluster() -> None:
    pool = [cand("notes:a.md", 1, title="Backup Policy"),
            cand("mail:m1", 1, title="backup  policy!")]
    assert len(run(pool, sources=TWO).results) == 1


def test_single_word_titles_do_not_cluster() -> None:
    pool = [cand("notes:a.md", 1, title="Meeting"), cand("mail:m1", 1, title="Meeting")]
    assert len(run(pool, sources=TWO).results) == 2


def test_titles_of_different_record_types_do_not_cluster() -> None:
    pool = [cand("notes:a.md", 1, title="Backup Policy"),
            cand("tasks:t1", 1, record_type="task", title="Backup Policy")]
    assert len(run(pool).results) == 2


def test_declared_alias_matches_another_records_title() -> None:
    pool = [cand("notes:a.md", 1, title="Marcus V", metadata={"aliases": ["Marcus Vorwaller"]}),
            cand("mail:m1", 1, title="Marcus Vorwaller")]
    assert len(run(pool, sources=TWO).results) == 1


def test_corroboration_is_capped_at_a_multiple_of_the_strongest_unit() -> None:
    pool = [cand(f"{s}:x", 1, metadata={"entity_id": "E1"}) for s in ("notes", "mail", "tasks")]
    out = run(pool)
    corroboration = out.results[0].explanation.corroboration
    assert corroboration.independent_units == 3
    assert corroboration.cap_applied
    assert out.results[0].score == pytest.approx(2 / 61)


def test_derivative_unit_is_counted_after_the_records_it_restates() -> None:
    pool = [cand("notes:weekly.md", 1, derived_from=["tasks:t1", "tasks:t2"],
                 metadata={"entity_id": "E1"}),
            cand("tasks:t1", 5, metadata={"entity_id": "E1"}),
            cand("tasks:t2", 6, metadata={"entity_id": "E1"})]
    out = run(pool, sources=[facts("notes", 2.0), facts("tasks")])
    result = out.results[0]
    assert result.explanation.corroboration.independent_units == 2
    assert result.score == pytest.approx(1 / 65 + 1 / 66)
    assert result.explanation.lineage_root == "01NOTES:weekly.md"


def test_a_note_two_sources_over_one_folder_found_apart_is_one_result() -> None:
    # the lexical source found one chunk, the semantic leg over the same folder another
    pool = [cand("notes:a.md#L1-L4", 1, title="Restore"), cand("mirror:a.md#L9-L12", 1, title="Drill")]
    one_folder = run(pool, sources=[facts("notes", location="/home/u/notes"),
                                    facts("mirror", location="/home/u/notes")])
    assert len(one_folder.results) == 1
    result = one_folder.results[0]
    assert {m.lineage_root for m in result.members} == {"01NOTES:a.md#L1-L4", "01MIRROR:a.md#L9-L12"}
    assert result.explanation.corroboration.independent_units == 1
    two_folders = run(pool, sources=[facts("notes", location="/home/u/notes"),
                                     facts("mirror", location="/srv/other")])
    assert len(two_folders.results) == 2


def _long_note_and_another(b_rank: int = 3) -> list:
    return [cand(f"notes:long.md#L{n}0-L{n}9", rank) for n, rank in ((1, 1), (2, 2), (4, 4), (5, 5))] + [
        cand("notes:b.md#L1-L9", b_rank)
    ]


def test_a_long_note_lists_only_the_chunks_that_outrank_the_next_result() -> None:
    out = run(_long_note_and_another())
    assert [r.primary.source_record_id for r in out.results] == ["long.md", "b.md"]
    assert [m.lineage_root for m in out.results[0].members] == ["01NOTES:long.md#L10-L19",
                                                                "01NOTES:long.md#L20-L29"]
    assert [m.lineage_root for m in out.results[1].members] == ["01NOTES:b.md#L1-L9"]


def test_the_last_result_lists_down_to_the_first_result_the_limit_cut() -> None:
    limited = run(_long_note_and_another(), limit=1)
    assert limited.truncated
    assert len(limited.results[0].members) == 2
    alone = run([c for c in _long_note_and_another() if c.source_record_id == "long.md"], limit=1)
    assert len(alone.results[0].members) == 4


def test_every_record_of_a_cluster_is_listed_however_weak() -> None:
    linked = {"metadata": {"entity_id": "E1"}}
    pool = [cand("notes:a.md#L1-L4", 1, **linked), cand("notes:a.md#L5-L8", 4, **linked),
            cand("mail:m1", 5, **linked), cand("notes:b.md#L1-L9", 2)]
    out = run(pool, sources=TWO)
    assert [r.primary.source_record_id for r in out.results] == ["a.md", "b.md"]
    # the mail is corroborating evidence of its own: listed although it scores below b.md
    assert [m.lineage_root for m in out.results[0].members] == ["01NOTES:a.md#L1-L4", "01MAIL:m1"]


def test_pre_reply_lists_every_chunk_so_the_host_ledger_holds_them_all() -> None:
    # a chunk left out of the list would make the same note count as new on the next turn
    out = run(_long_note_and_another(), mode=Mode.pre_reply)
    assert len(out.results[0].members) == 4
    repeated = run(_long_note_and_another(), mode=Mode.pre_reply,
                   suppress_lineages=frozenset(m.lineage_root for m in out.results[0].members))
    assert [r.primary.source_record_id for r in repeated.results] == ["b.md"]


ONE_FOLDER = [facts("notes", location="/home/u/man"), facts("mirror", location="/home/u/man")]


def _summary_first(lexical_rank_of_next_page: int) -> list:
    # the meaning leg ranks the du page's one-line summary first, the df page's second and
    # du's section that answers only fifth; the lexical source ranks that section third
    return [cand("mirror:du.md#L3-L5", 1), cand("mirror:df.md#L3-L5", 2), cand("mirror:du.md#L12-L40", 5),
            cand("notes:du.md#L12-L40", 3), cand("notes:df.md#L20-L30", lexical_rank_of_next_page)]


def test_each_sources_best_chunk_of_a_page_is_listed_when_it_ranks_that_source_above_the_next_page() -> None:
    out = run(_summary_first(lexical_rank_of_next_page=6), sources=ONE_FOLDER)
    assert [r.primary.source_record_id for r in out.results] == ["du.md", "df.md"]
    # scored below df.md (1/63 < 1/62), but the lexical ranking put it above all of df.md
    assert [m.lineage_root for m in out.results[0].members] == ["01MIRROR:du.md#L3-L5", "01NOTES:du.md#L12-L40"]


def test_a_sources_best_chunk_it_ranks_below_the_next_page_is_left_out() -> None:
    out = run(_summary_first(lexical_rank_of_next_page=2), sources=ONE_FOLDER)
    assert [r.primary.source_record_id for r in out.results] == ["du.md", "df.md"]
    assert [m.lineage_root for m in out.results[0].members] == ["01MIRROR:du.md#L3-L5"]



# the notes source and a second source over the same folder (its meaning leg), and mail
FOLDER_AND_MAIL = [facts("notes", location="/home/u/notes"), facts("tasks", location="/home/u/notes"),
                   facts("mail")]


def _agreed_in_the_folder(relevance: tuple[float, float, float] = (0.8, 0.6, 0.5)) -> list:
    # the lexical source ranks a.md first and z.md second; the leg over the same folder ranks
    # z.md first (the same chunk: its root is the lexical chunk's) and never a.md
    a, z_lexical, z_leg = relevance
    return [cand("notes:a.md#L1-L9", 1, relevance=a), cand("notes:z.md#L1-L9", 2, relevance=z_lexical),
            cand("tasks:z.md#L1-L9", 1, relevance=z_leg, derived_from=["notes:z.md#L1-L9"]),
            cand("mail:m1", 1, relevance=0.9)]


def test_a_record_both_sources_of_a_folder_rank_goes_first_among_the_folders_records() -> None:
    out = run(_agreed_in_the_folder(), sources=FOLDER_AND_MAIL)
    assert [r.primary.source_record_id for r in out.results] == ["m1", "z.md", "a.md"]
    # z.md takes the folder's first place and the score a.md earned there; a.md the second's
    assert [r.score for r in out.results[1:]] == pytest.approx([0.8 / 61, 0.6 / 62])


def test_agreement_inside_a_folder_does_not_lift_it_above_another_sources_first_record() -> None:
    # summed, z.md's two terms (0.6/62 + 0.5/61) would outscore the mail's one (0.9/61)
    out = run(_agreed_in_the_folder(), sources=FOLDER_AND_MAIL)
    assert out.results[0].primary.source_id == "mail"
    assert out.results[0].score == pytest.approx(0.9 / 61)
    assert out.results[1].score < out.results[0].score


def test_records_of_a_folder_carrying_one_score_keep_the_folders_order() -> None:
    # every best term is 0.8/61 here, so the two records share it; the fused order decides
    out = run(_agreed_in_the_folder(relevance=(0.8, 0.8, 0.8)), sources=FOLDER_AND_MAIL)
    assert [r.primary.source_record_id for r in out.results] == ["m1", "z.md", "a.md"]


def test_explain_shows_each_sources_rank_in_the_folder_and_the_folders_fused_rank() -> None:
    out = run(_agreed_in_the_folder(), sources=FOLDER_AND_MAIL)
    folder = out.results[1].explanation.folder
    assert folder is not None
    assert folder.location == "/home/u/notes"
    assert [(leg.source_id, leg.local_rank) for leg in folder.legs] == [("notes", 2), ("tasks", 1)]
    assert folder.rank == 1
    assert out.results[2].explanation.folder is not None
    assert out.results[2].explanation.folder.rank == 2
    assert out.results[0].explanation.folder is None


def test_a_folder_one_source_answered_for_keeps_that_sources_ranks() -> None:
    pool = [cand("notes:a.md#L1-L9", 1, relevance=0.5), cand("notes:b.md#L1-L9", 2, relevance=0.9)]
    out = run(pool, sources=FOLDER_AND_MAIL)
    assert [r.primary.source_record_id for r in out.results] == ["b.md", "a.md"]
    assert [r.score for r in out.results] == pytest.approx([0.9 / 62, 0.5 / 61])
    assert out.results[0].explanation.folder is None


def test_a_chunk_the_question_names_exactly_keeps_its_own_score_in_its_folder() -> None:
    # the alias line matches exactly and only lexically; agreement elsewhere does not take its place
    pool = [cand("notes:a.md#L5-L5", 1, relevance=0.9, match_signals=EXACT),
            cand("notes:a.md#L12-L18", 2, relevance=0.8),
            cand("tasks:a.md#L12-L18", 1, relevance=0.8, derived_from=["notes:a.md#L12-L18"])]
    out = run(pool, query="restore drill", sources=FOLDER_AND_MAIL)
    assert out.results[0].primary.locator == "notes:a.md#L5-L5"
    assert out.results[0].explanation.folder is None


def _weak_question(lexical: tuple[float, float]) -> list:
    # the lexical source ranks a.md then z.md; the meaning leg over the same folder ranks
    # c.md, then a.md, then z.md (the same chunks: their roots are the lexical chunks')
    a, z = lexical
    return [cand("notes:a.md#L1-L9", 1, relevance=a), cand("notes:z.md#L1-L9", 2, relevance=z),
            cand("tasks:c.md#L1-L9", 1, relevance=0.6, match_signals=SEMANTIC),
            cand("tasks:a.md#L1-L9", 2, relevance=0.55, match_signals=SEMANTIC, derived_from=["notes:a.md#L1-L9"]),
            cand("tasks:z.md#L1-L9", 3, relevance=0.5, match_signals=SEMANTIC, derived_from=["notes:z.md#L1-L9"])]


def test_a_folder_whose_best_lexical_match_holds_little_of_the_question_is_ordered_by_meaning() -> None:
    out = run(_weak_question(lexical=(0.30, 0.28)), sources=FOLDER_AND_MAIL)
    # summed, a.md (0.30/61 + 0.55/62) and z.md would lead c.md (0.6/61), which one leg found
    assert [r.primary.source_record_id for r in out.results] == ["c.md", "a.md", "z.md"]
    folder = out.results[0].explanation.folder
    assert folder is not None and folder.weak_lexical_match == pytest.approx(0.30)


def test_a_folder_whose_lexical_match_holds_the_question_keeps_the_summed_order() -> None:
    out = run(_weak_question(lexical=(0.5, 0.45)), sources=FOLDER_AND_MAIL)
    assert [r.primary.source_record_id for r in out.results] == ["a.md", "z.md", "c.md"]
    assert all(r.explanation.folder is None or r.explanation.folder.weak_lexical_match is None
               for r in out.results)


def test_a_weak_lexical_match_changes_nothing_where_no_meaning_leg_answered() -> None:
    # two lexical sources over one folder: there is no order by meaning to fall back on
    pool = [cand("notes:a.md#L1-L9", 1, relevance=0.3), cand("notes:z.md#L1-L9", 2, relevance=0.2),
            cand("tasks:z.md#L1-L9", 1, relevance=0.2, derived_from=["notes:z.md#L1-L9"])]
    out = run(pool, sources=FOLDER_AND_MAIL)
    assert [r.primary.source_record_id for r in out.results] == ["z.md", "a.md"]
    assert out.results[0].explanation.folder is not None
    assert out.results[0].explanation.folder.weak_lexical_match is None


def test_one_sources_first_place_outweighs_two_sources_middling_one_inside_a_folder() -> None:
    # a.md: the lexical source's first, the leg's tenth; b.md: fifth in both. Summed at
    # cross-source fusion's constant (1/61 + 1/70 < 2/65) b.md would lead the folder; at
    # the folder's own constant (1/31 + 1/40 > 2/35) the clear first place does
    fillers = [cand(f"notes:f{n}.md#L1-L9", n) for n in (2, 3, 4)]
    fillers += [cand(f"tasks:g{n}.md#L1-L9", n, match_signals=SEMANTIC) for n in range(1, 10) if n != 5]
    pool = [cand("notes:a.md#L1-L9", 1), cand("notes:b.md#L1-L9", 5), *fillers,
            cand("tasks:a.md#L1-L9", 10, match_signals=SEMANTIC, derived_from=["notes:a.md#L1-L9"]),
            cand("tasks:b.md#L1-L9", 5, match_signals=SEMANTIC, derived_from=["notes:b.md#L1-L9"])]
    out = run(pool, sources=FOLDER_AND_MAIL)
    order = [r.primary.source_record_id for r in out.results]
    assert order.index("a.md") < order.index("b.md")
    assert out.results[order.index("a.md")].explanation.folder.rank < out.results[order.index("b.md")].explanation.folder.rank
