"""A view that runs as its owner cannot quietly bypass row-level security.

``articles`` carries a policy showing each role its own rows; ``articles_v`` is
a view over it owned by the superuser that created it, without
``security_invoker``, so it reads every row with the superuser's rights. The
reader role must not get another owner's row through it unless the user's own
configuration accepts the view, and ``recall sources`` and ``recall doctor``
say what the view is either way.
"""

from __future__ import annotations

import json

import pytest

from tests.adapters.postgres.conftest import COLUMNS, Workspace
from tests.support.postgres import Server, run_sql

POLICY = (
    "ALTER TABLE articles ENABLE ROW LEVEL SECURITY;"
    " CREATE POLICY own_rows ON articles FOR SELECT USING (owner = current_user);"
)
DEFINER_VIEW = "CREATE VIEW articles_v AS SELECT * FROM articles; GRANT SELECT ON articles_v TO recall_reader;"
INVOKER_VIEW = (
    "CREATE VIEW articles_v WITH (security_invoker = on) AS SELECT * FROM articles;"
    " GRANT SELECT ON articles_v TO recall_reader;"
)
# an invoker view over a definer view reads with the definer's rights all the same
NESTED_VIEW = (
    "CREATE VIEW articles_inner AS SELECT * FROM articles; GRANT SELECT ON articles_inner TO recall_reader;"
    " CREATE VIEW articles_v WITH (security_invoker = on) AS SELECT * FROM articles_inner;"
    " GRANT SELECT ON articles_v TO recall_reader;"
)
OTHERS_ROW = "payroll encryption key"  # row 6 belongs to recall_other


def view_workspace(make_workspace, pg_server: Server, db: str, view_sql: str, **settings) -> Workspace:
    run_sql(pg_server.dsn("admin", db), POLICY + view_sql)
    return make_workspace("recall_reader", kb={"table": "articles_v", "columns": COLUMNS, **settings})


def locators(answer: dict) -> list[str]:
    return [result["locator"] for result in answer.get("results", [])]


@pytest.mark.parametrize("view_sql", [DEFINER_VIEW, NESTED_VIEW], ids=["definer", "nested"])
def test_a_view_running_as_another_owner_is_refused_and_said(
    make_workspace, pg_server: Server, articles_db: str, view_sql: str
) -> None:
    ws = view_workspace(make_workspace, pg_server, articles_db, view_sql)

    code, answer, printed = ws.query("--explain", OTHERS_ROW)
    assert "Payroll secrets" not in printed
    assert locators(answer) == []
    assert code == 3, printed
    (ledger,) = answer["source_outcomes"]
    assert (ledger["outcome"], ledger["reason"]) == ("skipped", "denied")

    sources = ws.recall("sources")
    said = sources.stdout + sources.stderr
    assert "denied" in said and "refusing to search articles_v" in said, said
    assert "with that owner's rights" in said, said
    assert "allow_definer_view = true" in said, said

    doctor = ws.recall("doctor")
    assert doctor.returncode != 0
    assert "refusing to search articles_v" in doctor.stdout, doctor.stdout + doctor.stderr


def test_the_users_setting_accepts_the_view_and_it_is_still_reported(
    make_workspace, pg_server: Server, articles_db: str
) -> None:
    ws = view_workspace(make_workspace, pg_server, articles_db, DEFINER_VIEW, allow_definer_view=True)

    code, answer, printed = ws.query(OTHERS_ROW)
    assert code == 0, printed
    assert "kb:6" in locators(answer)

    listed = json.loads(ws.recall("sources", "--json").stdout)
    (row,) = listed["sources"]
    assert row["status"] == "healthy", row
    assert "accepted: allow_definer_view" in row["health"]["diagnostics"]["definer_view"]


def test_an_invoker_view_is_searched_under_the_readers_policies(
    make_workspace, pg_server: Server, articles_db: str
) -> None:
    ws = view_workspace(make_workspace, pg_server, articles_db, INVOKER_VIEW)

    code, answer, printed = ws.query(OTHERS_ROW)
    assert "kb:6" not in locators(answer), printed
    code, answer, printed = ws.query("backups")
    assert code == 0, printed
    assert "kb:1" in locators(answer)
    assert "definer_view" not in ws.recall("sources", "--json").stdout

