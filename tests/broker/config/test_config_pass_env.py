"""``pass_env``: the variables an adapter sees, as the configuration declares them."""

from __future__ import annotations

import sys

from broker.adapter_environment import LIBPQ_NAMES
from broker.errors import TrustError

from .conftest import Home, problem_at

REGISTERED = f"""
[adapters.jira]
command = "{sys.executable}"
freshness_modes = ["live"]
pass_env = ["JIRA_TOKEN"]

[[sources]]
source_uid = "01J8ZKQ4M7JIRAXX"
source_id = "tickets"
adapter = "jira"
location = "https://jira.example.com"
location_kind = "uri"
pass_env = ["JIRA_SITE", "JIRA_TOKEN"]
settings = {{ token_env = "JIRA_SECOND_TOKEN", label = "not_env" }}

[[sources]]
source_uid = "01J8ZKQ4M7PGKBXX"
source_id = "kb"
adapter = "postgres"
settings = {{ dsn_env = "DATABASE_URL" }}
"""


def test_an_adapter_sees_its_registrations_its_sources_and_its_settings_names(home: Home) -> None:
    home.write_user(REGISTERED)
    config = home.load()
    tickets, kb = config.source("tickets"), config.source("kb")
    assert tickets is not None and kb is not None
    assert config.pass_env(tickets) == ("JIRA_TOKEN", "JIRA_SITE", "JIRA_SECOND_TOKEN")
    assert config.pass_env(kb) == (*LIBPQ_NAMES, "DATABASE_URL")


def test_a_name_that_is_not_a_variable_name_is_refused(home: Home) -> None:
    home.write_user(REGISTERED.replace('pass_env = ["JIRA_SITE", "JIRA_TOKEN"]', 'pass_env = ["JIRA SITE"]'))
    assert "not a valid environment variable name" in problem_at(home.load_error(), "sources[0].pass_env")


def test_a_name_written_with_escapes_is_refused_so_the_broker_key_cannot_miss_it(home: Home) -> None:
    home.write_user(REGISTERED.replace('"JIRA_SITE"', '"JIRA_\\u0053ITE"'))
    message = problem_at(home.load_error(), "sources[0]")
    assert "'JIRA_SITE' must be written as a plain quoted string" in message


def test_a_project_file_may_not_widen_what_an_adapter_sees(user_home: Home) -> None:
    user_home.write_project('[[sources]]\nsource_id = "repo-notes"\nadapter = "notes"\nlocation = "./docs"\n'
                            'pass_env = ["AWS_SECRET_ACCESS_KEY"]\n')
    error = user_home.load_error()
    assert isinstance(error, TrustError)
    assert "looks executable" in problem_at(error, "sources[0].pass_env")
