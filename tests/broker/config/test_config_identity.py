"""Source identity: minted at random, independent of every mutable field."""

from __future__ import annotations

import re

from broker.config.identity import new_source_uid

from .conftest import TASKS_UID, Home

CROCKFORD_16 = re.compile(r"^[0-9A-HJKMNP-TV-Z]{16}$")


def test_a_new_uid_is_sixteen_crockford_base32_characters() -> None:
    assert all(CROCKFORD_16.match(new_source_uid()) for _ in range(200))


def test_new_uids_do_not_repeat() -> None:
    assert len({new_source_uid() for _ in range(1000)}) == 1000


def test_renaming_a_source_keeps_its_uid_and_workdir(home: Home) -> None:
    source = f'[[sources]]\nsource_uid = "{TASKS_UID}"\nsource_id = "{{}}"\nadapter = "tasks"\n'
    home.write_user(source.format("tasks"))
    before = home.load()
    home.write_user(source.format("todo"))
    after = home.load()
    renamed = after.source("todo")
    assert renamed is not None and renamed.source_uid == TASKS_UID
    assert after.workdir("default", renamed.source_uid) == before.workdir("default", TASKS_UID)
