"""Source identities: minted once at random, never derived from mutable fields."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_UID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{4,64}$")
PROJECT_UID_PREFIX = "proj-"


def new_source_uid() -> str:
    """Ten random bytes in Crockford base32: sixteen characters."""
    import secrets  # only 'recall init' mints identities; loading a configuration does not

    number = int.from_bytes(secrets.token_bytes(10), "big")
    return "".join(_CROCKFORD[(number >> shift) & 31] for shift in range(75, -1, -5))


def uid_problem(uid: str) -> str | None:
    if _UID_PATTERN.fullmatch(uid):
        return None
    return f"source_uid {uid!r} must be 4-64 characters of A-Z, a-z, 0-9, '_' or '-'"


def project_source_uid(project_file: Path, source_id: str) -> str:
    """The identity of a source a project file introduces.

    A project file may not choose an identity, so one is derived from where the
    file lives and the name it gives the source: stable across loads, and unable
    to collide with a user source's random uid.
    """
    digest = hashlib.sha256(f"{project_file}\0{source_id}".encode()).hexdigest()
    return PROJECT_UID_PREFIX + digest[:20]
