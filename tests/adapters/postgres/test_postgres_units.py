"""The postgres adapter's pure parts: settings, how a question becomes tsqueries, what errors say."""

from __future__ import annotations

import pytest

from adapter_sdk.lexical import analyze_query
from adapter_sdk.protocol import ErrorCode, RpcError
from adapters.postgres.errors import ProblemKind, classify, dsn_secrets, scrub
from adapters.postgres.matching import Shape, stages
from adapters.postgres.settings import MANAGED_COLUMNS, parse_settings

COLUMNS = {"id": "id", "title": "title", "body": "body", "updated_at": "updated_at"}


def test_a_source_without_a_table_reads_the_managed_corpus_named_by_its_id() -> None:
    settings = parse_settings({"dsn_env": "KB_DSN"}, "kb")

    assert settings.managed
    assert settings.corpus == "kb"
    assert settings.columns == MANAGED_COLUMNS
    assert settings.relation_name == "recall_chunks"


@pytest.mark.parametrize(
    ("raw", "names"),
    [
        ({"table": "articles", "columns": COLUMNS}, "dsn_env"),
        ({"dsn_env": "not a name", "table": "articles", "columns": COLUMNS}, "dsn_env"),
        ({"dsn_env": "KB", "table": "articles"}, "columns"),
        ({"dsn_env": "KB", "table": "articles; drop table x", "columns": COLUMNS}, "table"),
        ({"dsn_env": "KB", "table": "articles", "columns": {**COLUMNS, "body": "body text"}}, "columns.body"),
        ({"dsn_env": "KB", "table": "articles", "columns": {"id": "id"}}, "title"),
        ({"dsn_env": "KB", "table": "articles", "columns": COLUMNS, "corpus": "kb"}, "corpus"),
        ({"dsn_env": "KB", "dsn": "host=x"}, "dsn"),
    ],
)
def test_bad_settings_are_refused_naming_the_key(raw: dict, names: str) -> None:
    with pytest.raises(RpcError) as refused:
        parse_settings(raw, "kb")

    assert refused.value.code == ErrorCode.invalid_params
    assert names in refused.value.message


def test_a_question_of_several_words_asks_for_two_of_them_first() -> None:
    planned = stages("how do we restore the wiki database", analyze_query("how do we restore the wiki database"))

    assert [match.shape for match in planned] == [Shape.pairs, Shape.any]
    assert planned[0].texts == ("restore", "wiki", "database")
    assert planned[0].groups() == [(0, 1), (0, 2), (1, 2)]


def test_websearch_syntax_is_passed_as_typed() -> None:
    for question in ('"restore drill" checksums', "backup or restore", "backup -tape"):
        assert [(m.shape, m.texts) for m in stages(question, analyze_query(question))] == [
            (Shape.websearch, (question,))
        ]


def test_one_word_is_one_stage() -> None:
    assert [m.shape for m in stages("backups", analyze_query("backups"))] == [Shape.any]


def test_scrub_removes_the_connection_string_and_its_password() -> None:
    dsn = "host=db user=reader password=s3cret-pw dbname=kb"

    said = scrub(f"could not use {dsn}; password s3cret-pw rejected", dsn_secrets(dsn))

    assert "s3cret-pw" not in said and dsn not in said


def test_a_refused_password_is_denied_and_summarised() -> None:
    import psycopg

    failure = psycopg.OperationalError(
        'connection failed: connection to server at "10.1.2.3", port 5432 failed: '
        'FATAL:  password authentication failed for user "reader"'
    )

    problem = classify(failure, secrets=("pw",), doing="source kb: searching")

    assert problem.kind is ProblemKind.denied
    assert problem.rpc().code == ErrorCode.source_denied
    assert "10.1.2.3" not in problem.message
    assert 'password authentication failed for user "reader"' in problem.message


def test_the_settings_that_choose_the_credential_the_rows_or_their_rights_are_trusted_only() -> None:
    from adapters.postgres.settings import SETTINGS_SCHEMA

    marked = {name for name, schema in SETTINGS_SCHEMA["properties"].items() if schema.get("trusted_only")}

    assert marked == {"dsn_env", "table", "columns", "history_table", "corpus", "allow_definer_view"}
