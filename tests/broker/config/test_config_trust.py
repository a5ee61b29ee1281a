"""The project trust boundary: every refusal, and the tuning a project may do."""

from __future__ import annotations

import pytest

from adapter_sdk.protocol import Sensitivity
from broker.config import Layer
from broker.config.identity import PROJECT_UID_PREFIX
from broker.errors import TrustError

from .conftest import TASKS_UID, USER_CONFIG, Home, problem_at

NEW_SOURCE = """
[[sources]]
source_id = "repo-notes"
adapter = "notes"
location = "./docs"
"""


def refusal(home: Home, project: str, key: str) -> str:
    home.write_project(project)
    error = home.load_error()
    assert isinstance(error, TrustError)
    message = problem_at(error, key)
    assert str(home.project_file) in message
    return message


def test_project_may_not_declare_a_command_on_a_source(user_home: Home) -> None:
    message = refusal(user_home, NEW_SOURCE + 'command = "/tmp/evil"\n', "sources[0].command")
    assert "only user configuration decides which programs recall starts" in message


def test_project_may_not_declare_args(user_home: Home) -> None:
    refusal(user_home, NEW_SOURCE + 'args = ["--pwn"]\n', "sources[0].args")


def test_project_may_not_declare_env(user_home: Home) -> None:
    refusal(user_home, NEW_SOURCE + 'env = { LD_PRELOAD = "/tmp/x.so" }\n', "sources[0].env")


def test_project_may_not_hide_a_command_inside_settings(user_home: Home) -> None:
    project = NEW_SOURCE + '[sources.settings.nested]\ncommand = "/tmp/evil"\n'
    refusal(user_home, project, "sources[0].settings.nested.command")


def test_project_may_not_set_an_adapter_setting_naming_a_program(user_home: Home) -> None:
    project = """
[[sources]]
source_id = "repo-tasks"
adapter = "tasks"
location = "todo.txt"
[sources.settings]
task_binary = "./evil.sh"
"""
    refusal(user_home, project, "sources[0].settings.task_binary")


def test_executable_key_match_ignores_case(user_home: Home) -> None:
    refusal(user_home, NEW_SOURCE + 'COMMAND = "x"\n', "sources[0].COMMAND")


def test_project_may_not_set_defaults(user_home: Home) -> None:
    message = refusal(user_home, "[defaults]\ntimeout_ms = 1\n", "defaults")
    assert "[defaults]" in message


def test_project_may_not_set_evaluation(user_home: Home) -> None:
    refusal(user_home, '[evaluation]\ndevelopment_pack = "/tmp/pack"\n', "evaluation")


def test_project_may_not_register_an_adapter(user_home: Home) -> None:
    project = '[adapters.pwn]\ncommand = "/tmp/pwn"\nfreshness_modes = ["live"]\n'
    message = refusal(user_home, project, "adapters")
    assert "register adapters" in message


def test_project_may_not_choose_a_source_uid_for_its_own_source(user_home: Home) -> None:
    project = NEW_SOURCE + 'source_uid = "01J8ZKQ4M7CHOSEN"\n'
    message = refusal(user_home, project, "sources[0].source_uid")
    assert "may not choose a source_uid" in message


def test_project_may_not_redeclare_the_uid_of_a_user_source(user_home: Home) -> None:
    project = f'[[sources]]\nsource_id = "tasks"\nsource_uid = "{TASKS_UID}"\n'
    refusal(user_home, project, "sources[0].source_uid")


def test_project_may_not_repoint_a_user_source_at_another_adapter(user_home: Home) -> None:
    project = '[[sources]]\nsource_id = "tasks"\nadapter = "notes"\n'
    message = refusal(user_home, project, "sources[0].adapter")
    assert "may not repoint" in message


def test_project_may_not_redirect_a_user_source_location(user_home: Home) -> None:
    project = '[[sources]]\nsource_id = "tasks"\nlocation = "/tmp/attacker/todo.txt"\n'
    message = refusal(user_home, project, "sources[0].location")
    assert "may not redirect" in message


def test_project_may_not_change_a_user_source_location_kind(user_home: Home) -> None:
    project = '[[sources]]\nsource_id = "tasks"\nlocation_kind = "opaque"\n'
    refusal(user_home, project, "sources[0].location_kind")


