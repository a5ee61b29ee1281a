"""When a search is ranked by the tantivy ranker, and keeping it level with the index.

The ranker (``ranker.py``) ranks a folder only while it holds exactly what the
SQLite index does. This decides, per search, whether it may (applying a pending
change first where that is quicker than FTS5), and after index work brings it up
to date, or deletes it when the folder is ranked by FTS5 at its size now.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from adapters.notes.catchup import Catchup
from adapters.notes.ranker import APPLY_BEFORE_SEARCH, PENDING_CHANGES, Ranker
from adapters.notes.ranker import wanted as ranker_wanted
from adapters.notes.store import Store, row_counts

# how long a short-lived adapter's search waits for the ranker to apply a change, and
# from how many chunks it does (below, FTS5 ranks in less time than applying takes)
RANKER_WAIT_S = 0.2
APPLY_IN_SEARCH_FROM = 200_000


class RankerUpkeep:
    def __init__(self, ranker: Ranker, store: Store, catchup: Catchup, setting: str) -> None:
        self.ranker = ranker
        self.store = store
        self.catchup = catchup
        self.setting = setting  # the ``ranker`` setting: auto, tantivy or fts5

    def for_search(self) -> tuple[Ranker | None, str | None]:
        """The ranker, if this search may rank with it (it holds exactly what the index
        does), else None and why not (None when the folder is ranked by FTS5 anyway)."""
        ranker = self.ranker
        conn = self.store.conn()
        chunks = row_counts(conn)[1]
        if not ranker_wanted(self.setting, chunks, ranker.exists()):
            return None, None
        why = ranker.current(conn)
        # a short-lived process applies a change here where that is quicker than FTS5, or
        # always when the settings ask for the ranker; a warm one's ranker thread does at once
        quicker = chunks >= APPLY_IN_SEARCH_FROM or self.setting == "tantivy"
        idle = self.catchup.progress().idle
        if why == PENDING_CHANGES and quicker and not ranker.may_build and idle:
            ranker.apply_now(conn, APPLY_BEFORE_SEARCH, wait=RANKER_WAIT_S)
            why = ranker.current(conn)
        if why is not None:
            if ranker.may_build and idle:  # else the catch-up's end nudges it
                ranker.nudge()
            return None, why
        return ranker, None

    def wanted(self) -> bool:
        """Whether the folder, at its size now, is ranked by the ranker rather than FTS5."""
        chunks = row_counts(self.store.conn())[1]
        return ranker_wanted(self.setting, chunks, self.ranker.exists())

    def after_index_work(self) -> None:
        """Bring the ranker up to date, or delete it when the folder is ranked by FTS5."""
        ranker = self.ranker
        if not self.store.meta("build_complete") or not self.catchup.progress().idle:
            return  # the index is still changing: the ranker is brought up to date once it rests
        if not self.wanted():
            ranker.forget()
        elif ranker.may_build:
            ranker.nudge()
        elif not ranker.exists():  # with no ranker yet, its first build will read every chunk
            # not ``forget``: a refresh may be building the ranker on its thread meanwhile
            ranker.forget_journal()
        # else a short-lived process leaves the change to its search or to index work

    def refresh(self, seconds_left: Callable[[], float]) -> int | None:
        """Bring the ranker up to date (refresh is index work: a first build of it too),
        waiting at most ``seconds_left()``; how long that took in ms, or None when the
        folder is ranked by FTS5."""
        ranker = self.ranker
        started = time.monotonic()
        ranker.may_build = True
        chunks = row_counts(self.store.conn())[1]
        self.after_index_work()
        if not ranker_wanted(self.setting, chunks, ranker.exists()):
            return None
        ranker.wait_idle(seconds_left())
        if not ranker.wait_unleased(0):  # another process is writing it (building it, say)
            if ranker.wait_unleased(seconds_left()):
                ranker.nudge()  # what it left undone is done here
                ranker.wait_idle(seconds_left())
        return round((time.monotonic() - started) * 1000)
