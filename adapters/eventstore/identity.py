"""Which Polign store a source answers from, and refusing one that is gone or was replaced.

Polign's binary silently creates a fresh, empty store wherever it is pointed,
and its server re-creates a deleted ``data/`` directory. An empty store answers
every question with a confident "nothing", so before and after every call the
adapter checks that the data directory exists and is the one the source last
answered from: its identity (the ``local-key``, and the id and creation time of
each access key Polign wrote into ``data/.auth/keys`` when it created the store,
else the directory's inode) is recorded in the adapter's workdir after each answer. A store with no
``data/``, or whose identity changed, is refused as unavailable, naming the
path; the message says how to accept a store replaced on purpose.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from adapter_sdk import ErrorCode, RpcError

IDENTITY_FILE = "store-identity.json"


class StoreGuard:
    """The identity check of one local data directory, recorded in ``workdir``."""

    def __init__(self, location: str, workdir: str) -> None:
        self.location = Path(location)
        self.record = Path(workdir) / IDENTITY_FILE

    def check(self) -> str:
        """The store's identity now; raises source_unavailable when it must not be read."""
        data = self.location / "data"
        try:
            key = (self.location / "local-key").read_bytes()
            stat = data.stat()
        except FileNotFoundError as exc:
            raise _unavailable(
                f"Polign Recall store {self.location} has no {Path(exc.filename or data).name}: "
                "its data is gone, and opening it would create an empty store. Restore the "
                "directory, or point the source's location at the store's directory"
            ) from None
        except OSError as exc:
            raise _unavailable(f"cannot read Polign Recall store {self.location}: {exc.strerror}") from None
        if not data.is_dir():
            raise _unavailable(f"Polign Recall store {self.location}: {data} is not a directory")
        identity = hashlib.sha256(key + b"\0" + _creation_marks(data, stat).encode()).hexdigest()[:32]
        known = self._recorded()
        if known is not None and known != identity:
            raise _unavailable(
                f"Polign Recall store {self.location} is not the store this source last answered "
                f"from (its data directory or key was replaced). If that was intended, delete "
                f"{self.record} and ask again"
            )
        return identity

    def answered(self, identity: str) -> None:
        """Remember ``identity`` (from :meth:`check` before the call) as the store that answered."""
        if self._recorded() == identity:
            return
        self.record.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.record.with_suffix(".tmp")
        temporary.write_text(json.dumps({"location": str(self.location), "identity": identity}))
        os.replace(temporary, self.record)

    def _recorded(self) -> str | None:
        try:
            value = json.loads(self.record.read_text()).get("identity")
        except (OSError, ValueError, AttributeError):
            return None
        return value if isinstance(value, str) else None


def _creation_marks(data: Path, stat: os.stat_result) -> str:
    """What tells one creation of a data directory from another at the same path.

    A re-created directory often gets the same inode back, but Polign mints new
    access keys (a fresh id and creation time) whenever it creates a store.
    """
    marks = []
    with contextlib.suppress(OSError):
        for entry in sorted((data / ".auth" / "keys").glob("*.json")):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                record = json.loads(entry.read_text())
                marks.append(f"{record.get('key_id')}@{record.get('created_at')}")
    return "\n".join(marks) if marks else f"inode {stat.st_dev}:{stat.st_ino}"


class StoreRefused(RpcError):
    """The configured store must not be read: its data is gone or it was replaced."""


def _unavailable(message: str) -> StoreRefused:
    return StoreRefused(ErrorCode.source_unavailable, message)
