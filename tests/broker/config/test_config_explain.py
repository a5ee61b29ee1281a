"""recall config explain: every value with the file that supplied it."""

from __future__ import annotations

import json

from .conftest import TASKS_UID, USER_CONFIG, Home


def explain_json(home: Home, *args: str) -> dict:
    done = home.recall("config", "explain", "--json", *args, cwd=home.project_dir)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def source(report: dict, source_id: str) -> dict:
    return next(s for s in report["sources"] if s["source_id"] == source_id)


def test_json_names_the_layer_and_file_of_every_value(user_home: Home) -> None:
    user_home.write_project('[[sources]]\nsource_id = "tasks"\nbase_prior = 1.5\n')
    fields = source(explain_json(user_home), "tasks")["fields"]
    assert fields["base_prior"] == {
        "value": 1.5,
        "layer": "project",
        "origin": str(user_home.project_file),
    }
    assert fields["adapter"] == {
        "value": "tasks",
        "layer": "user",
        "origin": str(user_home.user_file),
    }
    assert fields["freshness_mode"] == {"value": "live", "layer": "builtin", "origin": None}
    assert fields["enabled"] == {"value": True, "layer": "default", "origin": None}


def test_json_lists_paths_files_defaults_adapters_profiles_and_identity(user_home: Home) -> None:
    user_home.write_project('[profiles.work]\nmax_sensitivity = "internal"\n')
    report = explain_json(user_home, "--profile", "work")
    assert report["paths"]["state_dir"] == user_home.environ["XDG_STATE_HOME"] + "/recall/work"
    assert report["paths"]["project_file"] == str(user_home.project_file)
    assert report["files"] == [
        {"layer": "user", "path": str(user_home.user_file)},
        {"layer": "project", "path": str(user_home.project_file)},
    ]
    assert report["defaults"]["timeout_ms"] == {"value": 2000, "layer": "default", "origin": None}
    assert [a["name"] for a in report["adapters"]] == ["eventstore", "gmail", "notes", "postgres", "semantic", "tasks"]
    work = report["profiles"][0]
    assert work["fields"]["max_sensitivity"]["layer"] == "project"
    assert work["fields"]["sources"]["layer"] == "user"
    assert {"source_id": "tasks", "source_uid": TASKS_UID} in report["identity"]


def test_json_shows_location_resolution(user_home: Home) -> None:
    notes = source(explain_json(user_home), "notes")
    assert notes["fields"]["location"]["value"] == str(user_home.config_dir / "notes")
    assert notes["resolved"] == {
        "location_as_written": "notes",
        "resolved_against": str(user_home.config_dir),
        "location_kind_explicit": True,
    }


def test_only_keys_a_user_can_set_are_listed_as_set(user_home: Home) -> None:
    fields = source(explain_json(user_home), "notes")["fields"]
    assert not {"base_dir", "location_original", "location_rewritten",
                "location_kind_explicit"} & set(fields)


def test_json_shows_settings_and_intent_priors_per_key(home: Home) -> None:
    home.write_user(
        USER_CONFIG.replace(
            'settings = { extensions = [".md"] }',
            'settings = { extensions = [".md"] }\nintent_priors = { natural_language = 1.3 }',
        )
    )
    notes = source(explain_json(home), "notes")
    assert notes["settings"]["extensions"]["value"] == [".md"]
    assert notes["intent_priors"]["natural_language"]["value"] == 1.3


def test_human_output_labels_every_value_with_its_origin(user_home: Home) -> None:
    user_home.write_project('[[sources]]\nsource_id = "tasks"\ntimeout_ms = 900\n')
    done = user_home.recall("config", "explain", cwd=user_home.project_dir)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "paths"
    assert any(
        line.strip().startswith("timeout_ms = 900")
        and f"[project {user_home.project_file}]" in line
        for line in lines
    )
    assert any(
        line.strip().startswith('adapter = "tasks"') and f"[user {user_home.user_file}]" in line
        for line in lines
    )
    assert any(
        line.strip().startswith("fusion_reserve_ms = 25") and "[default]" in line for line in lines
    )
    assert any(line.strip().startswith("tasks ") and "[builtin]" in line for line in lines)
    assert f"  tasks -> {TASKS_UID}" in lines


def test_human_output_marks_the_synthetic_default_profile(home: Home) -> None:
    done = home.recall("config", "explain")
    assert "default  (no profile configured: every enabled source)" in done.stdout


def test_an_unknown_profile_is_an_error_listing_the_configured_ones(user_home: Home) -> None:
    done = user_home.recall("config", "explain", "--profile", "nope")
    assert done.returncode == 1
    assert done.stderr == "recall: unknown profile 'nope' (configured profiles: work)\n"
