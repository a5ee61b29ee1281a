"""The page in a real browser: ``recall serve`` processes over real adapters, Debian's Chromium driven headless.

Profiles: ``default`` (the built-in notes adapter over a folder written here,
and two fixture task lists naming one task alike: a corroborated result) and
``wide`` (those plus ``broken``, a real adapter process that answers every
search with ``source_unavailable``, and ``sick``, one that reports itself
unavailable).

Screenshots go to ``$RECALL_PAGE_ARTIFACTS`` when set, else to a folder under
pytest's temporary directory; the path is printed in the test report header.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import recall_workspace
from tests.support.fixture_config import adapter_registration, settings_table, source_table
from tests.support.recall_workspace import RECALL, Served, serving, workspace_environ

__all__ = ["RECALL"]
CHROMIUM = os.environ.get("RECALL_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TOKEN = "page-test-token-5f1c"
BROWSER_WAIT_MS = 90_000  # generous: a loaded machine is slow, never wrong

RESTORE = """\
# Restore drill runbook

Restore the newest database snapshot to the scratch host, then compare checksums
before anyone trusts the backup.
"""
HOSTILE = """\
---
title: Pasted <script>window.__pwned = 1</script> snippet
---
# Pasted snippet

Someone pasted <script>window.__pwned = 2</script> and <img src=x onerror="window.__pwned = 3">
into the hostile restore notes.
"""
OLD_DECISION = """\
---
title: Borg for all backups
valid_from: 2022-09-01
---
# Borg for all backups

We back up every server with Borg, nightly, to the storage box.
"""
NEW_DECISION = """\
---
title: pgBackRest for database backups
valid_from: 2024-04-10
supersedes: old-decision
---
# pgBackRest for database backups

Databases move to pgBackRest with continuous WAL archiving; Borg stays for files.
"""
TASKS = [{"id": "t1", "title": "Run the quarterly restore drill", "body": "Owner rotates."}]
MIRROR = [{"id": "drill", "title": "Run the quarterly restore drill", "body": "Booked for the first Monday."}]


@dataclass
class Workspace(recall_workspace.Workspace):
    notes: Path

    def recall(self, *args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """As in any workspace, with the longer patience the browser tests' machine may need."""
        return super().recall(*args, stdin=stdin, timeout=timeout)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def write_workspace(root: Path) -> Workspace:
    notes = root / "notes"
    _write(notes / "runbooks" / "restore.md", RESTORE)
    _write(notes / "hostile.md", HOSTILE)
    _write(notes / "old-decision.md", OLD_DECISION)
    _write(notes / "new-decision.md", NEW_DECISION)
    (root / "tasks.json").write_text(json.dumps({"records": TASKS}))
    (root / "broken.json").write_text(json.dumps({"records": TASKS}))
    (root / "mirror.json").write_text(json.dumps({"records": MIRROR}))

    keys: dict[str, Any] = {"location_kind": "path", "sensitivity": "internal", "timeout_ms": 5000}
    lines = adapter_registration()
    lines += [*source_table("UIDPAGENOTES00001", "notes", "notes", notes, **keys, record_types=["document"]), ""]
    lines += [*source_table("UIDPAGETASKS00001", "tasks", "fixture", root / "tasks.json", **keys,
                            record_types=["task"]), *settings_table({"record_type": "task"}), ""]
    lines += [*source_table("UIDPAGEMIRROR0001", "mirror", "fixture", root / "mirror.json", **keys,
                            record_types=["task"]), *settings_table({"record_type": "task"}), ""]
    lines += [*source_table("UIDPAGEBROKEN0001", "broken", "fixture", root / "broken.json", **keys),
              *settings_table({"fail": "error"}), ""]
    lines += [*source_table("UIDPAGESICK000001", "sick", "fixture", root / "broken.json", **keys),
              *settings_table({"health": "unavailable"}), ""]
    lines += [
        "[defaults]",
        'profile = "default"',
        "",
        "[profiles.default]",
        'sources = ["notes", "tasks", "mirror"]',
        'max_sensitivity = "internal"',
        "",
        "[profiles.wide]",
        'sources = ["notes", "tasks", "mirror", "broken", "sick"]',
        'max_sensitivity = "internal"',
    ]
    config_dir = root / "config" / "recall"
    config_dir.mkdir(parents=True)
    (config_dir / "config.toml").write_text("\n".join(lines) + "\n")
    return Workspace(root, workspace_environ(root), notes)


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    ws = write_workspace(tmp_path_factory.mktemp("page"))
    refreshed = ws.recall("refresh", "--source", "notes", "--json")
    assert refreshed.returncode == 0, refreshed.stderr
    return ws


# Each server's URL ends in "/": a test appends a page's path to it.
@pytest.fixture(scope="session")
def server(workspace: Workspace) -> Iterator[Served]:
    yield from serving(workspace, path="/")


@pytest.fixture(scope="session")
def wide_server(workspace: Workspace) -> Iterator[Served]:
    yield from serving(workspace, "--profile", "wide", path="/")


@pytest.fixture(scope="session")
def token_server(workspace: Workspace) -> Iterator[Served]:
    yield from serving(workspace, "--auth-token-env", "RECALL_PAGE_TOKEN",
                       env={**workspace.env, "RECALL_PAGE_TOKEN": TOKEN}, path="/")


# ---------------------------------------------------------------------------
# The browser


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chosen = os.environ.get("RECALL_PAGE_ARTIFACTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("page-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# Playwright's synchronous API keeps an event loop running in this thread while it
# lives: module scope ends it before any asyncio test in another module starts.
@pytest.fixture(scope="module")
def playwright() -> Iterator[Any]:
    if not shutil.which(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing; scripts/test.sh installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as driver:
        yield driver


def launch(playwright: Any, profile_dir: Path, **options: Any) -> Any:
    """Chromium from the system with a fresh profile directory; Playwright never fetches a browser."""
    context = playwright.chromium.launch_persistent_context(
        str(profile_dir),
        executable_path=CHROMIUM,
        headless=True,
        args=CHROMIUM_FLAGS,
        viewport={"width": 1100, "height": 800},
        **options,
    )
    context.set_default_timeout(BROWSER_WAIT_MS)
    return context


@pytest.fixture(scope="module")
def browser_context(playwright: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    context = launch(playwright, tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield context
    finally:
        context.close()


@pytest.fixture(scope="module")
def scriptless_context(playwright: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A second Chromium with JavaScript switched off."""
    context = launch(playwright, tmp_path_factory.mktemp("chromium-noscript"), java_script_enabled=False)
    try:
        yield context
    finally:
        context.close()


@dataclass
class Tab:
    """A browser tab that records what the console and the page reported."""

    page: Any
    problems: list[str]
    artifacts: Path

    def shot(self, name: str) -> Path:
        path = self.artifacts / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


def open_tab(context: Any, artifacts: Path) -> Iterator[Tab]:
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    try:
        yield Tab(page, problems, artifacts)
    finally:
        page.close()


@pytest.fixture
def tab(browser_context: Any, artifacts: Path) -> Iterator[Tab]:
    yield from open_tab(browser_context, artifacts)


@pytest.fixture
def scriptless_tab(scriptless_context: Any, artifacts: Path) -> Iterator[Tab]:
    yield from open_tab(scriptless_context, artifacts)