def test_project_may_not_change_a_user_source_settings(user_home: Home) -> None:
    project = '[[sources]]\nsource_id = "notes"\n[sources.settings]\nextensions = [".txt"]\n'
    refusal(user_home, project, "sources[0].settings")


def test_project_may_not_disable_a_user_source(user_home: Home) -> None:
    project = '[[sources]]\nsource_id = "tasks"\nenabled = false\n'
    message = refusal(user_home, project, "sources[0].enabled")
    assert "may not enable or disable" in message


def test_project_may_not_change_a_user_source_freshness_mode(user_home: Home) -> None:
    project = '[[sources]]\nsource_id = "tasks"\nfreshness_mode = "indexed"\n'
    refusal(user_home, project, "sources[0].freshness_mode")


def test_project_may_not_lower_a_sensitivity_floor(user_home: Home) -> None:
    project = '[[sources]]\nsource_id = "notes"\nsensitivity = "public"\n'
    message = refusal(user_home, project, "sources[0].sensitivity")
    assert "may not lower" in message and "confidential" in message


def test_project_may_not_raise_a_profile_ceiling(user_home: Home) -> None:
    project = '[profiles.work]\nmax_sensitivity = "restricted"\n'
    message = refusal(user_home, project, "profiles.work.max_sensitivity")
    assert "may not raise" in message


def test_every_refusal_in_one_file_is_reported_together(user_home: Home) -> None:
    user_home.write_project(
        '[defaults]\nprofile = "x"\n[[sources]]\nsource_id = "tasks"\nenabled = false\n'
    )
    error = user_home.load_error()
    assert {p.key for p in error.problems} == {"defaults", "sources[0].enabled"}
    assert all(p.kind == "trust_boundary" for p in error.problems)


def test_project_profile_sources_are_added_to_a_user_profile_never_replacing_it(
    user_home: Home,
) -> None:
    user_home.write_project(NEW_SOURCE + '[profiles.work]\nsources = ["repo-notes"]\n')
    work = user_home.load().profile("work")
    assert work.sources == ["notes", "tasks", "repo-notes"]
    assert work.origin("sources").layer is Layer.project


def test_project_may_tune_priors_timeout_types_policy_and_raise_a_floor(user_home: Home) -> None:
    user_home.write_project(
        """
[[sources]]
source_id = "tasks"
base_prior = 1.5
timeout_ms = 900
record_types = ["task"]
freshness_policy = "read on every query"
sensitivity = "restricted"
[sources.intent_priors]
identifier_query = 1.8
"""
    )
    tasks = user_home.load().source("tasks")
    assert tasks is not None
    assert (tasks.base_prior, tasks.timeout_ms, tasks.record_types) == (1.5, 900, ["task"])
    assert tasks.freshness_policy == "read on every query"
    assert tasks.sensitivity is Sensitivity.restricted
    assert tasks.intent_priors == {"identifier_query": 1.8}
    assert tasks.origin("base_prior").file == user_home.project_file
    assert tasks.source_uid == TASKS_UID


def test_project_may_lower_a_profile_ceiling(user_home: Home) -> None:
    user_home.write_project('[profiles.work]\nmax_sensitivity = "public"\n')
    assert user_home.load().profile("work").max_sensitivity is Sensitivity.public


def test_project_restating_a_fixed_value_unchanged_is_accepted(user_home: Home) -> None:
    user_home.write_project('[[sources]]\nsource_id = "tasks"\nadapter = "tasks"\nenabled = true\n')
    tasks = user_home.load().source("tasks")
    assert tasks is not None and tasks.adapter == "tasks"


def test_project_source_gets_a_derived_stable_uid(user_home: Home) -> None:
    user_home.write_project(NEW_SOURCE)
    first = user_home.load().source("repo-notes")
    second = user_home.load().source("repo-notes")
    assert first is not None and second is not None
    assert first.source_uid.startswith(PROJECT_UID_PREFIX)
    assert first.source_uid == second.source_uid


def test_project_source_location_resolves_against_the_project_directory(user_home: Home) -> None:
    user_home.write_project(NEW_SOURCE)
    source = user_home.load().source("repo-notes")
    assert source is not None
    assert source.location == str(user_home.project_dir / "docs")
    assert source.base_dir == user_home.project_dir


def test_a_profile_named_like_a_program_is_only_a_name(user_home: Home) -> None:
    user_home.write_project('[profiles.server]\nsources = ["notes"]\n')
    assert user_home.load().profile("server").sources == ["notes"]


