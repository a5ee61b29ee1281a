"""A broker that cannot start says why in one line, exits 1, and leaves nothing behind."""

from __future__ import annotations

from broker.warm.daemon.socket_location import configuration_key

from .conftest import broker_pids


def _folder_at_the_socket_path(resident):
    folder = resident.runtime / "recall"
    folder.mkdir(mode=0o700)
    in_the_way = folder / f"{configuration_key(resident.env, str(resident.root))}.sock"
    in_the_way.mkdir()
    return folder, in_the_way


def test_a_broker_whose_socket_path_is_taken_says_why_in_one_line(resident):
    folder, in_the_way = _folder_at_the_socket_path(resident)
    for action in ("run", "start"):
        done = resident.recall("daemon", action)
        assert done.returncode == 1, (action, done.stderr)
        (line,) = done.stderr.splitlines()
        assert line.startswith("recall: ") and "Traceback" not in done.stderr
        assert f"cannot listen at {in_the_way}: a folder is in its place" in line
        assert sorted(path.name for path in folder.iterdir() if ".sock." in path.name) == [], "a staging socket was left"
    assert broker_pids(resident.runtime) == []


def test_a_command_answers_in_process_when_no_broker_can_start(resident):
    _folder_at_the_socket_path(resident)
    done = resident.recall("query", "restore", "drill")
    resident.wait_for_starts()
    assert done.returncode == 0 and "restore.md" in done.stdout and done.stderr == ""
    assert broker_pids(resident.runtime) == []
    assert not [path for path in (resident.runtime / "recall").iterdir() if ".sock." in path.name]
