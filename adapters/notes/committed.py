"""The notes as committed: what ``as_of`` and a ``@<commit>`` locator are read from.

When the folder is the root of a git work tree (or the setting ``git_snapshots``
says to look for one above it), a search with ``as_of`` answers from the notes as
committed in the last commit at or before that instant on HEAD's history, each
commit indexed apart (``snapshot_indexes.py``), and a locator naming a commit is
read from that commit. The git modules are imported only for a folder in a work
tree.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from adapter_sdk import ErrorCode, RpcError, SearchOutcome, SearchParams, SearchResult
from adapters.notes.search import SearchContext, run_search

if TYPE_CHECKING:
    from adapter_sdk.folder.expand import LineRange, Section
    from adapters.notes.gitrepo import GitRepo
    from adapters.notes.settings import NotesSettings
    from adapters.notes.snapshot_indexes import Snapshots
    from adapters.notes.store import Store

WORK_TREE_KEY = "git_work_tree"


class CommittedNotes:
    """The git work tree holding the notes folder, and the indexes of its commits
    (built when a search first asks for one)."""

    def __init__(self, repo: GitRepo, workdir: str, root: str, settings: NotesSettings) -> None:
        self.repo = repo
        self.workdir = workdir
        self.root = root
        self.settings = settings
        self._snapshots: Snapshots | None = None

    def search(self, params: SearchParams, as_of: datetime, source_id: str) -> SearchResult:
        """Answer ``params`` from the notes as committed at ``as_of``."""
        from adapters.notes.gitrepo import GitError
        from adapters.notes.snapshot_indexes import snapshot_diagnostics

        try:
            commit = self.repo.commit_at(as_of if as_of.tzinfo else as_of.replace(tzinfo=UTC))
            snapshot = self._indexes().at(commit) if commit else None
        except GitError as exc:
            raise RpcError(ErrorCode.source_unavailable, f"cannot read the notes as committed: {exc}") from None
        if snapshot is None:
            return SearchResult(
                candidates=[], outcome=SearchOutcome.success, diagnostics={"as_of": "before_first_commit"}
            )
        store = snapshot.store
        failed = int(store.conn().execute("SELECT count(*) FROM failures").fetchone()[0])
        declined = int(store.conn().execute("SELECT count(*) FROM declined").fetchone()[0])
        context = SearchContext(
            source_id=source_id,
            observed_at=datetime.now(UTC),
            complete=failed == 0,
            generation=store.meta("generation"),
            read_note=snapshot.read_note,
            snapshot=snapshot.short,
            discount_quotations=self.settings.examples_quote_queries,
        )
        candidates, diagnostics = run_search(store.conn(), params, context)
        diagnostics.update(
            generation=store.meta("generation"),
            indexed_count=int(store.meta("note_count", "0")),
            chunk_count=int(store.meta("chunk_count", "0")),
            **snapshot_diagnostics(snapshot),
        )
        if failed:
            diagnostics["failed_count"] = failed
        if declined:
            diagnostics["declined_count"] = declined
        return SearchResult(
            candidates=candidates,
            outcome=SearchOutcome.partial if failed else SearchOutcome.success,
            diagnostics=diagnostics,
            source_watermark=store.meta("watermark") or None,
        )

    def section(self, locator: str, where: LineRange) -> Section:
        """The section a snapshot locator names, read from the notes as committed."""
        from adapter_sdk.folder.expand import Section
        from adapters.notes.evidence import section_heading
        from adapters.notes.gitrepo import GitError

        try:
            snapshot = self._indexes().named(str(where.commit))
        except GitError as exc:
            raise RpcError(ErrorCode.source_unavailable, f"{locator}: {exc}") from None
        if snapshot is None:
            raise RpcError(
                ErrorCode.locator_expired,
                f"{locator}: commit {where.commit} is no longer in the repository; search again",
            )
        conn = snapshot.store.conn()
        note = conn.execute("SELECT id FROM notes WHERE path = ?", (where.path,)).fetchone()
        data = snapshot.read_note(where.path)
        if note is None or data is None:
            raise RpcError(
                ErrorCode.locator_expired,
                f"{locator}: {where.path} was not an indexed note in commit {where.commit}",
            )
        title, heading = section_heading(conn, note[0], where, locator)
        return Section(title=title, heading=heading, data=data, revision=f"git:{where.commit}")

    def index_count(self) -> int | None:
        """How many commits are indexed, or None before a search first asked for one."""
        return self._snapshots.count() if self._snapshots is not None else None

    def _indexes(self) -> Snapshots:
        if self._snapshots is None:
            from adapters.notes.snapshot_indexes import Snapshots

            self._snapshots = Snapshots(self.repo, self.workdir, self.root, self.settings)
        return self._snapshots


def committed_notes(
    root: str, workdir: str, settings: NotesSettings, store: Store
) -> tuple[CommittedNotes | None, str | None]:
    """The notes as committed, when the folder is in a work tree whose history answers
    ``as_of``; else None, and why not when git cannot be asked (None when there is
    simply no work tree)."""
    marker = _git_marker(root, settings.git_snapshots)
    if marker is None:
        return None, None
    repo, reason = _work_tree(root, marker, store)
    if repo is None:
        return None, reason
    return CommittedNotes(repo, workdir, os.path.realpath(root), settings), None


def _work_tree(root: str, marker: str, store: Store) -> tuple[GitRepo | None, str | None]:
    """The git work tree holding the folder, as git reported it when ``marker`` (the
    ``.git`` entry found above the folder) was last seen; git is asked only when the
    marker changed, which keeps a subprocess off every handshake."""
    from adapters.notes.gitrepo import GitRepo, find_repo, git_on_path

    if not git_on_path():
        return None, "the notes folder is in a git repository but the git program is not on PATH"
    cached = json.loads(store.meta(WORK_TREE_KEY) or "{}")
    if cached.get("marker") == marker:
        return GitRepo(cached["toplevel"], cached["prefix"]), None
    repo, reason = find_repo(root)
    if repo is not None:
        store.set_meta(
            WORK_TREE_KEY, json.dumps({"marker": marker, "toplevel": repo.toplevel, "prefix": repo.prefix})
        )
    return repo, reason


def _git_marker(root: str, opted: bool | None) -> str | None:
    """The ``.git`` entry whose history answers ``as_of``: the one in ``root`` itself (the
    folder is a work tree's root), or with ``git_snapshots = true`` the nearest above it;
    none with ``git_snapshots = false``. git itself then decides."""
    if opted is False:
        return None
    current = os.path.realpath(root)
    while True:
        marker = os.path.join(current, ".git")
        if os.path.exists(marker):
            return marker
        parent = os.path.dirname(current)
        if parent == current or not opted:
            return None
        current = parent
