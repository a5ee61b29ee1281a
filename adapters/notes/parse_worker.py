"""Prepare notes in a second process while the index writer inserts the previous batch.

A large index run (a first build, a bulk edit) spends about half its time in
Python reading and chunking notes and half in SQLite inserting them, so on two
cores the two halves overlap: :class:`Preparers` hands a batch of paths to a
child process (``python -m adapters.notes.parse_worker``) and, while the child
prepares it, the writer stores the batch before. Requests and answers are
pickles over the child's stdin and stdout; the child exits when its stdin
closes, so it never outlives the adapter (a killed adapter closes the pipe).

If the child cannot start or dies mid-way, the batch is prepared in the
writer's own thread instead: nothing is lost, it is only slower. Small runs
never start a child at all.
"""

from __future__ import annotations

import os
import sys
from typing import IO, TYPE_CHECKING, Any

from adapters.notes.prepare import Prepared, prepare_file
from adapters.notes.settings import NotesSettings

if TYPE_CHECKING:
    import subprocess

# pickle and subprocess are imported only once a worker is wanted: a small run (every
# search's catch-up) never pays for them

# a run reading fewer files than this is prepared in the writer's thread (a child's start is ~0.1 s)
PARALLEL_AFTER = 2000
STOP_WAIT_S = 5.0

# one file to prepare: its path, and the content hash the index holds for it (None: none, or re-read it)
Request = tuple[str, str | None]


class Preparers:
    """Prepares batches of notes, in a worker process when ``parallel``, else inline."""

    def __init__(self, root: str, settings: NotesSettings, *, parallel: bool) -> None:
        self.root, self.settings = root, settings
        self.real_root = os.path.realpath(root)
        self.worker_error: str | None = None  # why the worker stopped helping, if it did
        self.prepared_apart = 0  # of the last batch collected, how many the worker prepared
        self._proc: subprocess.Popen[bytes] | None = None
        self._sent: list[Request] | None = None
        if parallel:
            self._spawn()

    def submit(self, requests: list[Request]) -> None:
        """Start preparing ``requests``; :meth:`collect` returns the outcomes in order."""
        self._sent = requests
        if self._proc is not None and requests:
            try:
                self._send(requests)
            except OSError as exc:
                self._lost(f"the parse worker stopped: {exc}")

    def collect(self) -> list[Prepared]:
        requests, self._sent = self._sent or [], None
        self.prepared_apart = 0
        if self._proc is not None and requests:
            import pickle

            try:
                answer: list[Prepared] = pickle.load(self._pipe(self._proc.stdout))
                if len(answer) == len(requests):
                    self.prepared_apart = len(answer)
                    return answer
                self._lost("the parse worker answered out of step")
            except (OSError, EOFError, pickle.UnpicklingError) as exc:
                self._lost(f"the parse worker stopped: {exc or 'it exited'}")
        return [self._prepare(request) for request in requests]

    def close(self) -> None:
        """End the worker (it exits when its stdin closes) and reap it; one still busy
        with a batch nobody will collect (the run was stopped) is killed."""
        if self._sent:
            self._kill()
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            self._pipe(proc.stdin).close()
        except OSError:
            pass
        import subprocess

        try:
            proc.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        self._pipe(proc.stdout).close()

    def __enter__(self) -> Preparers:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _prepare(self, request: Request) -> Prepared:
        rel, known_digest = request
        return prepare_file(self.root, self.real_root, rel, self.settings, known_digest)

    def _spawn(self) -> None:
        import subprocess

        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "adapters.notes.parse_worker"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True,
            )
        except OSError as exc:
            self.worker_error = f"the parse worker could not start: {exc}"
            return
        try:
            self._send((self.root, self.real_root, self.settings))
        except OSError as exc:
            self._lost(f"the parse worker stopped: {exc}")

    def _send(self, message: object) -> None:
        import pickle

        assert self._proc is not None
        stdin = self._pipe(self._proc.stdin)
        pickle.dump(message, stdin, protocol=pickle.HIGHEST_PROTOCOL)
        stdin.flush()

    def _lost(self, why: str) -> None:
        self.worker_error = why
        self._kill()

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
            proc.wait()
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    stream.close()

    @staticmethod
    def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
        assert stream is not None
        return stream


def serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """The worker's loop: a setup message, then batches of requests until end of input."""
    import pickle

    try:
        root, real_root, settings = pickle.load(requests)
    except EOFError:
        return
    while True:
        try:
            batch: list[Request] = pickle.load(requests)
        except EOFError:
            return
        answer: list[Any] = [prepare_file(root, real_root, rel, settings, known) for rel, known in batch]
        pickle.dump(answer, answers, protocol=pickle.HIGHEST_PROTOCOL)
        answers.flush()


def main() -> None:
    try:
        serve(sys.stdin.buffer, sys.stdout.buffer)
    except BrokenPipeError:  # the adapter went away mid-answer
        pass


if __name__ == "__main__":
    main()
