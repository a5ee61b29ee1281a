"""The --explain block's line for a record two sources over one folder ranked."""

from __future__ import annotations

from broker.contracts import FolderRank, LegRank
from broker.render.explanation_block import explanation_block

from . import fixtures


def test_explain_prints_each_sources_rank_and_the_folders_fused_rank() -> None:
    result = fixtures.result(fixtures.candidate("notes:du.md#L12-L40", local_rank=3))
    result.explanation.folder = FolderRank(
        location="path:/home/u/man",
        legs=[LegRank(source_id="notes", local_rank=3), LegRank(source_id="notes-meaning", local_rank=5)],
        rank=2,
    )
    block = explanation_block(result.explanation)
    assert "folder rank:   rank 2 in path:/home/u/man, fused within it from notes 3, notes-meaning 5\n" in block
    assert block.index("local rank:") < block.index("folder rank:") < block.index("matches:")


def test_explain_prints_no_folder_line_for_a_record_of_one_ranking() -> None:
    result = fixtures.result(fixtures.candidate("notes:du.md#L12-L40", local_rank=3))
    assert "folder rank" not in explanation_block(result.explanation)


def test_explain_says_when_a_folder_was_ordered_by_meaning() -> None:
    result = fixtures.result(fixtures.candidate("notes:du.md#L12-L40", local_rank=3))
    result.explanation.folder = FolderRank(
        location="path:/home/u/man",
        legs=[LegRank(source_id="notes-meaning", local_rank=1)],
        rank=1,
        weak_lexical_match=0.2871,
    )
    block = explanation_block(result.explanation)
    assert ("fused within it from notes-meaning 1; ordered by meaning, the best lexical match holding"
            " little of the question (relevance 0.29)\n") in block
