"""The OAuth token file: load it, refresh it with google-auth, rewrite it safely.

The file is an authorized-user token as Google's own tools write it
(``client_id``, ``client_secret``, ``refresh_token``, ``token``, ``expiry``,
optionally ``token_uri`` and ``scopes``). A refreshed token is written back
atomically with mode 0600, keeping every other field as it was. Token
requests go through httpx, the same HTTP stack as the mailbox requests.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import google.auth.exceptions
import google.auth.transport
import httpx
from google.oauth2.credentials import Credentials

from adapters.gmail.errors import AuthorizationError, ServiceUnavailable
from adapters.gmail.settings import READONLY_SCOPE

GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
_REQUIRED_FIELDS = ("client_id", "client_secret", "refresh_token")


class _HttpxResponse(google.auth.transport.Response):
    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    @property
    def status(self) -> int:
        return self._response.status_code

    @property
    def headers(self) -> Mapping[str, str]:
        return self._response.headers

    @property
    def data(self) -> bytes:
        return self._response.content


class HttpxTokenRequest(google.auth.transport.Request):
    """google-auth's transport interface, answered by httpx."""

    def __init__(self, timeout: float) -> None:
        self._timeout = timeout

    def __call__(
        self, url: str, method: str = "GET", body: Any = None,
        headers: Mapping[str, str] | None = None, timeout: float | None = None, **kwargs: Any,
    ) -> _HttpxResponse:
        try:
            with httpx.Client(timeout=timeout or self._timeout) as client:
                response = client.request(method, url, content=body, headers=dict(headers or {}))
        except httpx.HTTPError as exc:
            raise google.auth.exceptions.TransportError(
                f"token endpoint unreachable ({type(exc).__name__})"
            ) from None
        return _HttpxResponse(response)


class TokenStore:
    """Hands out a valid access token, refreshing (and persisting) it when needed."""

    def __init__(self, path: Path, token_uri: str | None, timeout: float) -> None:
        self.path = path
        self._token_uri = token_uri
        self._timeout = timeout
        self._lock = threading.Lock()
        self._credentials: Credentials | None = None
        self._stored: dict[str, Any] = {}
        self.refreshes = 0

    def access_token(self, rejected: str | None = None) -> str:
        """A token to send; ``rejected`` is one the API just refused (forces a refresh)."""
        with self._lock:
            credentials = self._credentials or self._load()
            stale = rejected is not None and credentials.token == rejected
            if stale or not credentials.valid:
                self._refresh(credentials)
            assert credentials.token is not None
            return str(credentials.token)

    def _load(self) -> Credentials:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise AuthorizationError(f"no Gmail token file at {self.path}") from None
        except OSError as exc:
            raise AuthorizationError(
                f"cannot read the Gmail token file {self.path}: {exc.strerror}"
            ) from None
        try:
            stored = json.loads(text)
        except ValueError:
            raise AuthorizationError(f"Gmail token file {self.path} is not JSON") from None
        if not isinstance(stored, dict):
            raise AuthorizationError(f"Gmail token file {self.path} is not a JSON object")
        missing = [key for key in _REQUIRED_FIELDS if not stored.get(key)]
        if missing:
            raise AuthorizationError(
                f"Gmail token file {self.path} lacks {', '.join(missing)}"
            )
        # google-auth's loader pins Google's endpoint; read the fields, then build it here
        try:
            template = Credentials.from_authorized_user_info(stored, scopes=[READONLY_SCOPE])
        except ValueError:
            raise AuthorizationError(
                f"Gmail token file {self.path} has an unreadable expiry"
            ) from None
        self._credentials = Credentials(
            token=stored.get("token") or None,
            refresh_token=stored["refresh_token"],
            token_uri=self._token_uri or stored.get("token_uri") or GOOGLE_TOKEN_URI,
            client_id=stored["client_id"],
            client_secret=stored["client_secret"],
            scopes=[READONLY_SCOPE],
            expiry=template.expiry,
        )
        self._stored = stored
        return self._credentials

    def _refresh(self, credentials: Credentials) -> None:
        try:
            credentials.refresh(HttpxTokenRequest(self._timeout))
        except google.auth.exceptions.RefreshError as exc:
            if getattr(exc, "retryable", False):
                raise ServiceUnavailable(
                    "the OAuth token endpoint failed; try again later"
                ) from None
            raise AuthorizationError(f"Google refused the stored Gmail token ({_oauth_error(exc)})"
                                     ) from None
        except google.auth.exceptions.TransportError as exc:
            raise ServiceUnavailable(f"cannot refresh the Gmail token: {exc}") from None
        self.refreshes += 1
        self._persist(credentials)

    def _persist(self, credentials: Credentials) -> None:
        updated = dict(self._stored)
        updated["token"] = credentials.token
        if credentials.expiry is not None:
            updated["expiry"] = credentials.expiry.isoformat() + "Z"
        if credentials.refresh_token:
            updated["refresh_token"] = credentials.refresh_token
        write_private_json(self.path, updated)
        self._stored = updated


def write_private_json(path: Path, document: dict[str, Any]) -> None:
    """Replace ``path`` atomically with ``document``, readable by its owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _oauth_error(exc: Exception) -> str:
    """The OAuth error code only (e.g. invalid_grant): descriptions may echo request data."""
    details = exc.args[1] if len(exc.args) > 1 else None
    if isinstance(details, dict) and isinstance(details.get("error"), str):
        return details["error"]
    return "refresh refused"
