"""The OAuth token file: load it, refresh it with google-auth, rewrite it safely.

The file is an authorized-user token as Google's own tools write it
(``client_id``, ``client_secret``, ``refresh_token``, ``token``, ``expiry``,
optionally ``token_uri`` and ``scopes``). A token that is still valid is used
as it is; google-auth (and its transport, answered here by httpx) loads only
when a refresh is due. A refreshed token is written back atomically with
mode 0600, keeping every other field as it was.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adapters.gmail.errors import AuthorizationError, ServiceUnavailable
from adapters.gmail.settings import READONLY_SCOPE

if TYPE_CHECKING:
    import httpx
    from google.oauth2.credentials import Credentials

GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
REFRESH_MARGIN = timedelta(minutes=4)  # google-auth refreshes this long before expiry too
_REQUIRED_FIELDS = ("client_id", "client_secret", "refresh_token")


@dataclass(frozen=True, slots=True)
class StoredToken:
    fields: dict[str, Any]
    access_token: str | None
    expiry: datetime | None  # UTC

    def usable(self, now: datetime) -> bool:
        return bool(self.access_token) and self.expiry is not None and (
            now < self.expiry - REFRESH_MARGIN)


class TokenStore:
    """Hands out a valid access token, refreshing (and persisting) it when needed."""

    def __init__(self, path: Path, token_uri: str | None, timeout: float) -> None:
        self.path = path
        self._token_uri = token_uri
        self._timeout = timeout
        self._lock = threading.Lock()
        self._stored: StoredToken | None = None

    def access_token(self, rejected: str | None = None) -> str:
        """A token to send; ``rejected`` is one the API just refused (forces a refresh)."""
        with self._lock:
            stored = self._stored or self._load()
            stale = rejected is not None and stored.access_token == rejected
            if stale or not stored.usable(datetime.now(UTC)):
                stored = self._refresh(stored)
            assert stored.access_token is not None
            return stored.access_token

    def _load(self) -> StoredToken:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise AuthorizationError(f"no Gmail token file at {self.path}") from None
        except OSError as exc:
            raise AuthorizationError(
                f"cannot read the Gmail token file {self.path}: {exc.strerror}"
            ) from None
        try:
            fields = json.loads(text)
        except ValueError:
            raise AuthorizationError(f"Gmail token file {self.path} is not JSON") from None
        if not isinstance(fields, dict):
            raise AuthorizationError(f"Gmail token file {self.path} is not a JSON object")
        missing = [key for key in _REQUIRED_FIELDS if not fields.get(key)]
        if missing:
            raise AuthorizationError(f"Gmail token file {self.path} lacks {', '.join(missing)}")
        self._stored = StoredToken(fields, fields.get("token") or None,
                                   _expiry(fields.get("expiry")))
        return self._stored

    def _refresh(self, stored: StoredToken) -> StoredToken:
        import google.auth.exceptions
        from google.oauth2.credentials import Credentials

        fields = stored.fields
        credentials = Credentials(
            token=None,
            refresh_token=fields["refresh_token"],
            token_uri=self._token_uri or fields.get("token_uri") or GOOGLE_TOKEN_URI,
            client_id=fields["client_id"],
            client_secret=fields["client_secret"],
            scopes=[READONLY_SCOPE],
        )
        try:
            credentials.refresh(_token_request(self._timeout))
        except google.auth.exceptions.RefreshError as exc:
            if getattr(exc, "retryable", False):
                raise ServiceUnavailable(
                    "the OAuth token endpoint failed; try again later"
                ) from None
            raise AuthorizationError(
                f"Google refused the stored Gmail token ({_oauth_error(exc)})"
            ) from None
        except google.auth.exceptions.TransportError as exc:
            raise ServiceUnavailable(f"cannot refresh the Gmail token: {exc}") from None
        return self._persist(stored, credentials)

    def _persist(self, stored: StoredToken, credentials: Credentials) -> StoredToken:
        updated = dict(stored.fields)
        updated["token"] = credentials.token
        if credentials.expiry is not None:  # naive UTC, as google-auth writes it
            updated["expiry"] = credentials.expiry.isoformat() + "Z"
        if credentials.refresh_token:
            updated["refresh_token"] = credentials.refresh_token
        write_private_json(self.path, updated)
        self._stored = StoredToken(updated, credentials.token, _expiry(updated.get("expiry")))
        return self._stored


def _expiry(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.rstrip("Z"))
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _token_request(timeout: float) -> Any:
    """google-auth's transport interface (``Request``), answered by httpx."""
    import google.auth.exceptions
    import google.auth.transport
    import httpx

    class HttpxResponse(google.auth.transport.Response):
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

    class HttpxRequest(google.auth.transport.Request):
        def __call__(
            self, url: str, method: str = "GET", body: Any = None,
            headers: Mapping[str, str] | None = None, timeout: float | None = None,
            **kwargs: Any,
        ) -> HttpxResponse:
            try:
                with httpx.Client(timeout=timeout or default_timeout) as client:
                    response = client.request(method, url, content=body,
                                              headers=dict(headers or {}))
            except httpx.HTTPError as exc:
                raise google.auth.exceptions.TransportError(
                    f"token endpoint unreachable ({type(exc).__name__})"
                ) from None
            return HttpxResponse(response)

    default_timeout = timeout
    return HttpxRequest()


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
