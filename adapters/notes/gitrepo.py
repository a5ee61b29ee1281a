"""The git repository a notes folder lives in, read through the real ``git`` program.

Only read-only plumbing is run (rev-parse, rev-list, ls-tree, cat-file, log),
always as ``git -C <top level>``, with the environment's repository-locating
variables (``GIT_DIR`` and kin) removed so the folder's own repository is the
one read. Imported only when a folder sits in a git work tree; ``subprocess``
only when git is actually run.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import subprocess

GIT_TIMEOUT_S = 120
_LOCATING_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
)
_COMMIT_MARK = "\x01"


class GitError(Exception):
    """A git command failed; the message names the command and what git said."""


class TreeEntry(NamedTuple):
    path: str  # relative to the notes folder
    oid: str
    size: int


class GitRepo:
    """The work tree holding a notes folder; ``prefix`` is the folder's path inside it
    (``""`` or ending in ``/``). A plain class: it is built on every handshake."""

    def __init__(self, toplevel: str, prefix: str) -> None:
        self.toplevel = toplevel
        self.prefix = prefix

    def commit_at(self, instant: datetime) -> str | None:
        """The last commit on HEAD's history committed at or before ``instant``; None
        when there is none (the history starts later, or nothing is committed yet)."""
        seconds = int(instant.timestamp() // 1)
        result = self._run("rev-list", "-1", f"--before=@{seconds}", "HEAD", check=False)
        if result.returncode == 0:
            return result.stdout.decode().strip() or None
        if self._run("rev-parse", "-q", "--verify", "HEAD", check=False).returncode != 0:
            return None  # an unborn branch: nothing committed yet
        raise GitError(_failure(("rev-list", "HEAD"), result))

    def resolve(self, short: str) -> str | None:
        """The full id of the commit an abbreviated id names, if the repository has it."""
        result = self._run("rev-parse", "-q", "--verify", f"{short}^{{commit}}", check=False)
        return result.stdout.decode().strip() if result.returncode == 0 else None

    def tree(self, commit: str) -> list[TreeEntry]:
        """Every regular file under the folder in ``commit`` (links and submodules are not notes)."""
        args = ["ls-tree", "-r", "-z", "-l", commit]
        if self.prefix:
            args += ["--", self.prefix]
        entries = []
        for record in self._run(*args).stdout.split(b"\0"):
            if not record:
                continue
            meta, _, name = record.partition(b"\t")
            mode, kind, oid, size = meta.split()
            path = name.decode("utf-8", errors="surrogateescape")
            if kind != b"blob" or mode not in (b"100644", b"100755") or not path.startswith(self.prefix):
                continue
            entries.append(TreeEntry(path[len(self.prefix) :], oid.decode(), int(size)))
        return entries

    def blobs(self, oids: list[str]) -> dict[str, bytes]:
        """The contents of the named blobs, read through one ``cat-file --batch``."""
        if not oids:
            return {}
        wanted = list(dict.fromkeys(oids))
        out = self._run("cat-file", "--batch", stdin="".join(f"{o}\n" for o in wanted).encode()).stdout
        found: dict[str, bytes] = {}
        position = 0
        for oid in wanted:
            header_end = out.index(b"\n", position)
            header = out[position:header_end].split()
            position = header_end + 1
            if len(header) < 3:  # "<oid> missing"
                continue
            size = int(header[2])
            found[oid] = out[position : position + size]
            position += size + 1
        return found

    def last_changed(self, commit: str) -> dict[str, int]:
        """Folder-relative path → commit time (seconds) of the last commit up to ``commit``
        that changed it."""
        args = ["log", "-z", "--name-only", "--no-renames", f"--format={_COMMIT_MARK}%ct", commit]
        if self.prefix:
            args += ["--", self.prefix]
        changed: dict[str, int] = {}
        for record in self._run(*args).stdout.decode("utf-8", "surrogateescape").split(_COMMIT_MARK):
            if not record:
                continue
            stamp, *names = record.split("\0")
            for name in names:
                name = name.lstrip("\n")
                if name.startswith(self.prefix):
                    changed.setdefault(name[len(self.prefix) :], int(stamp))
        return changed

    def commit_time(self, commit: str) -> int:
        return int(self._run("show", "-s", "--format=%ct", commit).stdout.decode().strip())

    def _run(self, *args: str, stdin: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        result = _git(self.toplevel, *args, stdin=stdin)
        if check and result.returncode != 0:
            raise GitError(_failure(args, result))
        return result


def git_on_path() -> bool:
    return any(
        os.access(os.path.join(directory, "git"), os.X_OK)
        for directory in os.environ.get("PATH", "").split(os.pathsep)
        if directory
    )


def find_repo(root: str) -> tuple[GitRepo | None, str | None]:
    """The work tree holding ``root`` as git reports it, or why it cannot be used
    (None, None: git says it is not in one)."""
    if not git_on_path():
        return None, "the notes folder is in a git repository but the git program is not on PATH"
    try:
        result = _git(root, "rev-parse", "--show-toplevel", "--show-prefix")
    except OSError as exc:
        return None, f"cannot run git: {exc}"
    if result.returncode != 0:
        said = result.stderr.decode(errors="replace").strip().splitlines()
        return None, f"git cannot read the repository: {said[0] if said else 'no reason given'}"
    toplevel, prefix = (result.stdout.decode().split("\n") + ["", ""])[:2]
    if not toplevel:
        return None, None  # inside a .git directory, or a bare repository: no work tree
    return GitRepo(toplevel, prefix), None


def _git(cwd: str, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in _LOCATING_VARIABLES}
    try:
        return subprocess.run(
            ["git", "-C", cwd, "-c", "log.showSignature=false", *args],
            input=stdin,
            capture_output=True,
            env=env,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"git {' '.join(args[:2])} took longer than {GIT_TIMEOUT_S} s") from None


def _failure(args: tuple[str, ...], result: subprocess.CompletedProcess[bytes]) -> str:
    said = result.stderr.decode(errors="replace").strip().splitlines()
    return f"git {' '.join(args[:2])} failed (exit {result.returncode}): {said[0] if said else 'no message'}"
