"""A cloned repository may not point the user's credentials anywhere (attack 1).

Each test plants a hostile ``recall.toml`` and runs the real CLI in that folder.
The attacker's server is a real loopback server speaking the Gmail API and
Google's token endpoint: it records every request, so "nothing was sent" is
observed, not assumed.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.adapters.gmail.fake_gmail import (
    CLIENT_ID,
    CLIENT_SECRET,
    FIRST_ACCESS_TOKEN,
    REFRESH_TOKEN,
    FakeGmail,
)

from .conftest import Machine, assert_refused, guarded_registration, write_records

GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"


def write_users_token(machine: Machine, *, expired: bool) -> None:
    """The user's own Gmail token, where `recall-gmail auth` leaves it."""
    expiry = datetime.now(UTC) + (timedelta(hours=-1) if expired else timedelta(hours=1))
    machine.config_dir.mkdir(parents=True, exist_ok=True)
    token = machine.config_dir / "gmail-token.json"
    token.write_text(json.dumps({
        "token": FIRST_ACCESS_TOKEN, "refresh_token": REFRESH_TOKEN, "token_uri": GOOGLE_TOKEN_URI,
        "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
        "scopes": ["https://www.googleapis.com/auth/gmail.readonly"],
        "expiry": expiry.replace(tzinfo=None).isoformat() + "Z",
    }))
    token.chmod(0o600)


def gmail_project(**settings: str) -> str:
    lines = ["[[sources]]", 'source_id = "mail"', 'adapter = "gmail"', 'location = "me@example.com"']
    if settings:
        lines += ["[sources.settings]", *(f"{k} = {json.dumps(v)}" for k, v in settings.items())]
    return "\n".join(lines) + "\n"


def opt_in(machine: Machine, adapter: str = "gmail") -> None:
    machine.write_user(f'[projects."{machine.repo}"]\ncredential_adapters = ["{adapter}"]\n')


@pytest.mark.parametrize("command", [("query", "invoice"), ("sources",), ("doctor",)])
def test_a_project_cannot_send_the_users_gmail_token_to_its_server(
    machine: Machine, attacker: FakeGmail, command: tuple[str, ...]
) -> None:
    write_users_token(machine, expired=False)
    project = machine.write_project(gmail_project(api_base=attacker.base_url))
    result = machine.recall(*command)
    assert attacker.requests == []  # first: the leak itself
    said = assert_refused(result, project, "sources[0].adapter")
    assert "holds the user's credentials" in said


def test_a_project_cannot_collect_the_refresh_token_and_client_secret(
    machine: Machine, attacker: FakeGmail
) -> None:
    write_users_token(machine, expired=True)
    project = machine.write_project(gmail_project(token_uri=attacker.token_uri))
    result = machine.recall("query", "invoice")
    assert attacker.token_requests == [] and attacker.requests == []
    assert_refused(result, project, "sources[0].adapter")


def test_a_project_cannot_add_an_event_store_source(machine: Machine) -> None:
    project = machine.write_project(
        '[[sources]]\nsource_id = "memory"\nadapter = "eventstore"\nlocation = "store"\n'
    )
    (machine.repo / "store").mkdir()
    result = machine.recall("query", "anything")
    assert_refused(result, project, "sources[0].adapter")
    assert f'[projects."{machine.repo}"] credential_adapters = ["eventstore"]' in result.stderr


@pytest.mark.parametrize(
    "setting", ["api_base", "token_uri", "token_file"], ids=lambda s: f"settings.{s}"
)
def test_an_opted_in_project_still_cannot_choose_where_the_token_goes(
    machine: Machine, attacker: FakeGmail, setting: str
) -> None:
    write_users_token(machine, expired=True)
    opt_in(machine)
    value = {"api_base": attacker.base_url, "token_uri": attacker.token_uri,
             "token_file": "stolen-token.json"}[setting]
    project = machine.write_project(gmail_project(**{setting: value}))
    result = machine.recall("query", "invoice")
    assert attacker.requests == [] and attacker.token_requests == []
    assert_refused(result, project, f"sources[0].settings.{setting}")
    assert "marks it trusted_only" in result.stderr


@pytest.mark.parametrize("command", [("query", "launch"), ("doctor",)])
def test_a_third_party_adapter_protects_its_own_endpoint_setting(
    machine: Machine, command: tuple[str, ...]
) -> None:
    """The broker knows nothing of ``endpoint``; the adapter's schema marks it trusted_only."""
    machine.write_user(guarded_registration(machine))
    write_records(machine.repo / "notes.json", [{"id": "a", "title": "Plan", "body": "launch plan"}])
    project = machine.write_project(
        '[[sources]]\nsource_id = "repo"\nadapter = "guarded"\nlocation = "notes.json"\n'
        '[sources.settings]\nendpoint = "https://collector.example/upload"\n'
    )
    said = assert_refused(machine.recall(*command), project, "sources[0].settings.endpoint")
    assert "adapter 'guarded' marks it trusted_only" in said
    # the adapter was asked for its schema without the project's settings, never with them
    assert all(not settings for settings in machine.received_settings())


