"""Layers, merge order, origins, built-ins and paths."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from adapter_sdk.protocol import Sensitivity
from broker.config import Layer, config_from_text, load_config
from broker.errors import TrustError, UnknownProfile

from .conftest import NOTES_UID, TASKS_UID, USER_CONFIG, Home


def source_table(source_id: str, uid: str, adapter: str, extra: str = "") -> str:
    return (
        f'[[sources]]\nsource_uid = "{uid}"\nsource_id = "{source_id}"\n'
        f'adapter = "{adapter}"\n{extra}'
    )


def test_without_any_file_the_built_in_defaults_apply(home: Home) -> None:
    config = home.load()
    assert (config.defaults.profile, config.defaults.timeout_ms) == ("default", 2000)
    assert (config.defaults.fusion_reserve_ms, config.defaults.max_results) == (25, 20)
    assert config.defaults.relevance_floor == pytest.approx(0.10)
    assert config.defaults.origin("timeout_ms").layer is Layer.default
    assert config.sources == [] and config.files == []


def test_user_defaults_replace_built_ins_and_name_their_file(home: Home) -> None:
    home.write_user("[defaults]\ntimeout_ms = 750\nmax_results = 5\n")
    config = home.load()
    assert (config.defaults.timeout_ms, config.defaults.max_results) == (750, 5)
    assert config.defaults.origin("timeout_ms").file == home.user_file
    assert config.defaults.origin("relevance_floor").layer is Layer.default


def test_builtin_adapters_run_this_package_with_the_current_interpreter(home: Home) -> None:
    adapters = home.load().adapters
    assert set(adapters) == {"notes", "tasks", "gmail", "eventstore", "postgres", "semantic"}
    assert adapters["tasks"].argv == [sys.executable, "-m", "adapters.tasks"]
    assert adapters["notes"].builtin and adapters["notes"].origin.layer is Layer.builtin


def test_builtin_freshness_modes_match_each_adapter(home: Home) -> None:
    modes = {name: a.freshness_modes for name, a in home.load().adapters.items()}
    assert modes == {
        "notes": ["indexed"],
        "semantic": ["indexed"],
        "tasks": ["live"],
        "gmail": ["live", "indexed"],
        "eventstore": ["live"],
        "postgres": ["live"],
    }


def test_documents_is_an_alias_of_the_notes_adapter(home: Home) -> None:
    home.write_user(source_table("docs", NOTES_UID, "documents", 'location = "./notes"\n'))
    config = home.load()
    docs = config.source("docs")
    assert docs is not None and docs.adapter == "notes"
    assert config.adapter_for(docs).argv[-1] == "adapters.notes"


def test_freshness_mode_is_inferred_from_a_single_mode_adapter(home: Home) -> None:
    home.write_user(source_table("tasks", TASKS_UID, "tasks"))
    tasks = home.load().source("tasks")
    assert tasks is not None and tasks.freshness_mode == "live"
    assert tasks.origin("freshness_mode").layer is Layer.builtin


def test_source_timeout_defaults_to_the_configured_default(home: Home) -> None:
    home.write_user("[defaults]\ntimeout_ms = 1234\n" + source_table("tasks", TASKS_UID, "tasks"))
    tasks = home.load().source("tasks")
    assert tasks is not None and tasks.timeout_ms == 1234
    assert tasks.origin("timeout_ms").file == home.user_file


def test_unset_source_fields_take_documented_defaults(home: Home) -> None:
    home.write_user(source_table("tasks", TASKS_UID, "tasks"))
    tasks = home.load().source("tasks")
    assert tasks is not None
    assert (tasks.enabled, tasks.base_prior, tasks.sensitivity) == (
        True,
        1.0,
        Sensitivity.internal,
    )
    assert (tasks.record_types, tasks.settings, tasks.location) == (None, {}, None)


def test_adapters_d_registers_external_adapters(home: Home) -> None:
    home.write_user(source_table("jira", TASKS_UID, "jira"))
    home.write_adapters(
        "jira.toml",
        '[adapters.jira]\ncommand = "recall-jira"\nargs = ["-v"]\nenv = { A = "1" }\n'
        'freshness_modes = ["live"]\n',
    )
    config = home.load()
    jira = config.adapters["jira"]
    assert (jira.argv, jira.env, jira.builtin) == (["recall-jira", "-v"], {"A": "1"}, False)
    assert jira.origin.file == home.config_dir / "adapters.d" / "jira.toml"


def test_adapters_d_files_merge_after_config_toml_in_lexical_order(home: Home) -> None:
    registration = '[adapters.x]\ncommand = "{}"\nfreshness_modes = ["live"]\n'
    home.write_user(registration.format("/from/user"))
    home.write_adapters("b.toml", registration.format("/from/b"))
    home.write_adapters("a.toml", registration.format("/from/a"))
    config = home.load()
    assert config.adapters["x"].argv == ["/from/b"]
    assert [f.path.name for f in config.files] == ["config.toml", "a.toml", "b.toml"]


def test_nearest_project_file_above_the_working_directory_is_used(user_home: Home) -> None:
    (user_home.root / "recall.toml").write_text('[profiles.outer]\nsources = ["notes"]\n')
    user_home.write_project('[profiles.inner]\nsources = ["notes"]\n')
    nested = user_home.project_dir / "src" / "deep"
    nested.mkdir(parents=True)
    config = user_home.load(cwd=nested)
    assert "inner" in config.profiles and "outer" not in config.profiles
    assert config.paths.project_file == user_home.project_file
    assert [f.layer for f in config.files] == [Layer.user, Layer.project]


def test_project_discovery_can_be_turned_off(user_home: Home) -> None:
    user_home.write_project('[profiles.inner]\nsources = ["notes"]\n')
    config = load_config(
        cwd=user_home.project_dir, environ=user_home.environ, discover_project=False
    )
    assert "inner" not in config.profiles and config.paths.project_file is None


def test_an_explicit_project_file_is_read_untrusted(user_home: Home, tmp_path: Path) -> None:
    project = tmp_path / "elsewhere.toml"
    project.write_text('[[sources]]\nsource_id = "tasks"\nenabled = false\n')
    with pytest.raises(TrustError) as caught:
        load_config(environ=user_home.environ, project_file=project)
    assert "may not enable or disable" in str(caught.value)


def test_state_and_workdir_live_under_xdg_state_home(user_home: Home) -> None:
    config = user_home.load()
    state = Path(user_home.environ["XDG_STATE_HOME"]) / "recall"
    assert config.state_dir("work") == state / "work"
    assert config.workdir("work", NOTES_UID) == state / "work" / "adapters" / NOTES_UID
    assert config.cache_dir("work") == Path(user_home.environ["XDG_CACHE_HOME"]) / "recall/work"


def test_xdg_directories_default_under_home(home: Home) -> None:
    environ = {"HOME": home.environ["HOME"]}
    config = load_config(cwd=home.project_dir, environ=environ)
    assert config.paths.config_file == home.root / ".config" / "recall" / "config.toml"
    assert config.state_dir("p") == home.root / ".local" / "state" / "recall" / "p"


def test_profile_lookup_defaults_and_lists_configured_profiles(user_home: Home) -> None:
    config = user_home.load()
    assert config.profile("work").sources == ["notes", "tasks"]
    with pytest.raises(UnknownProfile) as caught:
        config.profile("")
    assert "'default'" in str(caught.value) and "work" in str(caught.value)


def test_sources_are_found_by_id_and_by_uid(user_home: Home) -> None:
    config = user_home.load()
    assert config.source_by_uid(TASKS_UID) is config.source("tasks")
    assert config.source("missing") is None and config.source_by_uid("missing") is None


def test_without_profiles_a_synthetic_default_holds_every_enabled_source(home: Home) -> None:
    home.write_user(
        source_table("notes", NOTES_UID, "notes")
        + source_table("tasks", TASKS_UID, "tasks", "enabled = false\n")
        + source_table("mail", "01J8ZKQ4M7MAILXX", "gmail", 'freshness_mode = "live"\n')
    )
    default = home.load().profile()
    assert default.name == "default" and default.synthetic
    assert default.sources == ["notes", "mail"]
    assert default.max_sensitivity is Sensitivity.restricted


def test_a_user_profile_replaces_the_synthetic_default(user_home: Home) -> None:
    assert set(user_home.load().profiles) == {"work"}


def test_a_project_profile_does_not_remove_the_users_synthetic_default(home: Home) -> None:
    home.write_user(source_table("tasks", TASKS_UID, "tasks"))
    home.write_project('[profiles.repo]\nsources = ["tasks"]\n')
    config = home.load()
    assert config.profile().sources == ["tasks"] and config.profile("repo").sources == ["tasks"]


def test_a_profile_without_ceiling_allows_restricted(home: Home) -> None:
    home.write_user(
        source_table("tasks", TASKS_UID, "tasks") + '[profiles.p]\nsources = ["tasks"]\n'
    )
    assert home.load().profile("p").max_sensitivity is Sensitivity.restricted


def test_relative_path_locations_resolve_against_the_declaring_file(home: Home) -> None:
    home.write_user(source_table("notes", NOTES_UID, "notes", 'location = "../notes"\n'))
    notes = home.load().source("notes")
    assert notes is not None and notes.location == str(home.config_dir.parent / "notes")
    assert (notes.location_kind, notes.location_kind_explicit) == ("path", False)
    assert notes.base_dir == home.config_dir


def test_home_relative_locations_expand_tilde(home: Home) -> None:
    home.write_user(source_table("notes", NOTES_UID, "notes", 'location = "~/notes"\n'))
    notes = home.load().source("notes")
    assert notes is not None and notes.location == str(home.root / "notes")
    assert notes.location_original == "~/notes"


@pytest.mark.parametrize(
    ("location", "kind"),
    [("https://mail.example.com", "uri"), ("me@example.com", "opaque"), ("/srv/notes", "path")],
)
def test_location_kind_is_inferred_when_omitted(home: Home, location: str, kind: str) -> None:
    home.write_user(source_table("notes", NOTES_UID, "notes", f'location = "{location}"\n'))
    notes = home.load().source("notes")
    assert notes is not None and (notes.location, notes.location_kind) == (location, kind)


def test_opaque_locations_pass_byte_for_byte(home: Home) -> None:
    extra = 'location = "./a/../b"\nlocation_kind = "opaque"\n'
    home.write_user(source_table("notes", NOTES_UID, "notes", extra))
    notes = home.load().source("notes")
    assert notes is not None and notes.location == "./a/../b"


def test_config_from_text_reads_one_trusted_document(tmp_path: Path, home: Home) -> None:
    text = USER_CONFIG + '[adapters.x]\ncommand = "/bin/x"\nfreshness_modes = ["live"]\n'
    config = config_from_text(text, base_dir=tmp_path, environ=home.environ)
    notes = config.source("notes")
    assert notes is not None and notes.location == str(tmp_path / "notes")
    assert config.adapters["x"].argv == ["/bin/x"]
    assert config.files[0].path == tmp_path / "config.toml"
