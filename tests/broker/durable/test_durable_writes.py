"""State is written whole or not at all: a refused or short write leaves the file as it was."""

from __future__ import annotations

import errno
import os

import pytest

from broker.durable import WriteRefused, append, replace_file
from tests.support.full_disk import fill, full_disk

__all__ = ["full_disk"]  # the fixture, used by name


def disk_that_fills_after(monkeypatch: pytest.MonkeyPatch, room: int) -> None:
    """``os.write`` as a disk with ``room`` bytes left: short counts, then ENOSPC."""
    real_write = os.write
    left = [room]

    def write(handle: int, data: bytes | memoryview) -> int:
        if left[0] == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        taken = min(left[0], len(data), 7)  # a few bytes a call, as a fragmented disk may
        left[0] -= taken
        return real_write(handle, bytes(data[:taken]))

    monkeypatch.setattr(os, "write", write)


def test_an_append_cut_short_is_truncated_back_and_named_in_one_line(tmp_path, monkeypatch):
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_bytes(b'{"header": 1}\n')
    disk_that_fills_after(monkeypatch, 10)
    with pytest.raises(WriteRefused) as refused:
        append(ledger, b'{"entry": "a whole line"}\n', what="test ledger")
    assert str(refused.value) == f"could not write test ledger {ledger}: No space left on device"
    assert ledger.read_bytes() == b'{"header": 1}\n'


def test_an_append_that_keeps_getting_short_counts_writes_everything(tmp_path, monkeypatch):
    ledger = tmp_path / "ledger.jsonl"
    disk_that_fills_after(monkeypatch, 1000)
    append(ledger, b"0123456789" * 5, what="test ledger")
    assert ledger.read_bytes() == b"0123456789" * 5


def test_an_append_that_created_the_file_and_failed_removes_it(tmp_path, monkeypatch):
    ledger = tmp_path / "ledger.jsonl"
    disk_that_fills_after(monkeypatch, 3)
    with pytest.raises(WriteRefused):
        append(ledger, b'{"header": 1}\n', what="test ledger")
    assert not ledger.exists()


def test_a_replacement_the_disk_refuses_leaves_the_original_and_no_temporary(tmp_path, monkeypatch):
    settings = tmp_path / "settings.json"
    settings.write_text("{}\n")
    disk_that_fills_after(monkeypatch, 5)
    with pytest.raises(WriteRefused, match="No space left on device"):
        replace_file(settings, b'{"hooks": {}}\n', what="settings file")
    assert settings.read_text() == "{}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_a_replacement_goes_through_a_symlink_and_keeps_the_mode(tmp_path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "settings.json"
    target.write_text("{}\n")
    target.chmod(0o640)
    link = tmp_path / "settings.json"
    link.symlink_to(target)
    written = replace_file(link, b'{"a": 1}\n', what="settings file")
    assert written == target
    assert link.is_symlink() and target.read_bytes() == b'{"a": 1}\n'
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in dotfiles.iterdir()) == ["settings.json"]


def test_an_exclusive_replacement_never_clobbers_a_file_created_meanwhile(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("# mine\n")
    with pytest.raises(FileExistsError):
        replace_file(config, b"# theirs\n", what="configuration", exclusive=True)
    assert config.read_text() == "# mine\n"


def test_a_real_full_disk_refuses_a_replacement_and_keeps_the_original(full_disk):
    settings = full_disk / "settings.json"
    settings.write_bytes(b"{}\n")
    fill(full_disk)
    with pytest.raises(WriteRefused, match="No space left on device"):
        replace_file(settings, b'{"hooks": {"UserPromptSubmit": []}}\n' * 200, what="settings file")
    assert settings.read_bytes() == b"{}\n"
    assert not [p for p in full_disk.iterdir() if p.name.endswith(".tmp")]