def test_a_setting_the_adapter_does_not_declare_is_refused(machine: Machine) -> None:
    machine.write_user(guarded_registration(machine))
    write_records(machine.repo / "notes.json", [{"id": "a", "title": "Plan", "body": "launch plan"}])
    project = machine.write_project(
        '[[sources]]\nsource_id = "repo"\nadapter = "guarded"\nlocation = "notes.json"\n'
        '[sources.settings]\nupload_to = "https://collector.example/"\n'
    )
    # asked twice: the second query starts, first thing, what the first one launched
    for _ in range(2):
        result = machine.recall("query", "launch")
        assert_refused(result, project, "sources[0].settings.upload_to")
        assert "does not declare it" in result.stderr
    assert machine.received_settings(), "the adapter was never started"
    assert all(not settings for settings in machine.received_settings())


def test_a_setting_the_adapter_leaves_open_reaches_it(machine: Machine) -> None:
    machine.write_user(guarded_registration(machine))
    write_records(machine.repo / "notes.json", [{"id": "a", "title": "Plan", "body": "launch plan"}])
    machine.write_project(
        '[[sources]]\nsource_id = "repo"\nadapter = "guarded"\nlocation = "notes.json"\n'
        '[sources.settings]\nlabel = "team"\n'
    )
    result = machine.recall("query", "launch", "--json")
    assert result.returncode == 0, result.stderr
    assert [r["locator"] for r in json.loads(result.stdout)["results"]] == ["repo:a"]
    assert {"label": "team"} in machine.received_settings()


def test_a_registered_adapter_the_user_says_holds_credentials_needs_an_opt_in(
    machine: Machine,
) -> None:
    registration = guarded_registration(machine, holds_credentials=True)
    machine.write_user(registration)
    write_records(machine.repo / "notes.json", [{"id": "a", "title": "Plan", "body": "launch plan"}])
    project = machine.write_project(
        '[[sources]]\nsource_id = "repo"\nadapter = "guarded"\nlocation = "notes.json"\n'
    )
    assert_refused(machine.recall("query", "launch"), project, "sources[0].adapter")
    assert machine.received_settings() == []  # refused before anything started

    machine.write_user(
        registration + f'\n[projects."{machine.repo}"]\ncredential_adapters = ["guarded"]\n'
    )
    result = machine.recall("query", "launch", "--json")
    assert result.returncode == 0, result.stderr
    assert [r["locator"] for r in json.loads(result.stdout)["results"]] == ["repo:a"]


def sidecar_request(machine: Machine) -> str:
    return json.dumps({
        "protocol": "sidecar.plugin/v1", "method": "list", "instance": "recall", "deadlineMs": 20000,
        "context": {"project": {"root": str(machine.repo), "workDir": str(machine.repo),
                                "name": "cloned", "branch": "main", "hostId": ""}},
        "params": {"collection": "results", "query": "launch", "view": "",
                   "sort": {"key": "", "dir": ""}, "cursor": "", "limit": 20},
    })


@pytest.mark.parametrize(
    "surface", ["expand", "sources", "refresh", "serve", "mcp", "sidecar-plugin"]
)
def test_every_surface_refuses_a_trusted_only_setting_before_the_adapter_sees_it(
    machine: Machine, surface: str
) -> None:
    machine.write_user(guarded_registration(machine))
    write_records(machine.repo / "notes.json", [{"id": "a", "title": "Plan", "body": "launch plan"}])
    project = machine.write_project(
        '[[sources]]\nsource_id = "repo"\nadapter = "guarded"\nlocation = "notes.json"\n'
        '[sources.settings]\nendpoint = "https://collector.example/upload"\n'
    )
    args = {"expand": ("expand", "repo:a"), "serve": ("serve", "--addr", "127.0.0.1:0")}
    stdin = {"mcp": "", "sidecar-plugin": sidecar_request(machine)}.get(surface)
    result = machine.recall(*args.get(surface, (surface,)), stdin=stdin, timeout=30)
    assert all(not settings for settings in machine.received_settings())
    if surface == "sidecar-plugin":
        error = json.loads(result.stdout)["error"]
        assert error["code"] == "invalid_config"
        assert "may not set 'endpoint'" in error["message"]
    else:
        assert_refused(result, project, "sources[0].settings.endpoint")
