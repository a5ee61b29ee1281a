"""The OAuth token file: load it, refresh it with google-auth, rewrite it safely.

The file is an authorized-user token as Google's own tools write it
(``client_id``, ``client_secret``, ``refresh_token``, ``token``, ``expiry``,
optionally ``token_uri`` and ``scopes``). A token that is still valid is used
as it is; google-auth (and its transport, answered here by httpx) loads only
when a refresh is due. A refreshed token is written back atomically with
mode 0600, keeping every other field as it was.

The file is the user's word on access, so it is looked at (one ``stat``)
before every token is handed out: a file replaced or rewritten (another size,
mtime or inode) is read again, and a file removed stops every request at once
with an authorization error, whatever the process held in memory.
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


FileSignature = tuple[int, int, int]
"""What tells one version of the token file from another: size, mtime_ns, inode."""


@dataclass(frozen=True, slots=True)
class StoredToken:
    fields: dict[str, Any]
    access_token: str | None
    expiry: datetime | None  # UTC
    signature: FileSignature

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

    def ready_token(self, rejected: str | None = None) -> str | None:
        """The held token when the file is unchanged and it needs no refresh, else ``None``
        (then :meth:`access_token` reads, refreshes or refuses). Raises when the file is gone."""
        stored = self._stored
        if stored is None or stored.signature != self._signature():
            return None
        if stored.access_token == rejected or not stored.usable(datetime.now(UTC)):
            return None
        return stored.access_token

    def access_token(self, rejected: str | None = None) -> str:
        """A token to send; ``rejected`` is one the API just refused (forces a refresh)."""
        with self._lock:
            stored = self._stored
            if stored is None or stored.signature != self._signature():
                stored = self._load()
            stale = rejected is not None and stored.access_token == rejected
            if stale or not stored.usable(datetime.now(UTC)):
                stored = self._refresh(stored)
            assert stored.access_token is not None
            return stored.access_token

    def _signature(self) -> FileSignature:
        """The file's current signature; a missing or unreadable file forgets the token."""
        try:
            found = os.stat(self.path)
        except OSError as exc:
            self._stored = None
            raise _unreadable(self.path, exc) from None
        return (found.st_size, found.st_mtime_ns, found.st_ino)

    def _load(self) -> StoredToken:
        self._stored = None
        try:
            with open(self.path, encoding="utf-8") as handle:
                found = os.fstat(handle.fileno())
                text = handle.read()
        except OSError as exc:
            raise _unreadable(self.path, exc) from None
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
                                   _expiry(fields.get("expiry")),
                                   (found.st_size, found.st_mtime_ns, found.st_ino))
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
        """Write the refreshed token back, unless the file changed or went meanwhile:
        then the file as it is now wins (a removal refuses, a new file is used)."""
        if self._signature() != stored.signature:
            current = self._load()
            return current if current.usable(datetime.now(UTC)) else self._refresh(current)
        updated = dict(stored.fields)
        updated["token"] = credentials.token
        if credentials.expiry is not None:  # naive UTC, as google-auth writes it
            updated["expiry"] = credentials.expiry.isoformat() + "Z"
        if credentials.refresh_token:
            updated["refresh_token"] = credentials.refresh_token
        written = write_private_json(self.path, updated)
        self._stored = StoredToken(updated, credentials.token, _expiry(updated.get("expiry")),
                                   written)
        return self._stored


def _unreadable(path: Path, exc: OSError) -> AuthorizationError:
    if isinstance(exc, FileNotFoundError):
        return AuthorizationError(f"no Gmail token file at {path}")
    return AuthorizationError(f"cannot read the Gmail token file {path}: {exc.strerror}")


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


def write_private_json(path: Path, document: dict[str, Any]) -> FileSignature:
    """Replace ``path`` atomically with ``document``, readable by its owner only; the
    signature of the file written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
            written = os.fstat(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return (written.st_size, written.st_mtime_ns, written.st_ino)


def _oauth_error(exc: Exception) -> str:
    """The OAuth error code only (e.g. invalid_grant): descriptions may echo request data."""
    details = exc.args[1] if len(exc.args) > 1 else None
    if isinstance(details, dict) and isinstance(details.get("error"), str):
        return details["error"]
    return "refresh refused"
