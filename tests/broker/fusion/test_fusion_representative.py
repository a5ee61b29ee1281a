from __future__ import annotations

from fusion_builders import cand, run


def _chunks(record_type: str = "document", basis_kind: str | None = "preview"):
    return [
        cand("notes:a.md#L1-L4", 1, record_type=record_type, excerpt="heading only",
             excerpt_kind=basis_kind),
        cand("notes:a.md#L9-L12", 2, record_type=record_type, excerpt="the matched line",
             excerpt_kind="matched"),
    ]


def test_previewed_chunk_yields_display_to_a_matched_chunk_of_the_same_document() -> None:
    result = run(_chunks()).results[0]
    assert result.primary.locator == "notes:a.md#L9-L12"
    assert result.explanation.local_rank == 1
    assert result.explanation.lineage_root == "01NOTES:a.md#L1-L4"


def test_chunk_rule_never_applies_to_structured_records() -> None:
    result = run(_chunks(record_type="task")).results[0]
    assert result.primary.locator == "notes:a.md#L1-L4"


def test_chunk_without_an_excerpt_kind_keeps_the_display() -> None:
    result = run(_chunks(basis_kind=None)).results[0]
    assert result.primary.locator == "notes:a.md#L1-L4"


def test_chunk_rule_never_crosses_records() -> None:
    pool = [cand("notes:a.md#L1-L4", 1, excerpt_kind="preview", title="Backup Policy"),
            cand("notes:b.md#L1-L4", 2, excerpt_kind="matched", title="Backup Policy")]
    result = run(pool).results[0]
    assert result.primary.locator == "notes:a.md#L1-L4"
