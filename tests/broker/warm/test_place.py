"""One resident broker per configuration: what names its socket, and what does not."""

from __future__ import annotations

from pathlib import Path

from broker.warm.daemon.socket_location import configuration_key, place_for

BASE = {"HOME": "/home/ada", "PATH": "/usr/bin:/bin"}


def test_the_same_configuration_names_the_same_broker(tmp_path: Path):
    assert configuration_key(BASE, str(tmp_path)) == configuration_key(dict(BASE), str(tmp_path))


def test_shell_variables_that_change_no_answer_do_not_split_brokers(tmp_path: Path):
    noisy = {**BASE, "PWD": "/elsewhere", "TERM": "xterm", "SHLVL": "3", "RECALL_DAEMON": "1"}
    assert configuration_key(noisy, str(tmp_path)) == configuration_key(BASE, str(tmp_path))


def test_other_configuration_or_state_folders_name_another_broker(tmp_path: Path):
    key = configuration_key(BASE, str(tmp_path))
    for changed in (
        {"XDG_CONFIG_HOME": "/srv/other-config"},
        {"XDG_STATE_HOME": "/srv/other-state"},
        {"XDG_CACHE_HOME": "/srv/other-cache"},
        {"HOME": "/home/grace"},
        {"PATH": "/opt/task/bin:/usr/bin"},
        {"RECALL_GMAIL_TOKEN": "x"},
    ):
        assert configuration_key({**BASE, **changed}, str(tmp_path)) != key, changed


def test_a_project_file_above_the_working_folder_names_another_broker(tmp_path: Path):
    inside = tmp_path / "project" / "src"
    inside.mkdir(parents=True)
    before = configuration_key(BASE, str(inside))
    (tmp_path / "project" / "recall.toml").write_text("")
    assert configuration_key(BASE, str(inside)) != before
    assert configuration_key(BASE, str(inside)) == configuration_key(BASE, str(tmp_path / "project"))


def test_the_socket_lives_in_the_runtime_folder(tmp_path: Path):
    runtime = tmp_path / "run"
    runtime.mkdir()
    place = place_for({**BASE, "XDG_RUNTIME_DIR": str(runtime)}, str(tmp_path))
    assert Path(place.socket).parent == runtime / "recall"
    assert oct((runtime / "recall").stat().st_mode & 0o777) == oct(0o700)
