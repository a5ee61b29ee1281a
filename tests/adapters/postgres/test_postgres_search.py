"""Searching a mapped table on a real server, through the real CLI."""

from __future__ import annotations

from tests.adapters.postgres.conftest import COLUMNS, Workspace, assert_no_secret
from tests.support.postgres import Server, run_sql


def locators(answer: dict) -> list[str]:
    return [result["locator"] for result in answer["results"]]


def test_query_finds_rows_ranked_with_matched_excerpts(workspace: Workspace) -> None:
    code, answer, printed = workspace.query("restore drill checksums")

    assert code == 0, printed
    assert locators(answer)[0] == "kb:4"
    top = answer["results"][0]
    assert top["title"] == "Restore drill"
    assert top["excerpt_kind"] == "matched"
    assert "checksums" in top["excerpt"]
    assert answer["source_summary"]["outcomes"] == {"success": 1}


def test_an_id_is_an_exact_identifier_match(workspace: Workspace) -> None:
    code, answer, printed = workspace.query("3")

    assert code == 0, printed
    assert locators(answer) == ["kb:3"]


def test_superseded_and_expired_rows_are_withheld_and_counted(workspace: Workspace) -> None:
    code, answer, printed = workspace.query("backups")

    assert code == 0, printed
    shown = locators(answer)
    assert "kb:1" in shown
    assert "kb:2" not in shown  # replaced_by = 1
    assert "kb:5" not in shown  # valid_until 2020
    withheld = {entry["lineage_root"].split(":", 1)[1]: entry for entry in answer["suppressed"]}
    assert withheld["2"]["reason"] == "superseded"
    assert withheld["2"]["successor"] == "kb:1"
    assert withheld["5"]["reason"] == "expired"


def test_as_of_filters_on_the_updated_at_column(workspace: Workspace) -> None:
    code, answer, printed = workspace.query("--as-of", "2025-03-15", "restore")

    assert code == 0, printed
    assert locators(answer) == ["kb:3"]  # the drill (kb:4) was written in April


def test_a_question_nothing_matches_abstains(workspace: Workspace) -> None:
    code, answer, printed = workspace.query("zeppelin hangar")

    assert code == 2, printed
    assert answer["source_summary"]["outcomes"] == {"success": 1}


def test_expand_reads_the_row(workspace: Workspace) -> None:
    done = workspace.recall("expand", "kb:4")

    assert done.returncode == 0, done.stderr
    assert "compare checksums" in done.stdout


def test_expand_of_a_deleted_row_is_locator_expired(workspace: Workspace, pg_server: Server, articles_db: str) -> None:
    run_sql(pg_server.dsn("admin", articles_db), "DELETE FROM articles WHERE id = 4")

    done = workspace.recall("expand", "--json", "kb:4")

    assert done.returncode == 4
    assert "locator_expired" in done.stdout + done.stderr


def test_row_level_security_decides_what_each_role_sees(
    make_workspace, pg_server: Server, articles_db: str
) -> None:
    run_sql(
        pg_server.dsn("admin", articles_db),
        "ALTER TABLE articles ENABLE ROW LEVEL SECURITY;"
        " CREATE POLICY own_rows ON articles FOR SELECT USING (owner = current_user);",
    )
    reader = make_workspace("recall_reader")
    _, as_reader, printed = reader.query("payroll encryption key")
    assert locators(as_reader) == [], printed

    other = make_workspace("recall_other")
    code, as_other, printed = other.query("payroll encryption key")
    assert code == 0, printed
    assert locators(as_other) == ["kb:6"]


def test_a_role_owning_the_table_outside_its_policies_is_warned_about(
    make_workspace, pg_server: Server, articles_db: str
) -> None:
    run_sql(
        pg_server.dsn("admin", articles_db),
        "ALTER TABLE articles OWNER TO recall_reader; ALTER TABLE articles ENABLE ROW LEVEL SECURITY;"
        " CREATE POLICY own_rows ON articles FOR SELECT USING (owner = current_user);",
    )
    ws = make_workspace("recall_reader")

    done = ws.recall("sources", "--json")

    assert "FORCE ROW LEVEL SECURITY" in done.stdout, done.stdout + done.stderr


def test_a_table_without_a_tsvector_index_is_searched_and_doctor_warns(make_workspace) -> None:
    mapping = {key: value for key, value in COLUMNS.items() if key != "tsvector"}
    ws = make_workspace(kb={"table": "articles", "columns": mapping})

    code, answer, printed = ws.query("restore drill")
    assert code == 0, printed
    assert locators(answer)[0] == "kb:4"

    doctor = ws.recall("doctor")
    assert "scan every row" in doctor.stdout, doctor.stdout + doctor.stderr
    assert_no_secret(ws, doctor.stdout + doctor.stderr)


HISTORY = """
CREATE TABLE articles_history (LIKE articles INCLUDING DEFAULTS INCLUDING GENERATED);
INSERT INTO articles_history (id, title, body, updated_at) VALUES
 (4, 'Restore drill', 'Yearly restore drill on tape.', '2024-01-01T00:00:00Z'),
 (4, 'Restore drill', 'Quarterly restore drill: restore the newest backup and compare checksums.',
  '2025-04-01T00:00:00Z');
GRANT SELECT ON articles_history TO recall_reader;
"""


def test_as_of_with_a_history_table_answers_from_the_revision_then(
    make_workspace, pg_server: Server, articles_db: str
) -> None:
    run_sql(pg_server.dsn("admin", articles_db), HISTORY)
    mapping = {key: COLUMNS[key] for key in ("id", "title", "body", "updated_at", "tsvector")}
    ws = make_workspace(kb={"table": "articles", "columns": mapping, "history_table": "articles_history"})

    code, then, printed = ws.query("--as-of", "2024-06-01", "restore drill")
    assert code == 0, printed
    assert locators(then) == ["kb:4"]
    assert "tape" in then["results"][0]["excerpt"]

    _, now, _ = ws.query("restore drill")
    assert "tape" not in now["results"][0]["excerpt"]


def test_a_project_file_cannot_choose_the_connection_variable(workspace: Workspace) -> None:
    (workspace.root / "recall.toml").write_text(
        '[[sources]]\nsource_id = "theirs"\nadapter = "postgres"\n'
        '[sources.settings]\ndsn_env = "RECALL_KB_DSN"\ntable = "articles"\n'
        'columns = { id = "id", title = "title", body = "body", updated_at = "updated_at" }\n'
    )

    code, _, printed = workspace.query("payroll")

    assert code == 1, printed
    assert "dsn_env" in printed
    assert "Payroll" not in printed
