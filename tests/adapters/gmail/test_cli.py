from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit
from urllib.request import urlopen

from .adapter_process import REPO
from .fake_gmail import CLIENT_ID, CLIENT_SECRET, REFRESH_TOKEN, SCOPE, FakeGmail


def _client_secrets(path: Path, token_uri: str) -> Path:
    path.write_text(json.dumps({"installed": {
        "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
        "auth_uri": "https://accounts.example.test/o/oauth2/auth", "token_uri": token_uri,
        "redirect_uris": ["http://localhost"],
    }}))
    return path


def test_auth_runs_the_consent_flow_and_writes_an_owner_only_token(
    fake_gmail: FakeGmail, tmp_path: Path
) -> None:
    secrets = _client_secrets(tmp_path / "client.json", fake_gmail.token_uri)
    token = tmp_path / "config" / "gmail-token.json"
    # the fake token endpoint is plain http on loopback, which oauthlib refuses by default
    env = {**os.environ, "OAUTHLIB_INSECURE_TRANSPORT": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "adapters.gmail", "auth", "--client-secrets", str(secrets),
         "--token", str(token), "--no-browser"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, env=env, text=True,
    )
    try:
        assert process.stdout is not None
        prompt = process.stdout.readline()
        consent_url = prompt[prompt.index("https://"):].strip()
        consent = parse_qs(urlsplit(consent_url).query)
        assert consent["scope"] == [SCOPE]
        redirect = consent["redirect_uri"][0]
        with urlopen(f"{redirect}?{urlencode({'code': 'consent-code', 'state': consent['state'][0]})}",
                     timeout=10) as answer:
            assert answer.status == 200
        assert process.wait(timeout=20) == 0, process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    stored = json.loads(token.read_text())
    assert stored["refresh_token"] == REFRESH_TOKEN
    assert stored["token"] == fake_gmail.issued_tokens()[0]
    assert stored["scopes"] == [SCOPE]
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    assert fake_gmail.token_requests[0]["grant_type"] == ["authorization_code"]


def test_auth_without_a_client_secrets_file_explains_what_to_download(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "adapters.gmail", "auth", "--client-secrets",
         str(tmp_path / "missing.json"), "--token", str(tmp_path / "token.json")],
        capture_output=True, text=True, cwd=REPO, timeout=30,
    )
    assert completed.returncode == 2
    assert "missing.json" in completed.stderr and "Desktop-app" in completed.stderr
    assert not (tmp_path / "token.json").exists()


def test_starting_the_adapter_loads_no_http_or_oauth_library(tmp_path: Path) -> None:
    script = f"""
import sys
from adapter_sdk.protocol import InitializeParams
from adapters.gmail.adapter import GmailAdapter
for location in (None, {str(tmp_path / 'x.mbox')!r}):
    GmailAdapter().initialize(InitializeParams(protocol_version_min=1, protocol_version_max=1,
        workdir={str(tmp_path)!r}, source_id="mail", location=location))
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("httpx", "google", "sqlite3"))
print(loaded)
"""
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                               cwd=REPO, timeout=30, check=True)
    assert completed.stdout.strip() == "[]"
