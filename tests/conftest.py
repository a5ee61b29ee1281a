"""Suite-wide settings.

Property tests explore random examples on a developer's machine; CI sets
``HYPOTHESIS_PROFILE=ci`` so a landing is judged on the same examples every time
(a new failing example found locally is kept in ``.hypothesis/`` and replayed).

Every ``recall`` a test starts runs in process: a resident broker started by one
test would outlive it. Tests of the resident broker turn it on for their own
commands and stop what they started. The runtime folder (sockets, launch plans)
is the suite's own, so the suite leaves nothing in the user's. Every process the
suite starts carries ``SESSION_MARKER`` in its environment: a resident broker still
running at the end is found by it, whatever folders its test gave it, and stopped.
"""

from __future__ import annotations

import os
import tempfile
import uuid

from hypothesis import settings

os.environ["RECALL_DAEMON"] = "0"
os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="recall-run-")
SESSION_MARKER = "PYTEST_RECALL_SESSION"  # not RECALL_*: it must not key a broker
os.environ[SESSION_MARKER] = uuid.uuid4().hex

# The meaning leg's model is prepared for int8 arithmetic once per user (about four
# seconds of CPU) into the user's model cache; every test home has a cache of its own,
# so the suite names one private folder for all of them, removed at the end.
os.environ["RECALL_MODEL_CACHE"] = tempfile.mkdtemp(prefix="recall-test-models-")

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def _resident_brokers_of(root: str | None) -> list[int]:
    """Resident brokers still running that this session started, or whose configuration
    lives under ``root``."""
    marker = f"{SESSION_MARKER}={os.environ[SESSION_MARKER]}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
            with open(f"/proc/{entry.name}/environ", "rb") as handle:
                environ = handle.read().split(b"\0")
        except OSError:
            continue
        if b"daemon" in argv and b"run" in argv and any(
            v == marker or (root is not None and v.startswith(b"XDG_CONFIG_HOME=" + root.encode()))
            for v in environ
        ):
            found.append(int(entry.name))
    return found


def pytest_sessionfinish(session, exitstatus) -> None:
    """A test whose commands started a resident broker (an environment built without
    RECALL_DAEMON=0) fails the run, and the broker is stopped rather than left behind."""
    import shutil
    import signal

    shutil.rmtree(os.environ["XDG_RUNTIME_DIR"], ignore_errors=True)
    shutil.rmtree(os.environ["RECALL_MODEL_CACHE"], ignore_errors=True)
    basetemp = session.config._tmp_path_factory.getbasetemp() if hasattr(session.config, "_tmp_path_factory") else None
    if not os.path.isdir("/proc"):
        return
    leftovers = _resident_brokers_of(None if basetemp is None else str(basetemp))
    for pid in leftovers:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    if leftovers:
        session.config.get_terminal_writer().line(
            f"resident brokers left running by tests (stopped now): {leftovers}", red=True
        )
        session.exitstatus = 1
