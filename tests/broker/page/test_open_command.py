"""``recall open``: a foreground server on loopback, and the desktop's browser sent to its page."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.broker.page.conftest import RECALL, Workspace

OPENER = """\
import sys
from pathlib import Path
Path({out!r}).write_text(sys.argv[1])
"""


def test_open_serves_the_page_on_loopback_and_hands_its_address_to_the_browser(workspace: Workspace, tmp_path):
    opened = tmp_path / "opened-url"
    browser = tmp_path / "browser"
    browser.write_text(f"#!{sys.executable}\n" + OPENER.format(out=str(opened)))
    browser.chmod(0o755)
    process = subprocess.Popen(
        [RECALL, "open"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**workspace.env, "BROWSER": str(browser)}, cwd=workspace.root,
    )
    try:
        deadline = time.monotonic() + 60
        while not opened.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert opened.exists(), process.stderr.read() if process.poll() is not None and process.stderr else ""
        url = opened.read_text()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/")
        page = httpx.get(url + "?q=restore+drill", timeout=60)
        assert page.status_code == 200
        assert 'role="search"' in page.text and 'class="result-list"' in page.text
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
    assert process.returncode == 130  # stopped by the signal, adapters with it


def test_open_refuses_to_listen_beyond_loopback(workspace: Workspace):
    done = subprocess.run([RECALL, "open", "--addr", "0.0.0.0:0", "--no-browser"], capture_output=True,
                          text=True, env=workspace.env, timeout=60)
    assert done.returncode == 1
    assert "loopback only" in done.stderr


def test_open_without_a_browser_prints_the_address_and_serves(workspace: Workspace, tmp_path: Path):
    process = subprocess.Popen(
        [RECALL, "open", "--no-browser"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**workspace.env, "BROWSER": str(tmp_path / "must-not-run")}, cwd=workspace.root,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().rsplit(" at ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:")
        assert httpx.get(url + "/", timeout=60).status_code == 200
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)


def test_open_ends_with_the_signals_status_when_it_was_started_ignoring_sigint(workspace: Workspace, tmp_path: Path):
    """A command started in the background inherits an ignored SIGINT; the server still stops on it
    and says so in its status, not 0."""
    process = subprocess.Popen(
        [RECALL, "open", "--no-browser"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**workspace.env, "BROWSER": str(tmp_path / "must-not-run")}, cwd=workspace.root,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().rsplit(" at ", 1)[1].strip()
        assert httpx.get(url + "/", timeout=60).status_code == 200
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
    assert process.returncode == 130
