"""Bad configuration: every problem named with its file and dotted key, all at once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from broker.config import load_config
from broker.errors import ConfigError

from .conftest import NOTES_UID, TASKS_UID, USER_CONFIG, Home, problem_at

CROCKFORD_UID = re.compile(r'source_uid = "([0-9A-HJKMNP-TV-Z]{16})"')


def tasks_source(extra: str = "", uid: str = TASKS_UID, source_id: str = "tasks") -> str:
    return (
        f'[[sources]]\nsource_uid = "{uid}"\nsource_id = "{source_id}"\nadapter = "tasks"\n{extra}'
    )


def user_error(home: Home, text: str) -> ConfigError:
    home.write_user(text)
    return home.load_error()


def test_malformed_toml_names_the_file_line_and_column(home: Home) -> None:
    error = user_error(home, "[defaults]\ntimeout_ms = = 3\n")
    message = str(error.problems[0])
    assert "malformed TOML" in message and str(home.user_file) in message
    assert "line 2" in message and "column" in message


def test_unknown_key_suggests_the_nearest_valid_key(home: Home) -> None:
    error = user_error(home, "[defaults]\ntimout_ms = 10\n")
    assert "did you mean 'timeout_ms'?" in problem_at(error, "defaults.timout_ms")


def test_unknown_source_key_is_named_with_its_index(home: Home) -> None:
    error = user_error(home, tasks_source("base_priro = 1.2\n"))
    assert "did you mean 'base_prior'?" in problem_at(error, "sources[0].base_priro")


def test_unknown_top_level_table_is_refused(home: Home) -> None:
    error = user_error(home, "[profile.work]\nsources = []\n")
    assert "did you mean 'profiles'?" in problem_at(error, "profile")


def test_unknown_key_far_from_any_valid_one_lists_the_valid_keys(home: Home) -> None:
    error = user_error(home, "[defaults]\nzzz = 1\n")
    assert "fusion_reserve_ms" in problem_at(error, "defaults.zzz")


def test_duplicate_source_ids_are_refused(home: Home) -> None:
    error = user_error(home, tasks_source() + tasks_source(uid="01J8ZKQ4M7OTHERX"))
    assert "declared twice" in problem_at(error, "sources[1].source_id")


def test_duplicate_source_uids_are_refused(home: Home) -> None:
    error = user_error(home, tasks_source() + tasks_source(source_id="todo"))
    message = problem_at(error, "sources[1].source_uid")
    assert "claimed by both 'tasks'" in message


def test_profile_naming_an_unknown_source_is_refused_with_a_suggestion(home: Home) -> None:
    error = user_error(home, tasks_source() + '[profiles.p]\nsources = ["task"]\n')
    message = problem_at(error, "profiles.p.sources")
    assert "'task', which is not configured" in message and "did you mean 'tasks'?" in message


def test_profile_naming_a_source_twice_is_refused(home: Home) -> None:
    error = user_error(home, tasks_source() + '[profiles.p]\nsources = ["tasks", "tasks"]\n')
    assert "more than once" in problem_at(error, "profiles.p.sources")


def test_wrong_type_is_refused_naming_both_types(home: Home) -> None:
    error = user_error(home, '[defaults]\ntimeout_ms = "fast"\n')
    assert "must be an integer, got a string" in problem_at(error, "defaults.timeout_ms")


def test_a_boolean_is_not_a_number(home: Home) -> None:
    error = user_error(home, tasks_source("base_prior = true\n"))
    assert "must be a number, got a boolean" in problem_at(error, "sources[0].base_prior")


def test_sources_must_be_an_array_of_tables(home: Home) -> None:
    error = user_error(home, '[sources]\nsource_id = "x"\n')
    assert "array of tables" in problem_at(error, "sources")


@pytest.mark.parametrize("variable", ["XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"])
def test_relative_xdg_directories_are_refused(home: Home, variable: str) -> None:
    environ = {**home.environ, variable: "relative/dir"}
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=home.project_dir, environ=environ)
    assert "must be an absolute path" in problem_at(caught.value, variable)


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("base_prior = 2.5", "base_prior"),
        ("base_prior = 0.49", "base_prior"),
        ("timeout_ms = 0", "timeout_ms"),
        ('sensitivity = "secret"', "sensitivity"),
        ('freshness_mode = "sometimes"', "freshness_mode"),
        ('location_kind = "file"', "location_kind"),
        ("intent_priors = { natural_language = 3.0 }", "intent_priors.natural_language"),
    ],
)
def test_source_values_out_of_range_are_refused(home: Home, line: str, key: str) -> None:
    error = user_error(home, tasks_source('location = "/x"\n' + line + "\n"))
    problem_at(error, f"sources[0].{key}")


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("relevance_floor = 1.0", "relevance_floor"),
        ("relevance_floor = -0.1", "relevance_floor"),
        ("fusion_reserve_ms = -1", "fusion_reserve_ms"),
        ("max_results = -1", "max_results"),
        ("timeout_ms = 0", "timeout_ms"),
        ('profile = "../escape"', "profile"),
    ],
)
def test_default_values_out_of_range_are_refused(home: Home, line: str, key: str) -> None:
    error = user_error(home, f"[defaults]\n{line}\n")
    problem_at(error, f"defaults.{key}")


def test_an_out_of_range_prior_is_refused_never_clamped(home: Home) -> None:
    error = user_error(home, tasks_source("base_prior = 2.01\n"))
    assert "outside the allowed range [0.5, 2]" in problem_at(error, "sources[0].base_prior")


def test_an_unknown_query_class_in_intent_priors_is_refused(home: Home) -> None:
    error = user_error(home, tasks_source("[sources.intent_priors]\nidentifier = 1.2\n"))
    message = problem_at(error, "sources[0].intent_priors.identifier")
    assert "did you mean 'identifier_query'?" in message


def test_a_source_without_uid_is_refused_with_a_fresh_uid_to_paste(home: Home) -> None:
    error = user_error(home, '[[sources]]\nsource_id = "tasks"\nadapter = "tasks"\n')
    problem = next(p for p in error.problems if p.key == "sources[0].source_uid")
    assert problem.kind == "identity" and problem.source_id == "tasks"
    pasted = CROCKFORD_UID.search(problem.message)
    assert pasted is not None
    home.write_user(tasks_source(uid=pasted.group(1)))
    assert home.load().source("tasks") is not None


def test_each_missing_uid_gets_a_different_suggestion(home: Home) -> None:
    error = user_error(home, '[[sources]]\nsource_id = "a"\nadapter = "tasks"\n')
    again = home.load_error()
    assert CROCKFORD_UID.search(error.problems[0].message) != CROCKFORD_UID.search(
        again.problems[0].message
    )


def test_a_source_id_with_a_colon_is_refused(home: Home) -> None:
    error = user_error(home, tasks_source(source_id="my:tasks"))
    assert "contains ':'" in problem_at(error, "sources[0].source_id")


def test_a_source_without_source_id_or_adapter_is_refused(home: Home) -> None:
    error = user_error(home, f'[[sources]]\nsource_uid = "{TASKS_UID}"\n')
    problem_at(error, "sources[0].source_id")
    problem_at(error, "sources[0].adapter")


def test_an_unregistered_adapter_is_refused_with_a_suggestion(home: Home) -> None:
    text = f'[[sources]]\nsource_uid = "{TASKS_UID}"\nsource_id = "t"\nadapter = "taks"\n'
    error = user_error(home, text)
    assert "did you mean 'tasks'?" in problem_at(error, "sources[0].adapter")


def test_a_two_mode_adapter_needs_an_explicit_freshness_mode(home: Home) -> None:
    text = (
        '[adapters.mirror]\ncommand = "recall-mirror"\nfreshness_modes = ["live", "indexed"]\n'
        f'[[sources]]\nsource_uid = "{NOTES_UID}"\nsource_id = "m"\nadapter = "mirror"\n'
    )
    error = user_error(home, text)
    assert "must choose a freshness_mode" in problem_at(error, "sources[0].freshness_mode")


def test_gmail_serves_an_mbox_indexed_and_the_api_live_without_being_told(home: Home) -> None:
    from broker.config import config_from_text

    text = (
        f'[[sources]]\nsource_uid = "{NOTES_UID}"\nsource_id = "takeout"\nadapter = "gmail"\n'
        'location = "/mail/All mail.mbox"\n'
        f'[[sources]]\nsource_uid = "{TASKS_UID}"\nsource_id = "inbox"\nadapter = "gmail"\n'
    )
    config = config_from_text(text, base_dir=home.root)
    assert config.source("takeout").freshness_mode == "indexed"
    assert config.source("inbox").freshness_mode == "live"


def test_a_freshness_mode_the_adapter_lacks_is_refused(home: Home) -> None:
    error = user_error(home, tasks_source('freshness_mode = "indexed"\n'))
    assert "does not support freshness mode 'indexed'" in problem_at(
        error, "sources[0].freshness_mode"
    )


def test_location_kind_without_location_is_refused(home: Home) -> None:
    error = user_error(home, tasks_source('location_kind = "path"\n'))
    problem_at(error, "sources[0].location_kind")


def test_a_uri_location_needs_a_scheme(home: Home) -> None:
    error = user_error(home, tasks_source('location = "example.com"\nlocation_kind = "uri"\n'))
    assert "no scheme" in problem_at(error, "sources[0].location")


def test_an_external_adapter_needs_command_and_freshness_modes(home: Home) -> None:
    error = user_error(home, "[adapters.x]\nargs = []\n")
    problem_at(error, "adapters.x.command")
    problem_at(error, "adapters.x.freshness_modes")


def test_an_external_adapter_command_may_not_be_a_relative_path(home: Home) -> None:
    error = user_error(home, '[adapters.x]\ncommand = "bin/x"\nfreshness_modes = ["live"]\n')
    assert "absolute path or a bare name" in problem_at(error, "adapters.x.command")


def test_an_external_adapter_needs_known_freshness_modes(home: Home) -> None:
    error = user_error(home, '[adapters.x]\ncommand = "x"\nfreshness_modes = ["fresh"]\n')
    problem_at(error, "adapters.x.freshness_modes")


@pytest.mark.parametrize("name", ["notes", "documents", "gmail"])
def test_a_builtin_adapter_may_not_be_redefined(home: Home, name: str) -> None:
    error = user_error(home, f'[adapters.{name}]\ncommand = "x"\nfreshness_modes = ["live"]\n')
    assert "built in" in problem_at(error, f"adapters.{name}")


def test_adapters_d_files_may_hold_only_adapters(home: Home) -> None:
    home.write_adapters("x.toml", "[defaults]\ntimeout_ms = 5\n")
    error = home.load_error()
    assert "may hold only [adapters.NAME]" in problem_at(error, "defaults")


def test_evaluation_paths_must_be_absolute(home: Home) -> None:
    error = user_error(home, '[evaluation]\ndevelopment_pack = "packs/dev"\n')
    problem_at(error, "evaluation.development_pack")


def test_must_abstain_entries_need_query_and_reason(home: Home) -> None:
    error = user_error(home, '[[evaluation.must_abstain]]\nquery = "x"\n')
    problem_at(error, "evaluation.must_abstain[0].reason")


def test_a_default_profile_that_is_not_configured_is_refused(home: Home) -> None:
    error = user_error(home, '[defaults]\nprofile = "wrok"\n' + USER_CONFIG)
    assert "did you mean 'work'?" in problem_at(error, "defaults.profile")


def test_an_explicit_user_file_that_does_not_exist_is_refused(home: Home) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(environ=home.environ, user_file=home.root / "missing.toml")
    assert "cannot read" in str(caught.value)


def test_problems_from_every_file_are_reported_together(home: Home) -> None:
    home.write_user("[defaults]\ntimout_ms = 1\n" + tasks_source("base_prior = 9.0\n"))
    home.write_project('[[sources]]\nsource_id = "tasks"\nenabled = false\n')
    error = home.load_error()
    assert {(Path(p.file or "").name, p.key) for p in error.problems} == {
        ("config.toml", "defaults.timout_ms"),
        ("config.toml", "sources[0].base_prior"),
        ("recall.toml", "sources[0].enabled"),
    }
    assert str(error).startswith("configuration has 3 problems:")


def test_the_cli_reports_bad_configuration_in_one_message_with_exit_1(home: Home) -> None:
    home.write_user("[defaults]\ntimout_ms = 1\nmax_results = -1\n")
    done = home.recall("config", "explain")
    assert done.returncode == 1
    assert done.stderr.startswith("recall: configuration has 2 problems:")
    assert "Traceback" not in done.stderr and done.stdout == ""