def test_the_refused_adapter_table_is_valid_in_user_configuration(home: Home) -> None:
    home.write_user(
        USER_CONFIG + '[adapters.pwn]\ncommand = "/tmp/pwn"\nfreshness_modes = ["live"]\n'
    )
    adapter = home.load().adapters["pwn"]
    assert adapter.argv == ["/tmp/pwn"]
    assert adapter.origin.layer is Layer.user


@pytest.mark.parametrize("key", ["argv", "environment", "exec", "entrypoint", "shell"])
def test_every_reference_executable_key_is_refused(user_home: Home, key: str) -> None:
    refusal(user_home, NEW_SOURCE + f'{key} = "x"\n', f"sources[0].{key}")


# -- sources a project adds: containment, credentials, opt-in --------------------


@pytest.mark.parametrize(
    ("location", "why"),
    [
        ("..", "outside the project folder"),
        ("docs/../../elsewhere", "outside the project folder"),
        ("/etc", "outside the project folder"),
        ("~/notes", "are not expanded"),
        ("C:\\\\notes", "drive or network share"),
    ],
)
def test_project_source_may_not_read_outside_its_folder(
    user_home: Home, location: str, why: str
) -> None:
    project = f'[[sources]]\nsource_id = "x"\nadapter = "notes"\nlocation = "{location}"\n'
    assert why in refusal(user_home, project, "sources[0].location")


def test_project_source_location_is_resolved_through_symlinks(user_home: Home) -> None:
    (user_home.project_dir / "real").mkdir(parents=True)
    (user_home.project_dir / "alias").symlink_to(user_home.project_dir / "real")
    (user_home.project_dir / "out").symlink_to(user_home.root)
    user_home.write_project(NEW_SOURCE.replace("./docs", "alias"))
    source = user_home.load().source("repo-notes")
    assert source is not None and source.location == str(user_home.project_dir / "real")
    assert "resolves to" in refusal(user_home, NEW_SOURCE.replace("./docs", "out"), "sources[0].location")


@pytest.mark.parametrize("kind", ["opaque", "uri"])
def test_project_source_may_not_choose_a_non_path_location_kind(user_home: Home, kind: str) -> None:
    refusal(user_home, NEW_SOURCE + f'location_kind = "{kind}"\n', "sources[0].location_kind")


def test_project_source_must_name_its_location(user_home: Home) -> None:
    refusal(user_home, '[[sources]]\nsource_id = "x"\nadapter = "notes"\n', "sources[0].location")


@pytest.mark.parametrize("adapter", ["gmail", "eventstore"])
def test_project_may_not_add_a_credential_adapter_source(user_home: Home, adapter: str) -> None:
    project = f'[[sources]]\nsource_id = "x"\nadapter = "{adapter}"\nlocation = "store"\n'
    assert "holds the user's credentials" in refusal(user_home, project, "sources[0].adapter")


def test_user_configuration_opts_a_project_in_to_a_credential_adapter(home: Home) -> None:
    home.write_user(f'[projects."{home.project_dir}"]\ncredential_adapters = ["gmail"]\n')
    home.write_project('[[sources]]\nsource_id = "mail"\nadapter = "gmail"\nlocation = "me@example.com"\n')
    config = home.load()
    source = config.source("mail")
    assert source is not None and (source.location, source.location_kind) == ("me@example.com", "opaque")
    assert config.project_opt_ins == {home.project_dir.resolve(): frozenset({"gmail"})}


def test_an_opt_in_for_another_project_does_not_apply(home: Home) -> None:
    home.write_user(f'[projects."{home.root / "other"}"]\ncredential_adapters = ["gmail"]\n')
    refusal(home, '[[sources]]\nsource_id = "mail"\nadapter = "gmail"\n', "sources[0].adapter")


def test_project_may_not_opt_itself_in(user_home: Home) -> None:
    project = '[projects."."]\ncredential_adapters = ["gmail"]\n'
    assert "may not set [projects]" in refusal(user_home, project, "projects")


def test_a_project_is_named_by_an_absolute_folder(home: Home) -> None:
    home.write_user('[projects."src/crm"]\ncredential_adapters = ["gmail"]\n')
    assert "absolute path" in problem_at(home.load_error(), 'projects."src/crm"')
